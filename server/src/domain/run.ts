import { DomainError } from "./errors.ts";

/** The kinds of run StackShip creates. */
export const RUN_KINDS = ["plan_and_apply", "speculative"] as const;
/** A run kind. */
export type RunKind = (typeof RUN_KINDS)[number];

/** Statuses a run never leaves. */
export const TERMINAL_RUN_STATUSES = [
  "applied",
  "planned_and_finished",
  "discarded",
  "canceled",
  "errored",
  "expired",
  "plan_credentials_required",
] as const;

/** Every status a run can be in (a closed set), the terminal ones among them. */
export const RUN_STATUSES = [
  "pending",
  "planning",
  "policy_checking",
  "policy_soft_failed",
  "awaiting_approval",
  "applying",
  ...TERMINAL_RUN_STATUSES,
  "needs_recovery",
] as const;
/** A run status. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Statuses of a run's plan phase. */
export const PLAN_PHASE_STATUSES = ["pending", "running", "finished", "errored", "canceled"] as const;
/** A plan phase status. */
export type PlanPhaseStatus = (typeof PLAN_PHASE_STATUSES)[number];

/** Statuses of a run's apply phase. */
export const APPLY_PHASE_STATUSES = [...PLAN_PHASE_STATUSES, "interrupted"] as const;
/** An apply phase status. */
export type ApplyPhaseStatus = (typeof APPLY_PHASE_STATUSES)[number];

const TERMINAL = new Set<string>(TERMINAL_RUN_STATUSES);

/** Whether `value` is one of the strings of a closed set. */
function isOneOf<T extends string>(set: readonly T[], value: unknown): value is T {
  return typeof value === "string" && (set as readonly string[]).includes(value);
}

/** Whether `value` is one of RUN_KINDS. */
export const isRunKind = (value: unknown): value is RunKind => isOneOf(RUN_KINDS, value);

/** Whether `value` is one of RUN_STATUSES. */
export const isRunStatus = (value: unknown): value is RunStatus => isOneOf(RUN_STATUSES, value);

/**
 * Whether a run in this status is finished for good.
 * `needs_recovery` is not terminal: an operator still has to resolve it.
 */
export function isTerminalRunStatus(status: RunStatus): boolean {
  return TERMINAL.has(status);
}

/** What a caller asks for when creating a run; the flags exist only to be refused. */
export interface RunCreationRequest {
  kind: RunKind;
  autoApply?: unknown;
  isDestroy?: unknown;
  message?: string;
}

/** Detail of RUN_AUTO_APPLY_FORBIDDEN. */
export const AUTO_APPLY_FORBIDDEN_DETAIL =
  "StackShip never applies without an explicit human approval bound to the reviewed plan. Create the run without auto_apply, then approve it.";
/** Detail of RUN_DESTROY_FORBIDDEN. */
export const DESTROY_FORBIDDEN_DETAIL =
  "Destroy-mode runs are not supported. Remove the resources from the configuration and apply an ordinary plan instead.";

/**
 * Refuses a run creation request before anything is written: auto-apply and destroy mode are
 * allowed only when absent or exactly `false`, and the kind must be known.
 * The input is treated as untyped because a stale internal caller may pass anything.
 * The errors carry no `source`: the wire name of each field differs between v1 and tfe.
 */
export function assertRunCreationAllowed(request: { autoApply?: unknown; isDestroy?: unknown; kind: unknown }): void {
  const raw: Record<string, unknown> = typeof request === "object" && request !== null ? request : {};
  if (!isAbsentOrFalse(raw.autoApply)) {
    throw new DomainError("RUN_AUTO_APPLY_FORBIDDEN", AUTO_APPLY_FORBIDDEN_DETAIL);
  }
  if (!isAbsentOrFalse(raw.isDestroy)) {
    throw new DomainError("RUN_DESTROY_FORBIDDEN", DESTROY_FORBIDDEN_DETAIL);
  }
  if (!isRunKind(raw.kind)) {
    throw new DomainError("DOCUMENT_INVALID", `Unknown run kind; expected one of ${RUN_KINDS.join(", ")}.`);
  }
}

function isAbsentOrFalse(value: unknown): boolean {
  return value === undefined || value === false;
}
