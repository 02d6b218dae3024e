import { DomainError } from "./errors.ts";
import {
  isTerminalRunStatus,
  type ApplyPhaseStatus,
  type PlanPhaseStatus,
  type RunKind,
  type RunStatus,
} from "./run.ts";

/**
 * The run state machine: one pure function from (run, event) to the next status. Every status
 * change of a run goes through `transition`; see RUN-LIFECYCLE.md beside this file for the
 * prose version and the reasons behind each edge.
 */

/**
 * A limit of a phase's sandbox that stopped its plan or apply (the attempt's terminal
 * classification too). A plan stopped this way ends errored; an apply still goes to
 * needs_recovery, since the provider may have changed something before it was stopped.
 */
export const SANDBOX_LIMIT_REASONS = [
  "sandbox_memory_limit",
  "sandbox_process_limit",
  "sandbox_file_size_limit",
  "sandbox_disk_limit",
  "sandbox_cpu_limit",
] as const;
export type SandboxLimitReason = (typeof SANDBOX_LIMIT_REASONS)[number];

/** Why a run ended (or stopped) where it did; recorded with terminal and recovery statuses. */
export const RUN_REASONS = [
  "plan_failed",
  "plan_canceled",
  "no_changes",
  "speculative",
  "policy_hard_failed",
  "policy_errored",
  "discarded",
  "canceled",
  "approval_expired",
  "applied",
  "apply_failed",
  "apply_interrupted",
  "apply_uncertain",
  "recovered",
  "plan_credentials_required",
  ...SANDBOX_LIMIT_REASONS,
] as const;
/** A reason code. */
export type RunReason = (typeof RUN_REASONS)[number];

/** The outcome of the policy stage as the lifecycle needs it. */
export type PolicyOutcome = "skipped" | "passed" | "soft_failed" | "hard_failed" | "errored";

/** Something that happened to a run. */
export type RunEvent =
  | { type: "plan_started" }
  /** The workspace requires a cloud credential for plans and this run may not have one. */
  | { type: "plan_credentials_unavailable" }
  | { type: "plan_finished"; hasChanges: boolean }
  | { type: "plan_failed"; limit?: SandboxLimitReason }
  /**
   * The runner holding the plan was lost (it stopped heartbeating): a plan changes nothing, so it
   * goes back to the queue and another runner plans it again from the start.
   */
  | { type: "plan_requeued" }
  | { type: "policy_evaluated"; outcome: PolicyOutcome }
  | { type: "policy_overridden" }
  | { type: "approved" }
  | { type: "discarded" }
  | { type: "approval_expired" }
  | { type: "cancel_requested" }
  | { type: "apply_started" }
  /** Someone asked to cancel while the apply runs: recorded, and the runner interrupts tofu; not a status change. */
  | { type: "apply_cancel_requested" }
  | { type: "apply_finished" }
  /** tofu exited non-zero and no state version was left pending: nothing was published. */
  | { type: "apply_failed"; limit?: SandboxLimitReason }
  /** The runner died, the sandbox was lost, the wall clock ran out, or a state version is pending. */
  | { type: "apply_uncertain"; interrupted: boolean; limit?: SandboxLimitReason }
  /** An operator resolved a recovery: committed the pending state version, or kept the current one. */
  | { type: "recovery_resolved"; stateCommitted: boolean };

/** The part of a run the lifecycle reads. */
export interface LifecycleRun {
  status: RunStatus;
  kind: RunKind;
  /** Known once the plan finished; null before. */
  hasChanges: boolean | null;
}

/** The result of a transition: the new status and, for an ending, its reason. */
export interface Transition {
  status: RunStatus;
  reason: RunReason | null;
}

function invalid(run: LifecycleRun, event: RunEvent): DomainError {
  return new DomainError("RUN_TRANSITION_INVALID", `A run that is ${run.status} cannot take '${event.type}'.`, {
    meta: { status: run.status, event: event.type },
  });
}

/** After the policy stage passed (or was skipped or overridden): finish, or wait for a human. */
function afterPolicyPassed(run: LifecycleRun): Transition {
  if (run.kind === "speculative") return { status: "planned_and_finished", reason: "speculative" };
  if (run.hasChanges === false) return { status: "planned_and_finished", reason: "no_changes" };
  return { status: "awaiting_approval", reason: null };
}

