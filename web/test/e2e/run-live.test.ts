// The run page's live feed in Chromium against a real server with real runs (real tofu): an apply
// watched live (lines appear in order without a reload, the review turns Applied, the console ends
// equal to the HTTP log), the socket cut mid-run (fallback to the HTTP route, Refresh log, nothing
// duplicated or lost), three failed reconnects (the stale note and review polling, gone when the
// socket is back), and a terminal run that opens no socket (counted in the browser and on the server).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { WebSocketRoute } from "playwright-core";
import type { WebSocketServer } from "ws";
import { approveRun, getRun } from "../../../client/src/index.ts";
import { poll, until } from "../../../server/test/support/poll.ts";
import { readLog } from "../../../server/test/support/runs.ts";
import { hook, startHarness, type Harness, type HarnessOrganization } from "../support/index.ts";

interface Context {
  h: Harness;
  org: HarnessOrganization;
  appliedRunId: string;
}

const test = suite<Context>("run page live feed (real runs, Chromium)");

/** An apply whose provisioner prints a numbered line a second for 30 seconds. */
const LINES = 30;
const NUMBERS = Array.from({ length: LINES }, (_, i) => String(i + 1).padStart(2, "0")).join(" ");
const PRINTING = {
  "main.tf": `resource "terraform_data" "printing" {\n  provisioner "local-exec" {\n    command = "for i in ${NUMBERS}; do echo live-line-$i; sleep 1; done"\n  }\n}\n`,
};

test.before(
  hook(async (ctx: Context) => {
    ctx.h = await startHarness();
    ctx.org = await ctx.h.organization("acme");
  }),
);
test.after(
  hook(async (ctx: Context) => {
    await ctx.h?.stop();
  }),
);

async function status(h: Harness, org: HarnessOrganization, runId: string) {
  return (await getRun({ client: h.server.v1(org.token), path: { run_id: runId } })).data!.data.attributes.status;
}

/** The numbered lines in `text`, in order. */
const lines = (text: string) => [...text.matchAll(/live-line-(\d+)$/gm)].map((m) => m[1]);

test("an applying run watched live: lines append in order without a reload, a cut socket falls back to the route, three failed reconnects show the stale note and poll, and the review turns Applied", async (ctx) => {
  const { h, org } = ctx;
  const { run } = await h.makeRun(org, "awaiting_approval", { files: PRINTING, message: "Watch the apply" });
  const { page } = await h.signInAs(org, "viewer");

  // Every live socket of the page goes through this route: connected to the real server unless
  // `refuse` is set (then it is closed at once, as a failed connection), and kept to be cut.
  const routes: WebSocketRoute[] = [];
  let refuse = false;
  let sockets = 0;
  page.on("websocket", () => sockets++);
  // The first connection loses the apply log message with seq 2 on its way: a forced sequence gap.
  let dropped: { offset: number } | null = null;
  await page.routeWebSocket(/\/live\/runs\//, (ws) => {
    routes.push(ws);
    if (refuse) return void ws.close({ code: 1011, reason: "refused by the test" });
    const server = ws.connectToServer();
    server.onMessage((message) => {
      if (!dropped && typeof message === "string") {
        const parsed = JSON.parse(message) as { type: string; phase?: string; seq?: number; offset?: number };
        if (parsed.type === "log" && parsed.phase === "apply" && parsed.seq === 2) {
          dropped = { offset: parsed.offset! };
          return;
        }
      }
      ws.send(message);
    });
  });
  const logReads: number[] = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname === `/v1/runs/${run.id}/logs/apply`) logReads.push(Number(url.searchParams.get("offset") ?? 0));
  });

  await page.goto(h.url(`/runs/${run.id}`));
  await page.getByTestId("run-status").filter({ hasText: "Awaiting approval" }).waitFor();
  await page.evaluate(() => ((window as unknown as { marker: string }).marker = "same page"));
  const apply = page.getByTestId("stage-apply");
  await apply.getByTestId("stage-head").click();
  const consoleEl = page.getByTestId("console-apply");
  const refresh = apply.getByTestId("refresh-log");
  await page.getByTestId("console-live").waitFor({ timeout: 10_000 });
  assert.is(await refresh.count(), 0, "no manual control while live");

  expectStatus(
    await approveRun({
      client: h.server.v1(org.token),
      path: { run_id: run.id },
      body: { data: { type: "approvals", attributes: { plan_digest: run.attributes.plan_digest! } } },
    }),
  );
  await page.getByTestId("run-status").filter({ hasText: "Applying" }).waitFor({ timeout: 30_000 });
  await consoleEl.filter({ hasText: "live-line-03" }).waitFor({ timeout: 30_000 });
  assert.is(await status(h, org, run.id), "applying", "the lines arrived while the apply ran");
  const gap = await poll("the seq 2 apply message to be held back", () => dropped ?? undefined, 30_000, 100);
  await until(
    () => logReads.includes(gap.offset),
    () => `the gap to be re-read from the route at ${gap.offset} (reads at ${logReads.join(",")})`,
    30_000,
    100,
  );
  const early = lines(await consoleEl.innerText());
  assert.ok(early.length >= 3, `lines so far: ${early.join(",")}`);
  assert.equal(
    early,
    early.map((_, i) => String(i + 1).padStart(2, "0")),
    `in order from the first: ${early.join(",")}`,
  );
  assert.is(await refresh.count(), 0);

  // Cut the socket mid-run and refuse the reconnects: the page falls back to the route, shows
  // Refresh log, and after three failures the stale note beside the status badge.
  refuse = true;
  const reviewsBefore = { n: 0 };
  page.on("request", (request) => {
    if (request.url().endsWith(`/v1/runs/${run.id}/review`)) reviewsBefore.n++;
  });
  await routes[routes.length - 1].close({ code: 1011, reason: "cut by the test" });
  await refresh.waitFor({ timeout: 30_000 });
  const stale = page.getByTestId("live-stale");
  await stale.waitFor({ timeout: 15_000 });
  assert.is(await stale.innerText(), "Reconnecting — data may be stale");
  // The stale page polls the review (every REVIEW_POLL_MS); waited for, not timed.
  const atNote = reviewsBefore.n;
  await until(() => reviewsBefore.n > atNote, "the review to be polled while stale", 30_000, 100);
  // Refresh log reads what the route has meanwhile.
  await refresh.click();
  await page.waitForTimeout(300);

  // Let the socket back: the note goes, the console is live again.
  refuse = false;
  await stale.waitFor({ state: "detached", timeout: 30_000 });
  assert.ok(routes.length >= 4, `three refused reconnects, then one accepted (${routes.length} sockets)`);

  // The review turns Applied on its own; the page was never reloaded.
  await page.getByTestId("run-status").filter({ hasText: "Applied" }).waitFor({ timeout: 60_000 });
  assert.is(await page.evaluate(() => (window as unknown as { marker?: string }).marker), "same page");
  await refresh.waitFor({ timeout: 30_000 });
  const http = await readLog(h.server, org.token, run.id, "apply");
  // The console ends equal to the HTTP log, byte for byte (polled: the last chunks may still be arriving).
  const deadline = Date.now() + 30_000;
  let shown = await consoleEl.textContent();
  while (shown !== http && Date.now() < deadline) {
    await page.waitForTimeout(200);
    shown = await consoleEl.textContent();
  }
  assert.is(shown, http, "the console holds exactly the HTTP log");
  assert.equal(lines(await consoleEl.innerText()), lines(http), "nothing duplicated or lost against the HTTP log");
  assert.is(lines(http).length, LINES);
  assert.ok(sockets >= 1);
  await h.screenshot(page, "run-live-applied");
  ctx.appliedRunId = run.id;
});

