import type { Run, RunAttempt, RunReview } from "../../domain/records.ts";
import { isTerminalRunStatus, type RunStatus } from "../../domain/run.ts";
import type { S } from "./types.ts";

/**
 * The TFE status the CLI understands for each native run status. The CLI keeps polling only in
 * `pending`/`confirmed`, prompts only when `is-confirmable`, and exits 1 on `errored`/`canceled`.
 */
const TFE_RUN_STATUS: Record<RunStatus, string> = {
  pending: "pending",
  planning: "planning",
  policy_checking: "policy_checking",
  policy_soft_failed: "policy_soft_failed",
  awaiting_approval: "planned",
  applying: "applying",
  applied: "applied",
  planned_and_finished: "planned_and_finished",
  discarded: "discarded",
  canceled: "canceled",
  errored: "errored",
  expired: "discarded",
  plan_credentials_required: "errored",
  needs_recovery: "errored",
};

/** The run's TFE status; an approved run whose apply has not started yet is `apply_queued`. */
export function tfeRunStatus(run: Run): string {
  if (run.status === "applying" && run.execution.applyStatus === "pending") return "apply_queued";
  return TFE_RUN_STATUS[run.status];
}

/** The TFE operation of a run: StackShip makes plan-only (speculative) and plan-and-apply runs. */
export function tfeRunOperation(run: Run): string {
  return run.kind === "speculative" ? "plan_only" : "plan_and_apply";
}

/** The run's `source` as the run document shows it. */
export function tfeRunSource(run: Run): string {
  return run.source;
}

/** The TFE status of a run's plan phase; `finished` only once the run left the policy stage. */
export function tfePlanStatus(run: Run): S["PhaseStatus"] {
  const x = run.execution;
  if (x.planStatus === "finished") return run.status === "policy_checking" ? "running" : "finished";
  if (x.planStatus === "pending") {
    if (run.status === "canceled") return "canceled";
    if (run.status === "errored" || run.status === "plan_credentials_required") return "errored";
    return "pending";
  }
  return x.planStatus;
}

/** The TFE status of a run's apply phase; `unreachable` when the run ended without one. */
export function tfeApplyStatus(run: Run): S["PhaseStatus"] {
  switch (run.execution.applyStatus) {
    case "pending":
      if (run.status === "applying") return "queued";
      return isTerminalRunStatus(run.status) || run.status === "needs_recovery" ? "unreachable" : "pending";
    case "interrupted":
      return "errored";
    default:
      return run.execution.applyStatus;
  }
}

/** What StackShip records about when a run got where it is: its phase attempts and its review decision. */
export interface RunTimeline {
  attempts: readonly RunAttempt[];
  review: RunReview | undefined;
}

/** The first attempt of a phase (when the phase started) and the last (when it ended). */
function phaseAttempts(
  timeline: RunTimeline | undefined,
  phase: "plan" | "apply",
): { first?: RunAttempt; last?: RunAttempt } {
  const attempts = (timeline?.attempts ?? []).filter((attempt) => attempt.phase === phase);
  return { first: attempts[0], last: attempts[attempts.length - 1] };
}

/** When the run ended: its recorded finish, else its last attempt's, else its last update. */
function endedAt(run: Run, timeline: RunTimeline | undefined): string {
  const attempts = timeline?.attempts ?? [];
  return (
    run.execution.finishedAt ??
    attempts
      .map((attempt) => attempt.finishedAt)
      .filter((at) => at !== null)
      .sort()
      .at(-1) ??
    run.updatedAt
  );
}

/**
 * The run's TFE `status-timestamps` from what StackShip records: creation (`plan-queueable-at`,
 * `plan-queued-at`), the plan and apply attempts (`planning-at`, `planned-at`, `applying-at`,
 * `applied-at`), the review decision (`confirmed-at`, `apply-queued-at`, `discarded-at`) and the
 * end (`planned-and-finished-at`, `canceled-at`, `errored-at`).
 */
export function runStatusTimestamps(run: Run, timeline?: RunTimeline): Record<string, string> {
  const timestamps: Record<string, string> = { "plan-queueable-at": run.createdAt, "plan-queued-at": run.createdAt };
  const plan = phaseAttempts(timeline, "plan");
  const apply = phaseAttempts(timeline, "apply");
  if (plan.first) timestamps["planning-at"] = plan.first.startedAt;
  if (run.execution.planStatus === "finished" && plan.last?.finishedAt) timestamps["planned-at"] = plan.last.finishedAt;
  const review = timeline?.review;
  if (review?.decision === "approved") {
    timestamps["confirmed-at"] = review.decidedAt;
    timestamps["apply-queued-at"] = review.decidedAt;
  }
  if (apply.first) timestamps["applying-at"] = apply.first.startedAt;
  const status = tfeRunStatus(run);
  if (status === "applied") timestamps["applied-at"] = apply.last?.finishedAt ?? endedAt(run, timeline);
  if (status === "planned_and_finished") timestamps["planned-and-finished-at"] = endedAt(run, timeline);
  if (status === "discarded")
    timestamps["discarded-at"] = review && review.decision !== "approved" ? review.decidedAt : endedAt(run, timeline);
  if (status === "canceled") timestamps["canceled-at"] = endedAt(run, timeline);
  if (status === "errored") timestamps["errored-at"] = endedAt(run, timeline);
  return timestamps;
}

/** A phase's TFE `status-timestamps`: queued, started and finished (or errored, canceled) times. */
function phaseStatusTimestamps(
  status: S["PhaseStatus"],
  queuedAt: string | undefined,
  attempts: { first?: RunAttempt; last?: RunAttempt },
  end: string,
): Record<string, string> {
  const timestamps: Record<string, string> = {};
  if (queuedAt) timestamps["queued-at"] = queuedAt;
  if (attempts.first) timestamps["started-at"] = attempts.first.startedAt;
  const finished = attempts.last?.finishedAt ?? end;
  if (status === "finished") timestamps["finished-at"] = finished;
  if (status === "errored") timestamps["errored-at"] = finished;
  if (status === "canceled") timestamps["canceled-at"] = finished;
  return timestamps;
}

/** Who approved the run (a user or a token's principal), when it was approved by someone. */
export function confirmedBy(timeline: RunTimeline | undefined): string | null {
  return timeline?.review?.decision === "approved" ? timeline.review.actorId : null;
}

/** A run's plan-phase `status-timestamps`: queued when the run was created. */
export function planStatusTimestamps(run: Run, timeline?: RunTimeline): Record<string, string> {
  return phaseStatusTimestamps(
    tfePlanStatus(run),
    run.createdAt,
    phaseAttempts(timeline, "plan"),
    endedAt(run, timeline),
  );
}

/** A run's apply-phase `status-timestamps`: queued when it was approved; none when the apply is unreachable. */
export function applyStatusTimestamps(run: Run, timeline?: RunTimeline): Record<string, string> {
  const status = tfeApplyStatus(run);
  if (status === "unreachable") return {};
  const approvedAt = timeline?.review?.decision === "approved" ? timeline.review.decidedAt : undefined;
  return phaseStatusTimestamps(status, approvedAt, phaseAttempts(timeline, "apply"), endedAt(run, timeline));
}
