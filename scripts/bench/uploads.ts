/**
 * `npm run bench uploads`: four gzip bombs (about 0.5 MB of gzip inflating to 500 MiB each) PUT
 * in parallel to configuration upload URLs, and one over-limit bomb alone, while /healthz is
 * polled. Reports the server's RSS (before, peak), its event-loop delay, /healthz latency while
 * the bombs are inspected, and how long each refusal took. Issue 12 §6: the server answers
 * /healthz within 50 ms while bombs are uploaded. The server runs in a child process so its memory
 * is measured alone. Prints; asserts nothing.
 */
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import pino from "pino";
import type { V1 } from "../../server/test/support/documents.ts";

const PARALLEL = 4;

interface Ready {
  type: "ready";
  base: string;
  uploadUrls: string[];
}
interface Stats {
  type: "stats";
  rssBefore: number;
  rssPeak: number;
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
}

async function serve(): Promise<void> {
  const { createStackShip } = await import("../../server/src/server.ts");
  const dataDir = mkdtempSync(join(tmpdir(), "ss-bench-uploads-"));
  process.once("exit", () => rmSync(dataDir, { recursive: true, force: true }));
  process.once("disconnect", () => process.exit(0));
  const bootstrapToken = `ss0.${randomBytes(24).toString("base64url")}`;
  const { api, benchConfig, createBenchOrganization, createBenchWorkspace, uploadUrlOf } = await import("./support.ts");
  const stackship = await createStackShip(benchConfig(dataDir, bootstrapToken), { logger: pino({ level: "silent" }) });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors (ctx.onerror)
  const http = createServer(stackship.app.callback());
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const admin = await createBenchOrganization(base, bootstrapToken);
  const workspace = await createBenchWorkspace(base, admin, "w");
  const uploadUrls: string[] = [];
  for (let i = 0; i < PARALLEL + 1; i += 1) {
    const cv = await api<V1["ConfigurationVersionDocument"]>(
      base,
      admin,
      "POST",
      `/v1/workspaces/${workspace.id}/configuration-versions`,
      { data: { type: "configuration-versions" } },
    );
    uploadUrls.push(uploadUrlOf(cv.data));
  }
  let rssBefore = 0;
  let rssPeak = 0;
  let sampler: NodeJS.Timeout | null = null;
  const delay = monitorEventLoopDelay({ resolution: 5 });
  process.on("message", (message: { type: string }) => {
    if (message.type === "start") {
      (globalThis as { gc?: () => void }).gc?.();
      rssBefore = process.memoryUsage.rss();
      rssPeak = rssBefore;
      delay.reset();
      delay.enable();
      sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 10);
      process.send!({ type: "started" });
    } else if (message.type === "stop") {
      if (sampler) clearInterval(sampler);
      delay.disable();
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      process.send!({
        type: "stats",
        rssBefore,
        rssPeak,
        loopDelayMaxMs: delay.max / 1e6,
        loopDelayP99Ms: delay.percentile(99) / 1e6,
      } satisfies Stats);
    }
  });
  process.send!({ type: "ready", base, uploadUrls } satisfies Ready);
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

function request<T>(child: ReturnType<typeof fork>, type: string, reply: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (message: { type: string }) => {
      if (message.type !== reply) return;
      child.off("message", on);
      resolve(message as T);
    };
    child.on("message", on);
    child.send({ type });
  });
}

async function round(
  child: ReturnType<typeof fork>,
  ready: Ready,
  urls: string[],
  bomb: Buffer,
  label: string,
): Promise<void> {
  await request(child, "start", "started");
  let done = false;
  const latencies: number[] = [];
  const polling = (async () => {
    while (!done) {
      const started = performance.now();
      await (await fetch(`${ready.base}/healthz`)).arrayBuffer();
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const started = performance.now();
  // The idle baseline: the same polling for a second with no upload (the machine's own noise).
  if (urls.length === 0) await new Promise((resolve) => setTimeout(resolve, 1000));
  const refusals = await Promise.all(
    urls.map(async (url) => {
      const response = await fetch(url, {
        method: "PUT",
        headers: { "Content-Type": "application/octet-stream" },
        body: new Uint8Array(bomb),
      });
      const body = (await response.json()) as { errors?: Array<{ code: string }> };
      return { status: response.status, code: body.errors?.[0]?.code, ms: performance.now() - started };
    }),
  );
  done = true;
  await polling;
  const stats = await request<Stats>(child, "stop", "stats");
  latencies.sort((a, b) => a - b);
  console.log(`[bench uploads] ${label}`);
  if (refusals.length > 0)
    console.log(`  refusals: ${refusals.map((r) => `${r.status} ${r.code} after ${r.ms.toFixed(0)} ms`).join("; ")}`);
  console.log(
    `  server RSS ${mib(stats.rssBefore)} → peak ${mib(stats.rssPeak)} (+${mib(stats.rssPeak - stats.rssBefore)})`,
  );
  console.log(
    `  event-loop delay max ${stats.loopDelayMaxMs.toFixed(1)} ms, p99 ${stats.loopDelayP99Ms.toFixed(1)} ms`,
  );
  console.log(
    `  /healthz meanwhile: ${latencies.length} answers, max ${latencies.at(-1)?.toFixed(1)} ms, median ${latencies[Math.floor(latencies.length / 2)]?.toFixed(1)} ms (target: within 50 ms)`,
  );
}

if (process.env.BENCH_UPLOADS_SERVER) {
  await serve();
} else {
  const bomb = gzipSync(Buffer.alloc(500 * 1024 * 1024), { level: 9 });
  console.log(`[bench uploads] bomb: ${bomb.length} bytes of gzip inflating to 500 MiB`);
  const child = fork(fileURLToPath(import.meta.url), [], {
    env: { ...process.env, BENCH_UPLOADS_SERVER: "1" },
    execArgv: ["--import", "tsx", "--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<Ready>((resolve) => child.once("message", (message: Ready) => resolve(message)));
  try {
    await round(child, ready, [], bomb, "idle (no upload, for comparison)");
    await round(child, ready, ready.uploadUrls.slice(0, 1), bomb, "one bomb");
    await round(child, ready, ready.uploadUrls.slice(1), bomb, `${PARALLEL} bombs in parallel`);
  } finally {
    child.disconnect();
  }
}
