import { Gauge } from "prom-client";
import { RUN_STATUSES } from "../domain/run.ts";
import type { Stores } from "../store/index.ts";
import { registry } from "./registry.ts";

const runsByStatus = new Gauge({
  name: "stackship_runs",
  help: "Runs in the database by status (read at scrape time).",
  labelNames: ["status"] as const,
  registers: [registry],
});

const queueDepth = new Gauge({
  name: "stackship_run_queue_depth",
  help: "Plan and apply phases queued and not yet taken by a runner (read at scrape time).",
  registers: [registry],
});

const queueOldestAge = new Gauge({
  name: "stackship_run_queue_oldest_age_seconds",
  help: "How long the oldest queued phase has waited (0 when nothing waits; read at scrape time).",
  registers: [registry],
});

/**
 * The whole exposition, with the database gauges refreshed first when `stores` is given (the
 * API process; two cheap aggregate queries). A runner-only process serves its own counters only.
 */
export async function renderMetrics(stores?: Stores, now: Date = new Date()): Promise<string> {
  if (stores) {
    const [counts, queue] = await Promise.all([stores.runs.countByStatus(), stores.jobs.queueSummary()]);
    for (const status of RUN_STATUSES) runsByStatus.set({ status }, counts.get(status) ?? 0);
    queueDepth.set(queue.depth);
    queueOldestAge.set(
      queue.oldestQueuedAt ? Math.max(0, (now.getTime() - Date.parse(queue.oldestQueuedAt)) / 1000) : 0,
    );
  }
  return registry.metrics();
}
