import type { RunJob } from "../domain/records.ts";
import type { Services } from "../commands/services.ts";
import { moveRun, releaseRun } from "../commands/run-transitions.ts";
import { attestAfterDecision } from "../commands/attestations.ts";
import { endPolicyStageErrored } from "./policy-stage.ts";

// What becomes of a phase whose runner was lost or failed (RunnerEngine's sweep and settle).

/**
 * How many times a run is planned at most when the runners holding its plan are lost: a lost plan
 * is planned again (it changed nothing), but a plan that keeps killing its runner (memory, a
 * crash it causes) ends errored after this many attempts.
 */
export const MAX_PLAN_ATTEMPTS = 3;

/**
 * Ends a phase whose attempt was lost (`runner_lost`: its runner stopped heartbeating) or
 * failed in this runner (`runner_error`), by the rules of RUN-LIFECYCLE.md. Safe to repeat:
 * every step is compare-and-set, so a retry after a refused write (or two runners sweeping the
 * same job) changes nothing twice.
 */
export async function endLostPhase(
  services: Services,
  job: RunJob,
  classification: string,
  reason: string,
): Promise<void> {
  const now = services.clock();
  const attempts = await services.stores.attempts.listByRun(job.runId);
  let running = 0;
  let ended = 0;
  for (const attempt of attempts) {
    if (attempt.status !== "running" || attempt.phase !== job.phase) continue;
    running++;
    if (await services.stores.attempts.finish(attempt.id, "lost", classification, now)) ended++;
  }
  // Its runner ended the attempt itself between the listing and here (it was slow, not lost):
  // that runner records the outcome, so nothing is requeued or failed behind its back.
  if (running > 0 && ended === 0) return;
  const run = await services.stores.runs.getById(job.runId);
  if (!run) return;
  if (job.phase === "plan" && run.status === "pending") {
    // The runner died before the plan started: nothing ran, so the plan is simply queued again.
    await services.stores.jobs.enqueue({
      runId: run.id,
      workspaceId: run.workspaceId,
      phase: "plan",
      serial: job.serial,
      now,
    });
    services.jobQueued?.();
  } else if (job.phase === "plan" && run.status === "planning") {
    const planAttempts = attempts.filter((attempt) => attempt.phase === "plan").length;
    if (classification === "runner_lost" && planAttempts < MAX_PLAN_ATTEMPTS) {
      // Planned again from the start by any runner: back to pending with a new job, in one
      // transaction. The lost attempt published nothing (a run's artifacts count only once its
      // plan finished, and the next attempt writes its own); its log, if any was stored, stays
      // with a line that says what happened.
      const requeued = await moveRun(
        services,
        run.id,
        { type: "plan_requeued" },
        {
          now,
          alongside: (stores, current) =>
            stores.jobs.enqueue({
              runId: current.id,
              workspaceId: current.workspaceId,
              phase: "plan",
              serial: job.serial,
              now,
            }),
        },
      );
      if (!requeued) return;
      services.jobQueued?.();
      await services.stores.logs.append(
        run.id,
        "plan",
        `\n[StackShip: the runner planning this run was lost (${reason}); the plan runs again from the start.]\n`,
        false,
        now,
      );
      return;
    }
    const why =
      classification === "runner_lost"
        ? `its runner was lost ${planAttempts} times (${reason}); it is not tried again`
        : `StackShip could not record the plan: ${reason}`;
    // The reason goes to the plan log (else empty or cut short: the held log never reached the database) first, then the run ends.
    if (!(await services.stores.logs.positions(run.id)).plan.complete) {
      await services.stores.logs.append(run.id, "plan", `\nThe plan ended: ${why}.\n`, true, now);
    }
    const ended = await moveRun(services, run.id, { type: "plan_failed" }, { now });
    if (ended) await releaseRun(services, ended);
  } else if (job.phase === "plan" && run.status === "policy_checking") {
    // Lost between the plan and the policy result: the policy stage ends errored (never a pass).
    await endPolicyStageErrored(
      services,
      run,
      classification === "runner_lost" ? `its runner was lost (${reason})` : reason,
    );
  } else if (job.phase === "apply" && run.status === "applying") {
    await moveRun(services, run.id, { type: "apply_uncertain", interrupted: true }, { now });
    // The apply's outcome (needs recovery) is attested like one that ended in its sandbox.
    await attestAfterDecision(services, run.id);
  }
}