/** The next status of `run` after `event`, or RUN_TRANSITION_INVALID. */
export function transition(run: LifecycleRun, event: RunEvent): Transition {
  switch (run.status) {
    case "pending":
      if (event.type === "plan_started") return { status: "planning", reason: null };
      if (event.type === "plan_credentials_unavailable")
        return { status: "plan_credentials_required", reason: "plan_credentials_required" };
      if (event.type === "cancel_requested") return { status: "canceled", reason: "canceled" };
      break;
    case "planning":
      if (event.type === "plan_finished") return { status: "policy_checking", reason: null };
      if (event.type === "plan_failed") return { status: "errored", reason: event.limit ?? "plan_failed" };
      // A lost plan published nothing: it is planned again (never an apply: see apply_uncertain).
      if (event.type === "plan_requeued") return { status: "pending", reason: null };
      // The runner interrupts tofu and reports; a plan writes no state, so this is final.
      if (event.type === "cancel_requested") return { status: "canceled", reason: "plan_canceled" };
      break;
    case "policy_checking":
      if (event.type === "policy_evaluated") {
        switch (event.outcome) {
          case "skipped":
          case "passed":
            return afterPolicyPassed(run);
          case "soft_failed":
            return { status: "policy_soft_failed", reason: null };
          case "hard_failed":
            return { status: "errored", reason: "policy_hard_failed" };
          case "errored":
            // An OPA failure blocks like a hard failure; it is never a pass.
            return { status: "errored", reason: "policy_errored" };
        }
      }
      if (event.type === "cancel_requested") return { status: "canceled", reason: "canceled" };
      break;
    case "policy_soft_failed":
      if (event.type === "policy_overridden") return afterPolicyPassed(run);
      if (event.type === "discarded") return { status: "discarded", reason: "discarded" };
      if (event.type === "approval_expired") return { status: "expired", reason: "approval_expired" };
      if (event.type === "cancel_requested") return { status: "canceled", reason: "canceled" };
      break;
    case "awaiting_approval":
      if (event.type === "approved") return { status: "applying", reason: null };
      if (event.type === "discarded") return { status: "discarded", reason: "discarded" };
      if (event.type === "approval_expired") return { status: "expired", reason: "approval_expired" };
      if (event.type === "cancel_requested") return { status: "canceled", reason: "canceled" };
      break;
    case "applying":
      if (event.type === "apply_started") return { status: "applying", reason: null };
      if (event.type === "apply_cancel_requested") return { status: "applying", reason: null };
      if (event.type === "apply_finished") return { status: "applied", reason: "applied" };
      if (event.type === "apply_failed") return { status: "errored", reason: event.limit ?? "apply_failed" };
      // Never a guess: whatever the provider may have changed, an operator decides.
      if (event.type === "apply_uncertain")
        return {
          status: "needs_recovery",
          reason: event.limit ?? (event.interrupted ? "apply_interrupted" : "apply_uncertain"),
        };
      break;
    case "needs_recovery":
      if (event.type === "recovery_resolved")
        return { status: event.stateCommitted ? "applied" : "errored", reason: "recovered" };
      break;
    case "applied":
    case "planned_and_finished":
    case "discarded":
    case "canceled":
    case "errored":
    case "expired":
    case "plan_credentials_required":
      break;
    default: {
      const unreachable: never = run.status;
      throw new TypeError(`unknown run status ${String(unreachable)}`);
    }
  }
  throw invalid(run, event);
}

/** Whether a human decision (approve or discard) is what the run waits for. */
export function awaitsDecision(status: RunStatus): boolean {
  return status === "awaiting_approval" || status === "policy_soft_failed";
}

/** Whether the run may still be canceled. */
export function isCancelable(status: RunStatus): boolean {
  return status === "pending" || status === "planning" || status === "policy_checking" || awaitsDecision(status);
}