test("a run terminal at load opens no socket: none in the browser, none on the server; its consoles offer Refresh log", async ({
  h,
  org,
  appliedRunId,
}) => {
  assert.ok(appliedRunId, "the previous scenario applied a run");
  const { page } = await h.signInAs(org, "viewer");
  let sockets = 0;
  page.on("websocket", () => sockets++);
  await page.goto(h.url(`/runs/${appliedRunId}`));
  await page.getByTestId("run-status").filter({ hasText: "Applied" }).waitFor();
  const apply = page.getByTestId("stage-apply");
  await apply.getByTestId("console-apply").waitFor();
  await apply.getByTestId("refresh-log").waitFor();
  await page.waitForTimeout(1_500);
  assert.is(sockets, 0, "no WebSocket in the browser");
  assert.is(h.server.live.hub.stats().viewers, 0, "no live socket on the server");
  assert.is(liveClients(h), 0);
});

test("two tabs on one applying run each get the live lines; closing the tabs frees the server's sockets", async ({
  h,
  org,
}) => {
  const { run } = await h.makeRun(org, "awaiting_approval", { files: PRINTING });
  const { context, page } = await h.signInAs(org, "viewer");
  const second = await context.newPage();
  for (const p of [page, second]) {
    await p.goto(h.url(`/runs/${run.id}`));
    await p.getByTestId("stage-apply").getByTestId("stage-head").click();
    await p.getByTestId("console-live").waitFor({ timeout: 10_000 });
  }
  assert.is(h.server.live.hub.stats().viewers, 2, "one socket per tab");
  expectStatus(
    await approveRun({
      client: h.server.v1(org.token),
      path: { run_id: run.id },
      body: { data: { type: "approvals", attributes: { plan_digest: run.attributes.plan_digest! } } },
    }),
  );
  for (const p of [page, second])
    await p.getByTestId("console-apply").filter({ hasText: "live-line-02" }).waitFor({ timeout: 30_000 });
  await second.close();
  await page.close();
  await until(() => h.server.live.hub.stats().viewers === 0, "the sockets to close with their tabs", 30_000, 100);
  await h.waitForStatus(org, run.id, ["applied"]);
});

test("more than 512 KiB of apply output: the console holds exactly the newest 512 KiB of the HTTP log and says it trimmed", async ({
  h,
  org,
}) => {
  const LOUD = {
    "main.tf":
      'resource "terraform_data" "loud" {\n  provisioner "local-exec" {\n    command = "yes 0123456789abcdef0123456789abcdef | head -n 12000"\n  }\n}\n',
  };
  const { run } = await h.makeRun(org, "applied", { files: LOUD });
  const http = await readLog(h.server, org.token, run.id, "apply");
  assert.ok(http.length > 512 * 1024, `the apply log is ${http.length} characters`);
  const { page } = await h.signInAs(org, "viewer");
  await page.goto(h.url(`/runs/${run.id}`));
  const apply = page.getByTestId("stage-apply");
  const consoleEl = apply.getByTestId("console-apply");
  await apply.getByTestId("console-trimmed").waitFor({ timeout: 20_000 });
  await consoleEl.waitFor();
  const shown = await consoleEl.textContent();
  assert.is(shown!.length, 512 * 1024);
  assert.ok(shown === http.slice(-512 * 1024), "exactly the newest 512 KiB");
  assert.match(await apply.getByTestId("console-trimmed").innerText(), /earlier output trimmed/);
  await h.screenshot(page, "run-live-trimmed");
});

function liveClients(h: Harness): number {
  return (h.server.live as unknown as { wss: WebSocketServer }).wss.clients.size;
}

function expectStatus(result: { response: Response }) {
  assert.ok(result.response.status === 202, `approve answered ${result.response.status}`);
}

test.run();
