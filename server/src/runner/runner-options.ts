// The tuning a runner process takes (engine.ts), with its defaults.

/** Tuning of a runner process. */
export interface RunnerOptions {
  /** How many phases this process executes at once. */
  concurrency: number;
  /** How often an idle runner looks for work. */
  pollIntervalMs: number;
  /** How often a runner refreshes the heartbeat of its jobs and attempts. */
  heartbeatIntervalMs: number;
  /** A job whose heartbeat is older than this is taken to have lost its runner. */
  staleAfterMs: number;
  /** How long a job waits before it is tried again when its workspace is busy. */
  busyRetryMs: number;
  /** Keep one plan sandbox pre-started per slot (see warm-sandboxes.ts). */
  warmSandboxes: boolean;
  /** A pre-started sandbox idle this long is replaced by a new one. */
  warmSandboxIdleMs: number;
}

/** Defaults: a stopped runner is detected within 30 s (staleAfter), its work is then handled by any runner. */
export const DEFAULT_RUNNER_OPTIONS: RunnerOptions = {
  concurrency: 2,
  pollIntervalMs: 100,
  heartbeatIntervalMs: 5_000,
  staleAfterMs: 30_000,
  busyRetryMs: 2_000,
  warmSandboxes: true,
  warmSandboxIdleMs: 10 * 60_000,
};