/** The part of a run `runChange` reads: the lifecycle's, and the phase statuses. */
export interface LifecycleRunState extends LifecycleRun {
  planStatus: PlanPhaseStatus;
  applyStatus: ApplyPhaseStatus;
}

/** What a change depends on besides the run and the event. */
export interface RunChangeContext {
  now: Date;
  /** How long a run that now waits for a human decision may wait (the workspace's approval TTL). */
  approvalTtlSeconds?: number;
}

/**
 * Every lifecycle column of a run a change writes. `undefined` leaves a column as it is; the
 * status is always written (compare-and-set on the status the change was computed from).
 */
export interface LifecyclePatch {
  status: RunStatus;
  statusReason?: RunReason;
  planStatus?: PlanPhaseStatus;
  applyStatus?: ApplyPhaseStatus;
  policyOutcome?: PolicyOutcome;
  approvalExpiresAt?: string | null;
  cancelRequestedAt?: string;
  finishedAt?: string;
}

/** One change of a run: the whole lifecycle patch, and the event it records (announced with it). */
export interface RunChange {
  event: RunEvent["type"];
  patch: LifecyclePatch;
}

/** The lifecycle columns, by their domain names (what only a RunChange may write). */
export const LIFECYCLE_FIELDS = [
  "status",
  "statusReason",
  "planStatus",
  "applyStatus",
  "policyOutcome",
  "approvalExpiresAt",
  "cancelRequestedAt",
  "finishedAt",
] as const satisfies readonly (keyof LifecyclePatch)[];

/**
 * The whole change `event` makes to `run`: the next status (through `transition`) and every
 * phase status, reason and time that goes with it, or RUN_TRANSITION_INVALID (nothing is
 * written then). Pure: the command in commands/run-transitions.ts persists the result.
 */
export function runChange(run: LifecycleRunState, event: RunEvent, context: RunChangeContext): RunChange {
  const next = transition(run, event);
  if (event.type === "apply_started" && run.applyStatus !== "pending") {
    throw new DomainError("RUN_TRANSITION_INVALID", `The apply of this run is already ${run.applyStatus}.`, {
      meta: { status: run.status, event: event.type },
    });
  }
  const now = context.now.toISOString();
  const patch: LifecyclePatch = { status: next.status };
  if (next.reason !== null) patch.statusReason = next.reason;
  const planStatus = PLAN_STATUS_AFTER[event.type];
  if (planStatus) patch.planStatus = planStatus;
  if (event.type === "cancel_requested") {
    patch.cancelRequestedAt = now;
    if (run.planStatus === "pending" || run.planStatus === "running") patch.planStatus = "canceled";
  }
  if (event.type === "apply_cancel_requested") patch.cancelRequestedAt = now;
  const applyStatus = applyStatusAfter(event);
  if (applyStatus) patch.applyStatus = applyStatus;
  if (event.type === "policy_evaluated") {
    patch.policyOutcome = event.outcome;
    if (awaitsDecision(next.status))
      patch.approvalExpiresAt = new Date(
        context.now.getTime() + (context.approvalTtlSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS) * 1000,
      ).toISOString();
    // Nothing is left to approve.
    if (next.status === "planned_and_finished") patch.approvalExpiresAt = null;
  }
  if (isTerminalRunStatus(next.status)) patch.finishedAt = now;
  return { event: event.type, patch };
}

/** How long a run waits for a decision when its workspace sets nothing else: one day. */
export const DEFAULT_APPROVAL_TTL_SECONDS = 86_400;

const PLAN_STATUS_AFTER: Partial<Record<RunEvent["type"], PlanPhaseStatus>> = {
  plan_started: "running",
  plan_finished: "finished",
  plan_failed: "errored",
  plan_requeued: "pending",
  plan_credentials_unavailable: "canceled",
};

function applyStatusAfter(event: RunEvent): ApplyPhaseStatus | undefined {
  switch (event.type) {
    case "apply_started":
      return "running";
    case "apply_finished":
      return "finished";
    case "apply_failed":
      return "errored";
    case "apply_uncertain":
      return event.interrupted ? "interrupted" : "errored";
    case "recovery_resolved":
      return event.stateCommitted ? "finished" : undefined;
    default:
      return undefined;
  }
}
