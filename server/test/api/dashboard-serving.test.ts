// The built dashboard served at `/`: hashed assets immutable, index.html no-cache, the SPA
// fallback answering exactly the dashboard's routes, and never shadowing the API or protocol
// paths (they keep their JSON:API 404s).
import { mkdtemp, mkdir, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { withTestServer } from "../support/test-server.ts";

const test = suite("dashboard assets");

const INDEX = "<!doctype html><title>StackShip</title><ss-app></ss-app>\n";
const BUNDLE = "console.log('dashboard');\n";

async function withDist(fn: (dir: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), "ss-dist-"));
  try {
    await mkdir(join(dir, "assets"));
    await writeFile(join(dir, "index.html"), INDEX);
    await writeFile(join(dir, "assets", "app-ABCD2345.js"), BUNDLE);
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("hashed assets are immutable, pages are index.html with no-cache, API paths keep their 404s", () =>
  withDist((dir) =>
    withTestServer(
      "sqlite",
      async (server) => {
        const asset = await fetch(`${server.baseUrl}/assets/app-ABCD2345.js`);
        assert.is(asset.status, 200);
        assert.is(asset.headers.get("cache-control"), "public, max-age=31536000, immutable");
        assert.match(asset.headers.get("content-type") ?? "", /^text\/javascript/);
        assert.is(await asset.text(), BUNDLE);
        const head = await fetch(`${server.baseUrl}/assets/app-ABCD2345.js`, { method: "HEAD" });
        assert.is(head.status, 200);
        assert.is(head.headers.get("content-length"), String(BUNDLE.length));

        for (const path of [
          "/",
          "/sign-in",
          "/setup?token=sst.x",
          "/tokens",
          "/members",
          "/audit",
          "/workspaces",
          "/policy-sets",
          "/organizations",
          "/runs",
          "/runs/run-0123456789abcdef",
          "/workspaces/ws-0123456789abcdef",
          "/workspaces/ws-0123456789abcdef/state",
          "/workspaces/ws-0123456789abcdef/cloud-access",
          "/workspaces/ws-0123456789abcdef/source",
          "/workspaces/ws-0123456789abcdef/variables",
          "/github/setup?installation_id=1&setup_action=install&state=s",
          "/runs?status=awaiting_approval",
        ]) {
          const page = await fetch(`${server.baseUrl}${path}`);
          assert.is(page.status, 200, path);
          assert.is(page.headers.get("cache-control"), "no-cache", path);
          assert.match(page.headers.get("content-type") ?? "", /^text\/html/, path);
          assert.is(await page.text(), INDEX, path);
        }

        // A missing or unhashed asset, an unknown page, and every API or protocol prefix: JSON:API 404s.
        for (const path of [
          "/assets/app-ZZZZ2345.js",
          "/assets/app.js",
          "/nothing",
          "/runs/a/b",
          "/workspaces/ws-1/other",
          "/v1/nothing",
          "/api/v2/nothing",
          "/.well-known/nothing",
          "/live/runs/run-0123456789abcdef",
          "/v1/runs",
        ]) {
          const response = await fetch(`${server.baseUrl}${path}`);
          assert.is(response.status, 404, path);
          assert.match(response.headers.get("content-type") ?? "", /json/, path);
        }
        // The API itself still answers.
        assert.is((await fetch(`${server.baseUrl}/healthz`)).status, 200);
        // Changes to dashboard routes are not answered by the dashboard.
        assert.is((await fetch(`${server.baseUrl}/runs`, { method: "POST" })).status, 404);
      },
      { config: { dashboardDir: dir } },
    ),
  ));

test("a dashboard that was never built says so instead of serving an empty page", () =>
  withTestServer(
    "sqlite",
    async (server) => {
      const page = await fetch(`${server.baseUrl}/runs`);
      assert.is(page.status, 503);
      assert.match(await page.text(), /not built yet/);
    },
    { config: { dashboardDir: join(tmpdir(), "ss-no-dashboard-here") } },
  ));

test.run();
