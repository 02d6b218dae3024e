import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * This process's Prometheus metrics (prom-client). One registry per process: the API process
 * serves it at GET /metrics (with the database gauges, database-gauges.ts), a runner-only process
 * on STACKSHIP_RUNNER_METRICS_PORT. Labels are bounded and never name an organization, a
 * workspace, a run or a user: only operation ids, phases, outcomes, statuses and directions.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "stackship_" });

const phaseDuration = new Histogram({
  name: "stackship_phase_duration_seconds",
  help: "Wall-clock time of one plan or apply phase on this runner, by phase and outcome (the attempt's status, requeued, or error).",
  labelNames: ["phase", "outcome"] as const,
  buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600],
  registers: [registry],
});

const sandboxBoots = new Counter({
  name: "stackship_sandbox_boots_total",
  help: "Sandboxes this process started, by outcome (ok, failed).",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

const artifactBytes = new Counter({
  name: "stackship_artifact_bytes_total",
  help: "Plaintext bytes of artifacts this process wrote to or read from the artifact store.",
  labelNames: ["direction"] as const,
  registers: [registry],
});

const httpDuration = new Histogram({
  name: "stackship_http_request_duration_seconds",
  help: "Time to the response head of an API request, by operation id (or unmatched) and status code.",
  labelNames: ["operation_id", "status"] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** Counts artifact bytes moved (the artifact store, or the metering wrapper around it, calls this). */
export function recordArtifactBytes(direction: "written" | "read", bytes: number): void {
  if (bytes > 0) artifactBytes.inc({ direction }, bytes);
}

/** Counts one sandbox start. */
export function recordSandboxBoot(outcome: "ok" | "failed"): void {
  sandboxBoots.inc({ outcome });
}

/** Records one phase's duration. */
export function observePhase(phase: string, outcome: string, seconds: number): void {
  phaseDuration.observe({ phase, outcome }, seconds);
}

/** Records one API request's latency. */
export function observeHttpRequest(operationId: string, status: number, seconds: number): void {
  httpDuration.observe({ operation_id: operationId, status: String(status) }, seconds);
}

/** The content type of the text exposition format. */
export const METRICS_CONTENT_TYPE = registry.contentType;
