/**
 * CPU per plan (not wall time, so it holds on a shared machine): the throughput bench's two sides
 * (N local `tofu` plans, then N speculative runs drained by the embedded runner), each phase
 * marked with its CLOCK_MONOTONIC bounds so that `perf` samples of this process tree can be
 * split by phase and process kind. Run through `scripts/bench/cpu-by-kind.sh` (perf record with
 * inheritance, then the table); alone it prints this process's own CPU per phase.
 *   BENCH_THROUGHPUT_N (default 40), BENCH_CPU_PHASES (default "local,stackship").
 */
import { loadConfig } from "../../server/src/config.ts";
import { load, localDrain, localPlan, startBenchStackShip } from "./stackship-harness.ts";

const n = Number(process.env.BENCH_THROUGHPUT_N ?? "40");
const phases = (process.env.BENCH_CPU_PHASES ?? "local,stackship").split(",");
const concurrency = loadConfig(process.env).runnerConcurrency;

/** A phase boundary for the perf post-processing: CLOCK_MONOTONIC seconds, which `perf record -k CLOCK_MONOTONIC` stamps samples with. */
function mark(name: string): void {
  const seconds = Number(process.hrtime.bigint()) / 1e9;
  process.stdout.write(`[cpu-mark] ${name} ${seconds.toFixed(6)}\n`);
}

async function measured(name: string, work: () => Promise<void>): Promise<void> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  mark(`${name}:start`);
  await work();
  mark(`${name}:end`);
  const used = process.cpuUsage(cpu);
  process.stdout.write(
    `[bench] cpu: ${name}: N = ${n}, wall ${((performance.now() - started) / 1000).toFixed(1)} s, this process user ${(used.user / 1000 / n).toFixed(1)} + sys ${(used.system / 1000 / n).toFixed(1)} ms per plan (load ${load()})\n`,
  );
}

process.stdout.write(`[cpu-mark] pid ${process.pid}\n`);
const bench = await startBenchStackShip({ concurrency });
try {
  const workspaces: string[] = [];
  for (let i = 0; i < n / 2; i++) workspaces.push(await bench.workspace(`w${i}`));
  await localPlan();
  if (phases.includes("local")) {
    await measured("local", async () => {
      await localDrain(n, concurrency);
    });
  }
  await bench.runner.warmSandboxesSettled();
  if (phases.includes("stackship")) {
    // SQL statements per plan by shape (BENCH_CPU_QUERIES=1): what the API and the runner ask the database.
    const queries = new Map<string, number>();
    if (process.env.BENCH_CPU_QUERIES === "1") {
      bench.stackship.services.db.knex.on("query", (query: { sql: string }) => {
        const shape = query.sql.replace(/\?(, ?\?)*/g, "?").slice(0, 140);
        queries.set(shape, (queries.get(shape) ?? 0) + 1);
      });
    }
    await measured("stackship", async () => {
      const runs = await Promise.all(
        Array.from({ length: n }, (_, i) => bench.speculative(workspaces[i % workspaces.length])),
      );
      await bench.allPlanned(runs);
      // The last attempt's sandbox teardown and the replacement boot belong to these plans too.
      await bench.runner.warmSandboxesSettled();
    });
    if (queries.size > 0) {
      const total = [...queries.values()].reduce((a, b) => a + b, 0);
      process.stdout.write(`[bench] cpu: ${(total / n).toFixed(1)} SQL statements per plan; by shape:\n`);
      for (const [shape, count] of [...queries].sort((a, b) => b[1] - a[1]).slice(0, 40))
        process.stdout.write(`  ${(count / n).toFixed(2).padStart(6)}  ${shape}\n`);
    }
  }
} finally {
  await bench.close();
}
