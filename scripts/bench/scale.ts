/**
 * `npm run bench scale`: the drain time of N (default 40) speculative plans queued at once over
 * N/2 workspaces, on PostgreSQL, with one runner-only process (`npm run runner`'s entry point)
 * and then with two, against one API process (this one, no runner of its own). Prints both
 * times, their ratio and the queue → attempt-started latency. On a machine with few cores the
 * second process competes for the same CPUs: the ratio shows that contention, it is no target.
 * PostgreSQL: STACKSHIP_TEST_PG_URL, else scripts/ensure-postgres; each round on a fresh database.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import knex from "knex";
import pino from "pino";
import { loadConfig, REPO_ROOT } from "../../server/src/config.ts";
import { createStackShip } from "../../server/src/server.ts";
import { configTarball } from "./stackship-harness.ts";
import { api, createBenchOrganization, createBenchWorkspace, uploadConfiguration } from "./support.ts";
import { percentile } from "./stats.ts";

const PLANS = Number(process.env.BENCH_SCALE_PLANS ?? 40);
const WORKSPACES = Math.max(1, Math.floor(PLANS / 2));
const CONCURRENCY = process.env.STACKSHIP_RUNNER_CONCURRENCY || String(availableParallelism());

const say = (message: string) => process.stdout.write(`[bench] scale: ${message}\n`);

/** A runner-only process; resolves once it says it started. */
function startRunner(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "server/src/runner-main.ts")], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      seen += text;
      if (/runner \S+ started/.test(seen)) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`a runner process exited (${code}) before it started:\n${seen}`)));
  });
}

/** One round on a fresh database: `runners` processes drain PLANS queued plans. */
async function round(
  adminUrl: string,
  runners: number,
): Promise<{ drainMs: number; errored: number; queueToStart: number[] }> {
  const name = `ss_bench_scale_${randomBytes(6).toString("hex")}`;
  const admin = knex({ client: "pg", connection: adminUrl, pool: { min: 0, max: 1 } });
  await admin.raw("create database ??", [name]);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const dataDir = mkdtempSync(join(tmpdir(), "ss-bench-scale-"));
  const bootstrapToken = `ss0.${randomBytes(24).toString("base64url")}`;
  // From the same environment the runner processes get, so that all of them pick the same artifact
  // store (on PostgreSQL: the database itself); a config made for SQLite and then pointed at
  // PostgreSQL kept a local directory the runners could not see, and every plan errored.
  const config = {
    ...loadConfig({ STACKSHIP_DATABASE_URL: databaseUrl, STACKSHIP_DATA_DIR: dataDir }),
    bootstrapToken,
    validateResponses: false,
    logLevel: "silent",
    runnerConcurrency: 0,
  };
  const stackship = await createStackShip(config, { logger: pino({ level: "silent" }) });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors (ctx.onerror)
  const http = createServer(stackship.app.callback());
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const children: ChildProcess[] = [];
  try {
    const token = await createBenchOrganization(base, bootstrapToken);
    const tarball = configTarball();
    const workspaces: string[] = [];
    for (let i = 0; i < WORKSPACES; i++) {
      const workspace = await createBenchWorkspace(base, token, `w${i}`);
      await uploadConfiguration(base, token, workspace.id, tarball);
      workspaces.push(workspace.id);
    }
    const env = {
      STACKSHIP_DATABASE_URL: databaseUrl,
      STACKSHIP_DATA_DIR: dataDir,
      STACKSHIP_API_URL: base,
      STACKSHIP_RUNNER_CONCURRENCY: CONCURRENCY,
      STACKSHIP_LOG_LEVEL: "warn",
    };
    for (let i = 0; i < runners; i++) children.push(await startRunner(env));
    // Their warm sandboxes boot before the clock starts.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const started = performance.now();
    await Promise.all(
      Array.from({ length: PLANS }, (_, i) =>
        api(base, token, "POST", `/v1/workspaces/${workspaces[i % WORKSPACES]}/runs`, {
          data: { type: "runs", attributes: { kind: "speculative" } },
        }),
      ),
    );
    const knexDb = stackship.services.db.knex;
    for (;;) {
      const [{ n }] = await knexDb("runs")
        .whereIn("status", ["planned_and_finished", "errored", "canceled"])
        .count({ n: "*" });
      if (Number(n) >= PLANS) break;
      if (performance.now() - started > 30 * 60_000) throw new Error("the plans did not drain in 30 minutes");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const drainMs = performance.now() - started;
    const [{ n: errored }] = await knexDb("runs").where({ status: "errored" }).count({ n: "*" });
    if (Number(errored) > 0) {
      const reasons = await knexDb<{ phase: string; text: string }>("run_log_chunks")
        .where({ phase: "plan" })
        .select("text")
        .limit(1);
      process.stdout.write(
        `[bench] scale: ${errored} plans errored; the first plan log: ${reasons[0]?.text.trim() ?? "(none)"}\n`,
      );
    }
    const waits = await knexDb("run_attempts as a")
      .join("run_jobs as j", function () {
        this.on("j.run_id", "=", "a.run_id").andOn("j.phase", "=", "a.phase");
      })
      .select("a.started_at", "j.created_at");
    const queueToStart = waits.map(
      (row: { started_at: string | Date; created_at: string | Date }) =>
        new Date(row.started_at).getTime() - new Date(row.created_at).getTime(),
    );
    return { drainMs, errored: Number(errored), queueToStart };
  } finally {
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) =>
            child.exitCode !== null ? resolve(null) : (child.once("exit", resolve), child.kill("SIGTERM")),
          ),
      ),
    );
    http.close();
    await stackship.close();
    rmSync(dataDir, { recursive: true, force: true });
    await admin.raw("drop database if exists ?? with (force)", [name]);
    await admin.destroy();
  }
}

const adminUrl =
  process.env.STACKSHIP_TEST_PG_URL ||
  execFileSync("bash", [join(REPO_ROOT, "scripts/ensure-postgres")], { encoding: "utf8" }).trim();
say(
  `${PLANS} speculative plans queued at once over ${WORKSPACES} workspaces, PostgreSQL, runner processes of concurrency ${CONCURRENCY} each, on ${availableParallelism()} cores`,
);
const results: Array<{ runners: number; drainMs: number; errored: number; queueToStart: number[] }> = [];
for (const runners of [1, 2]) {
  const result = await round(adminUrl, runners);
  results.push({ runners, ...result });
  say(
    `${runners} runner process${runners === 1 ? "" : "es"}: drained in ${(result.drainMs / 1000).toFixed(1)} s (${result.errored} errored); queue → attempt started p50 ${percentile(result.queueToStart, 50)} ms, p95 ${percentile(result.queueToStart, 95)} ms`,
  );
}
const [one, two] = results;
say(
  `two processes / one process = ${(two.drainMs / one.drainMs).toFixed(2)}x the drain time (0.50x would be linear scaling; ≥ 1.00x means the second process only adds contention for the same ${availableParallelism()} cores)`,
);
