/**
 * `npm run bench live`: the live run WebSocket. On SQLite (and PostgreSQL when
 * STACKSHIP_TEST_PG_URL is set), against a real server on loopback:
 *   1. publish → receive: a log chunk appended through the runner's path (LogRepository.append)
 *      until one viewer's socket delivers it, one chunk at a time; the baseline is the bare
 *      append with nobody watching, measured in the same run; the target is p95 ≤ 100 ms;
 *   2. 1,000 concurrent viewers of one run on one server process: connect time (handshake to
 *      `hello`), delivery p95 of every chunk to all 1,000 (to the last viewer, and over every
 *      viewer), and the server process's memory. The viewers run in a child process
 *      (live-viewers.ts), so their CPU is not the server's (it is the same 2-core machine).
 * Prints numbers and ratios; asserts nothing (benchmarks never do).
 */
import { fork } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { WebSocket, type RawData } from "ws";
import {
  createOrganizationWithToken,
  createWorkspace,
  DEFAULT_CONFIGURATION,
} from "../../server/test/support/factories.ts";
import { startRun } from "../../server/test/support/runs.ts";
import { signedInMember } from "../../server/test/support/sessions.ts";
import { testDialects } from "../../server/test/support/databases.ts";
import { withTestServer, type TestServer } from "../../server/test/support/test-server.ts";
import { percentile } from "./stats.ts";

const CHUNKS = Number(process.env.BENCH_LIVE_CHUNKS ?? 300);
const VIEWERS = Number(process.env.BENCH_LIVE_VIEWERS ?? 1000);
const FANOUT_CHUNKS = Number(process.env.BENCH_LIVE_FANOUT_CHUNKS ?? 50);
const TARGET_P95_MS = 100;

/** What the viewers process (live-viewers.ts) reports. */
type ViewersReport =
  { type: "connected"; total: number; times: number[] } | { type: "delivered"; seq: number; receipts: number[] };

/** A message's text (with the default binaryType, "nodebuffer", every message arrives as one Buffer). */
function frameText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString("utf8");
}

// A collected heap before each memory sample, so the numbers are what the sockets hold.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
function memory() {
  gc();
  return process.memoryUsage();
}

function say(line: string) {
  process.stdout.write(`[bench] live ${line}\n`);
}

const ms = (n: number) => `${n.toFixed(2)} ms`;
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

function liveUrl(server: TestServer, runId: string): string {
  return `${server.baseUrl.replace(/^http/, "ws")}/live/runs/${runId}`;
}

interface Viewer {
  ws: WebSocket;
  /** Called with each log message's seq, at receipt. */
  onLog?: (seq: number) => void;
}

function open(server: TestServer, runId: string, cookie: string): Promise<Viewer> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(liveUrl(server, runId), { headers: { Cookie: cookie }, origin: server.baseUrl });
    const viewer: Viewer = { ws };
    ws.on("message", (data) => {
      const message = JSON.parse(frameText(data)) as { type: string; seq?: number };
      if (message.type === "hello") resolve(viewer);
      else if (message.type === "log") viewer.onLog?.(message.seq!);
    });
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once("error", reject);
  });
}

