/**
 * `npm run bench json-output` / `task bench`: GET /api/v2/plans/{id}/json-output for a 100 MiB
 * plan JSON (stored framed and encrypted: 64 KiB frames, 1 MiB batched reads and writes) against
 * streaming the same plaintext bytes unencrypted from disk through the same HTTP server (the same
 * Koa app, in the same process) in the same run, and the server's peak RSS growth while streaming.
 * Targets from issue 4: throughput ≥ 0.5× the unencrypted stream; peak RSS growth ≤ 64 MiB.
 * The server runs in a child process so its memory is measured alone. Prints; asserts nothing.
 */
import { fork, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { createServer, get } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import pino from "pino";
import type { V1 } from "../../server/test/support/documents.ts";
import {
  api,
  benchAdminToken,
  benchConfig,
  configurationTarball,
  createBenchOrganization,
  createBenchWorkspace,
  uploadConfiguration,
} from "./support.ts";
import { median } from "./stats.ts";

const SIZE = Number(process.env.BENCH_PLAN_JSON_BYTES ?? 100 * 1024 * 1024);
const REPEATS = Number(process.env.BENCH_JSON_OUTPUT_REPEATS ?? 5);
const RAW_PATH = "/bench/raw-plan-json";
const BATCH = 1024 * 1024;

interface Ready {
  type: "ready";
  base: string;
  token: string;
  planId: string;
  sizeBytes: number;
  sha256: string;
}
interface Memory {
  type: "memory";
  baseline: number;
  peak: number;
  /** Server CPU time (user + system) spent since the reset, in ms. */
  cpuMs: number;
  /** RSS once set up, before the first streamed request, and the highest RSS seen since. */
  initial: number;
  overallPeak: number;
}

// ---------------------------------------------------------------------------------------------
// The server side (child process).

/** Deterministic plan-JSON-shaped bytes, exactly `size` long, produced in batch-sized chunks. */
function* planJsonChunks(size: number): Generator<Buffer> {
  const head = Buffer.from('{"format_version":"1.2","terraform_version":"1.9.0","resource_changes":[');
  const tail = Buffer.from('],"errored":false}');
  let produced = 0;
  let i = 0;
  let pending: Buffer[] = [head];
  let pendingSize = head.length;
  const room = () => size - tail.length - produced - pendingSize;
  while (room() > 0) {
    let item = Buffer.from(
      `${i === 0 ? "" : ","}{"address":"terraform_data.r${i}","change":{"actions":["create"],"after":{"input":"${createHash("sha256").update(String(i)).digest("hex")}"}}}`,
    );
    if (item.length > room()) item = Buffer.from(" ".repeat(room()));
    pending.push(item);
    pendingSize += item.length;
    i += 1;
    if (pendingSize >= BATCH) {
      const chunk = Buffer.concat(pending);
      produced += chunk.length;
      pending = [];
      pendingSize = 0;
      yield chunk;
    }
  }
  pending.push(tail);
  yield Buffer.concat(pending);
}

async function serve(): Promise<void> {
  const { createStackShip } = await import("../../server/src/server.ts");
  const { storePlanJson } = await import("../../server/src/runner/plan-json.ts");
  const { moveRun } = await import("../../server/src/commands/run-transitions.ts");
  const dataDir = mkdtempSync(join(tmpdir(), "ss-bench-json-output-"));
  const cleanup = () => rmSync(dataDir, { recursive: true, force: true });
  process.once("exit", cleanup);
  process.once("disconnect", () => process.exit(0));
  process.once("SIGTERM", () => process.exit(0));
  const bootstrapToken = `ss0.${randomBytes(24).toString("base64url")}`;
  const stackship = await createStackShip(benchConfig(dataDir, bootstrapToken), { logger: pino({ level: "silent" }) });

  // The baseline: the same plaintext from disk, unencrypted, through the same Koa app.
  const rawFile = join(dataDir, "plan.json");
  stackship.app.middleware.unshift(async (ctx, next) => {
    if (ctx.path !== RAW_PATH) {
      await next();
      return;
    }
    ctx.set("Cache-Control", "private, no-store");
    ctx.type = "application/json";
    ctx.length = SIZE;
    ctx.body = createReadStream(rawFile, { highWaterMark: BATCH });
  });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors (ctx.onerror)
  const http = createServer(stackship.app.callback());
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  const call = <T>(token: string, method: string, path: string, body?: unknown) =>
    api<T>(base, token, method, path, body);
  // json-output needs artifact:read_sensitive (an admin token).
  const token = await createBenchOrganization(base, bootstrapToken);
  const admin = await benchAdminToken(base, bootstrapToken);
  const workspace = await createBenchWorkspace(base, admin, "w");
  const cv = await uploadConfiguration(base, admin, workspace.id, configurationTarball("\n"));
  const created = (
    await call<V1["RunDocument"]>(admin, "POST", `/v1/workspaces/${workspace.id}/runs`, {
      data: {
        type: "runs",
        attributes: { kind: "speculative" },
        relationships: { configuration_version: { data: { type: "configuration-versions", id: cv.id } } },
      },
    })
  ).data;

  // The plaintext on disk, then the same bytes through the runner's writer (no runner runs here).
  const out = createWriteStream(rawFile, { highWaterMark: BATCH });
  for (const chunk of planJsonChunks(SIZE)) if (!out.write(chunk)) await once(out, "drain");
  out.end();
  await once(out, "finish");
  const run = (await stackship.services.stores.runs.getById(created.id))!;
  const stored = await storePlanJson(stackship.services, run, createReadStream(rawFile, { highWaterMark: BATCH }));
  // A run's artifacts are served only once its plan finished: the run moves as the runner moves it.
  await moveRun(stackship.services, run.id, { type: "plan_started" });
  if (!(await moveRun(stackship.services, run.id, { type: "plan_finished", hasChanges: true })))
    throw new Error("the bench run's plan could not finish");

  let baseline = 0;
  let peak = 0;
  let cpu = process.cpuUsage();
  (globalThis as { gc?: () => void }).gc?.();
  const initial = process.memoryUsage.rss();
  let overallPeak = initial;
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage.rss());
    overallPeak = Math.max(overallPeak, peak);
  };
  setInterval(sample, 5).unref();
  process.on("message", (message: { type: string }) => {
    if (message.type === "reset") {
      (globalThis as { gc?: () => void }).gc?.();
      baseline = process.memoryUsage.rss();
      peak = baseline;
      cpu = process.cpuUsage();
      if (process.connected) process.send!({ type: "reset" });
    } else if (message.type === "report") {
      sample();
      if (process.connected) {
        const used = process.cpuUsage(cpu);
        process.send!({
          type: "memory",
          baseline,
          peak,
          cpuMs: (used.user + used.system) / 1000,
          initial,
          overallPeak,
        } satisfies Memory);
      }
    }
  });
  process.send!({
    type: "ready",
    base,
    token,
    planId: `plan-${run.id.slice("run-".length)}`,
    sizeBytes: stored.sizeBytes,
    sha256: stored.sha256,
  } satisfies Ready);
}

