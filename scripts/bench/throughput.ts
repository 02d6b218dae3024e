/**
 * Throughput: N speculative runs queued at once over N/2 workspaces, drained by the embedded
 * runner at its default concurrency (STACKSHIP_RUNNER_CONCURRENCY, default the machine's cores),
 * against the same N plans done by a local `tofu` at that concurrency (init, plan -out, show
 * -json, each in a fresh directory). Prints the ratio for each N (BENCH_THROUGHPUT_N, default
 * "40,200"; target ≤ 1.3× for N = 40) and the queue-to-start latency (job queued → attempt
 * started) p50/p95 under that load, with the machine's load averages.
 */
import { loadConfig } from "../../server/src/config.ts";
import { load, localDrain, localPlan, startBenchStackShip } from "./stackship-harness.ts";
import { median, percentile } from "./stats.ts";

const SIZES = (process.env.BENCH_THROUGHPUT_N ?? "40,200").split(",").map(Number);
const concurrency = loadConfig(process.env).runnerConcurrency;

for (const n of SIZES) {
  const bench = await startBenchStackShip({ concurrency });
  try {
    process.stdout.write(
      `[bench] throughput: N = ${n} speculative runs over ${n / 2} workspaces, runner concurrency ${concurrency} (load ${load()})…\n`,
    );
    const workspaces: string[] = [];
    for (let i = 0; i < n / 2; i++) workspaces.push(await bench.workspace(`w${i}`));
    await localPlan(); // warm the page cache for both sides
    // Local before and after the StackShip drain, averaged: the machine's load drifts (shared machine).
    const localBefore = await localDrain(n, concurrency);
    await bench.runner.warmSandboxesSettled();
    const loadBefore = load();
    const started = performance.now();
    const runs = await Promise.all(
      Array.from({ length: n }, (_, i) => bench.speculative(workspaces[i % workspaces.length])),
    );
    await bench.allPlanned(runs);
    const managed = performance.now() - started;
    const localAfter = await localDrain(n, concurrency);
    const local = (localBefore + localAfter) / 2;
    const latencies = await Promise.all(runs.map((id) => bench.queueToStart(id)));
    process.stdout.write(
      `[bench] throughput: N = ${n}: local ${(local / 1000).toFixed(1)} s (${concurrency} at a time, mean of ${(localBefore / 1000).toFixed(1)} s before and ${(localAfter / 1000).toFixed(1)} s after; baseline 1.00x) | StackShip queued at once → all finished ${(managed / 1000).toFixed(1)} s (${(managed / local).toFixed(2)}x${n === 40 ? "; target ≤ 1.30x" : ""}); load ${loadBefore} → ${load()}\n`,
    );
    process.stdout.write(
      `[bench] throughput: N = ${n}: queue → attempt started p50 ${median(latencies).toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms\n`,
    );
  } finally {
    await bench.close();
  }
}
