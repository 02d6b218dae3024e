import type { RunJob } from "../domain/records.ts";
import { observePhase } from "../metrics/registry.ts";
import type { Services } from "../commands/services.ts";

/**
 * Runs one phase and records its duration (stackship_phase_duration_seconds) with its outcome:
 * the status its attempt on this runner ended with (succeeded, failed, interrupted, …),
 * `requeued` when the workspace was busy, `error` when the phase threw.
 */
export async function timePhase<T>(
  services: Services,
  runnerId: string,
  job: RunJob,
  execute: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  let outcome = "error";
  try {
    const result = await execute();
    outcome = result === "retry_later" ? "requeued" : await attemptOutcome(services, runnerId, job);
    return result;
  } finally {
    observePhase(job.phase, outcome, (performance.now() - started) / 1000);
  }
}

async function attemptOutcome(services: Services, runnerId: string, job: RunJob): Promise<string> {
  const attempts = (await services.stores.attempts.listByRun(job.runId)).filter(
    (attempt) => attempt.phase === job.phase && attempt.runnerId === runnerId,
  );
  // No attempt: the phase ended before one started (e.g. the run was canceled while queued).
  return attempts.at(-1)?.status ?? "skipped";
}
