// The dashboard against `npm run mock` (prism with dynamic examples on the bundled spec/v1): the
// built dashboard is served beside a proxy that hands every API path to the mock, so the pages
// are developed against the contract alone. The main pages must render the mock's documents
// (which the spec allows, whatever their values) as data: never a crash, never a blank page.
// Covered: the session, the organization switcher and the runs page.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, request, type Server } from "node:http";
import { extname, join, normalize } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Browser } from "playwright-core";
import { REPO_ROOT } from "../../../server/src/config.ts";
// @ts-expect-error: a plain ES module without type declarations (web/build.mjs)
import * as build from "../../build.mjs";
import { launchChromium } from "../support/browser.ts";
import { hook } from "../support/harness.ts";
import { freePort } from "../../../server/test/support/ports.ts";

/** web/build.mjs's builder, as it is written there: builds into `out` and returns the bundle's file name. */
const { buildDashboard } = build as { buildDashboard: (out?: string) => Promise<string> };

const test = suite("dashboard against the mock");

const TYPES: Record<string, string> = {
  ".js": "text/javascript",
  ".css": "text/css",
  ".html": "text/html",
  ".map": "application/json",
};
let mock: ChildProcess | null = null;
let site: Server | null = null;
let browser: Browser | null = null;
let base = "";
const errors: string[] = [];

test.before(
  hook(async () => {
    const dist = mkdtempSync(join(tmpdir(), "stackship-mock-dashboard-"));
    await buildDashboard(dist);
    const mockPort = await freePort();
    // A fixed seed: the same documents every run (the test must not depend on what faker drew).
    mock = spawn(process.execPath, ["scripts/mock.mjs", "--seed", "stackship"], {
      cwd: REPO_ROOT,
      env: { ...process.env, STACKSHIP_MOCK_PORT: String(mockPort) },
      stdio: "ignore",
      detached: true,
    });
    site = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path.startsWith("/v1/") || path === "/healthz") {
        const upstream = request(
          { host: "127.0.0.1", port: mockPort, path: req.url, method: req.method, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        upstream.on("error", () => res.writeHead(502).end());
        req.pipe(upstream);
        return;
      }
      const file = path.startsWith("/assets/") ? normalize(join(dist, path)) : join(dist, "index.html");
      if (!file.startsWith(dist)) return void res.writeHead(404).end();
      try {
        res
          .writeHead(200, { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream" })
          .end(readFileSync(file));
      } catch {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => site!.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        // prism is not listening yet.
      }
      if (Date.now() > deadline) throw new Error("prism mock did not answer within 60 s");
      await new Promise((r) => setTimeout(r, 250));
    }
    browser = await launchChromium();
  }),
);

test.after(async () => {
  await browser?.close();
  site?.close();
  // The whole process group: scripts/mock.mjs and prism.
  if (mock?.pid) process.kill(-mock.pid, "SIGTERM");
});

async function open(path: string) {
  // prism checks that a request carries the credentials its operation declares: any session cookie.
  const context = await browser!.newContext();
  await context.addCookies([{ name: "stackship_session", value: "mock", url: base }]);
  const page = await context.newPage();
  page.on("pageerror", (error) => errors.push(`${path}: ${error.message}`));
  await page.goto(`${base}${path}`);
  return page;
}

test("the runs page renders the mock's runs inventory", async () => {
  const page = await open("/runs");
  // The mock's session is signed in; its inventory is a page of runs (or, with the mock's random
  // values, an explicit contract error): either way the page says what it has, never nothing.
  await page.getByRole("heading", { level: 1, name: "Runs" }).waitFor({ timeout: 30_000 });
  await page.locator("tr[data-run-id]").first().waitFor({ timeout: 30_000 });
  assert.ok((await page.locator("tr[data-run-id]").count()) >= 1, "the mock's runs are listed");
  assert.equal(errors, []);
  await page.close();
});

test("the run page answers the mock's review of some other run with an explicit unavailable state", async () => {
  // The mock draws the review's id at random, so it never names the run asked for: the page must
  // say the answer is broken rather than show another run's evidence or load forever.
  const page = await open("/runs/run-0123456789abcdef");
  const box = page.getByTestId("run-unavailable");
  await box.waitFor({ timeout: 30_000 });
  assert.match(await box.innerText(), /This run is unavailable/);
  assert.match(await box.innerText(), /not run-0123456789abcdef/);
  assert.equal(errors, []);
  await page.close();
});

test.run();