// ---------------------------------------------------------------------------------------------
// The client side (this process).

/** Sends `type` to the bench server; its next message (the caller knows which kind it is). */
function request(child: ChildProcess, type: string): Promise<unknown> {
  return new Promise((resolve) => {
    child.once("message", resolve);
    child.send({ type });
  });
}

/** One GET read to the end with node:http (a lean client, like curl), optionally hashing the body. */
function fetchAll(
  url: string,
  token: string | null,
  hash: boolean,
): Promise<{ ms: number; bytes: number; sha256: string | null; status: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = get(url, { headers: token ? { Authorization: `Bearer ${token}` } : {}, agent: false }, (response) => {
      const digest = hash ? createHash("sha256") : null;
      let bytes = 0;
      response.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        digest?.update(chunk);
      });
      response.once("error", reject);
      response.once("aborted", () => reject(new Error("the response was aborted")));
      response.once("end", () =>
        resolve({
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          bytes,
          sha256: digest?.digest("hex") ?? null,
          status: response.statusCode ?? 0,
        }),
      );
    });
    req.once("error", reject);
  });
}

const MiB = 1024 * 1024;

async function main(): Promise<void> {
  process.stdout.write(
    `[bench] json-output: ${(SIZE / MiB).toFixed(0)} MiB plan JSON, framed+encrypted vs unencrypted from disk, same server, ${REPEATS} rounds…\n`,
  );
  const child = fork(fileURLToPath(import.meta.url), [], {
    env: { ...process.env, BENCH_JSON_OUTPUT_SERVER: "1" },
    execArgv: ["--import", "tsx", "--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  try {
    const ready = await new Promise<Ready>((resolve, reject) => {
      child.once("message", resolve);
      child.once("exit", (code) => reject(new Error(`the bench server exited (${code})`)));
    });
    const jsonUrl = `${ready.base}/api/v2/plans/${ready.planId}/json-output`;
    const rawUrl = `${ready.base}${RAW_PATH}`;

    // Warm-up, and the correctness check: the served bytes are the stored plan JSON.
    const check = await fetchAll(jsonUrl, ready.token, true);
    if (check.status !== 200 || check.bytes !== ready.sizeBytes || check.sha256 !== ready.sha256) {
      throw new Error(
        `json-output returned ${check.status}, ${check.bytes} bytes, sha256 ${check.sha256}; expected ${ready.sizeBytes} bytes, ${ready.sha256}`,
      );
    }
    await fetchAll(rawUrl, null, false);

    const times = { json: [] as number[], raw: [] as number[] };
    const growth = { json: [] as number[], raw: [] as number[] };
    const cpu = { json: [] as number[], raw: [] as number[] };
    let last: Memory | null = null;
    for (let round = 0; round < REPEATS; round++) {
      for (const kind of ["raw", "json"] as const) {
        await request(child, "reset");
        const result = await fetchAll(kind === "json" ? jsonUrl : rawUrl, kind === "json" ? ready.token : null, false);
        const memory = (await request(child, "report")) as Memory;
        if (result.status !== 200 || result.bytes !== SIZE)
          throw new Error(`${kind}: ${result.status}, ${result.bytes} bytes`);
        times[kind].push(result.ms);
        growth[kind].push(memory.peak - memory.baseline);
        cpu[kind].push(memory.cpuMs);
        last = memory;
      }
    }
    const mbps = (ms: number) => SIZE / MiB / (ms / 1000);
    const json = median(times.json);
    const raw = median(times.raw);
    process.stdout.write(
      [
        `[bench] json-output  median ${json.toFixed(0)} ms  ${mbps(json).toFixed(0)} MiB/s`,
        `[bench] unencrypted  median ${raw.toFixed(0)} ms  ${mbps(raw).toFixed(0)} MiB/s`,
        `[bench] server CPU per request: json-output ${median(cpu.json).toFixed(0)} ms, unencrypted ${median(cpu.raw).toFixed(0)} ms (machine load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores)`,
        `[bench] throughput ratio json-output / unencrypted: ${(raw / json).toFixed(2)}×  (target ≥ 0.5×)`,
        `[bench] server peak RSS growth while streaming: json-output max ${(Math.max(...growth.json) / MiB).toFixed(1)} MiB (median ${(median(growth.json) / MiB).toFixed(1)}), unencrypted max ${(Math.max(...growth.raw) / MiB).toFixed(1)} MiB  (target ≤ 64 MiB)`,
        `[bench] server RSS: ${(last!.initial / MiB).toFixed(0)} MiB before the first streamed request, peak ${(last!.overallPeak / MiB).toFixed(0)} MiB over all ${2 * (REPEATS + 1)} streamed 100 MiB responses (+${((last!.overallPeak - last!.initial) / MiB).toFixed(1)} MiB)`,
      ].join("\n") + "\n",
    );
  } finally {
    child.disconnect();
    await once(child, "exit").catch(() => undefined);
  }
}

if (process.env.BENCH_JSON_OUTPUT_SERVER === "1") await serve();
else await main();