async function bench(server: TestServer) {
  const name = server.dialect;
  const { organizationName, token } = await createOrganizationWithToken(server, "bench", "admin");
  const workspace = await createWorkspace(server, token, organizationName);
  const run = await startRun(server, token, workspace.id, DEFAULT_CONFIGURATION);
  const { session } = await signedInMember(server, organizationName, "viewer");
  const append = (text: string) => server.services.stores.logs.append(run.id, "plan", text, false, new Date());
  const line = "Plan: 3 to add, 1 to change, 0 to destroy. terraform_data.example: Creating...\n";

  // Baseline: the append alone, nobody watching.
  for (let i = 0; i < 20; i++) await append(line);
  const bare: number[] = [];
  for (let i = 0; i < CHUNKS; i++) {
    const start = performance.now();
    await append(line);
    bare.push(performance.now() - start);
  }

  // 1. publish → receive with one viewer, one chunk in flight at a time.
  const one = await open(server, run.id, session.cookie);
  const latency: number[] = [];
  for (let i = 0; i < CHUNKS; i++) {
    const start = performance.now();
    const received = new Promise<void>((resolve) => (one.onLog = () => resolve()));
    await append(line);
    await received;
    latency.push(performance.now() - start);
  }
  one.ws.close();
  const bareP95 = percentile(bare, 95);
  const p95 = percentile(latency, 95);
  say(
    `${name}: append alone p50 ${ms(percentile(bare, 50))} p95 ${ms(bareP95)} (baseline 1.00x) | publish → receive (1 viewer, ${CHUNKS} chunks) ` +
      `p50 ${ms(percentile(latency, 50))} p95 ${ms(p95)} p99 ${ms(percentile(latency, 99))} (${(p95 / bareP95).toFixed(2)}x the append; ${(p95 / TARGET_P95_MS).toFixed(3)}x the ${TARGET_P95_MS} ms target)`,
  );

  // 2. 1,000 viewers of the same run, in another process (their CPU and memory are not the server's).
  const before = memory();
  const child = fork(
    fileURLToPath(new URL("./live-viewers.ts", import.meta.url)),
    [liveUrl(server, run.id), server.baseUrl, session.cookie, String(VIEWERS)],
    {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    },
  );
  const inbox: ViewersReport[] = [];
  let wake: (() => void) | null = null;
  child.on("message", (message: ViewersReport) => {
    inbox.push(message);
    wake?.();
  });
  const next = async <T extends ViewersReport["type"]>(type: T): Promise<Extract<ViewersReport, { type: T }>> => {
    for (;;) {
      const index = inbox.findIndex((m) => m.type === type);
      if (index >= 0) return inbox.splice(index, 1)[0] as Extract<ViewersReport, { type: T }>;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  const connected = await next("connected");
  const afterConnect = memory();
  const epoch = () => performance.timeOrigin + performance.now();
  const toLast: number[] = [];
  const perViewer: number[] = [];
  for (let i = 0; i < FANOUT_CHUNKS; i++) {
    const start = epoch();
    const seq = await append(line);
    let delivered;
    do delivered = await next("delivered");
    while (delivered.seq !== seq);
    const receipts = delivered.receipts;
    for (const at of receipts) perViewer.push(at - start);
    toLast.push(Math.max(...receipts) - start);
  }
  const afterDelivery = memory();
  const stats = server.live.hub.stats();
  child.send({ type: "close" });
  await new Promise((resolve) => child.once("exit", resolve));
  say(
    `${name}: ${VIEWERS} viewers (another process) connected in ${ms(connected.total)} (100 at a time; handshake → hello p50 ${ms(percentile(connected.times, 50))} p95 ${ms(percentile(connected.times, 95))}); ` +
      `hub: ${stats.runs} run channel, ${stats.viewers} sockets`,
  );
  say(
    `${name}: delivery of ${FANOUT_CHUNKS} chunks to all ${VIEWERS}: to the last viewer p50 ${ms(percentile(toLast, 50))} p95 ${ms(percentile(toLast, 95))} ` +
      `(${(percentile(toLast, 95) / TARGET_P95_MS).toFixed(2)}x the ${TARGET_P95_MS} ms target, ${(percentile(toLast, 95) / p95).toFixed(1)}x one viewer) | over every viewer p50 ${ms(percentile(perViewer, 50))} p95 ${ms(percentile(perViewer, 95))}`,
  );
  say(
    `${name}: server process memory after GC: heap ${mib(before.heapUsed)} → ${mib(afterConnect.heapUsed)} with ${VIEWERS} sockets ` +
      `(+${((afterConnect.heapUsed - before.heapUsed) / 1024 / VIEWERS).toFixed(1)} KiB each) → ${mib(afterDelivery.heapUsed)} after delivery; ` +
      `rss ${mib(before.rss)} → ${mib(afterConnect.rss)} (+${((afterConnect.rss - before.rss) / 1024 / VIEWERS).toFixed(1)} KiB each) → ${mib(afterDelivery.rss)}`,
  );
}

// All the viewers share one session: its live-socket limit (STACKSHIP_LIVE_SOCKETS_PER_SESSION) is raised to their number.
for (const dialect of testDialects())
  await withTestServer(dialect, bench, { config: { liveSocketsPerSession: VIEWERS } });
if (!process.env.STACKSHIP_TEST_PG_URL) say("STACKSHIP_TEST_PG_URL is not set: PostgreSQL skipped");
