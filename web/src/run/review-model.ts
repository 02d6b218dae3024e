/**
 * The closed sets the run page switches on, and the small pure helpers over a review document.
 * Every switch over a server value goes through `known()`: a value outside the set is rendered
 * as an explicit error state by the caller, never mapped to the nearest known one.
 */
import type { RunReview, PlanDiffResource } from "@stackship/client";
import { isTerminal, RUN_STATUSES, RUN_STATUS_LABELS as APP_STATUS_LABELS } from "../app/closed-sets.ts";

export type Review = RunReview;
export type ReviewAttributes = RunReview["attributes"];
export type Header = ReviewAttributes["header"];
export type Stages = ReviewAttributes["stages"];
export type PlanStage = Stages["plan"];
export type PolicyStage = Stages["policy"];
export type ApprovalStage = Stages["approval"];
export type ApplyStage = Stages["apply"];
export type TerminalReason = NonNullable<ReviewAttributes["terminal_reason"]>;
export type Recovery = NonNullable<ReviewAttributes["recovery"]>;
export type Downloads = ReviewAttributes["downloads"];
export type DownloadItem = Extract<NonNullable<Downloads>, { state: "permitted" }>["items"][number];
export type Action = ReviewAttributes["available_actions"][number];
export type { PlanDiffResource };

export const PLAN_PHASE_STATUSES = [
  "pending",
  "running",
  "finished",
  "errored",
  "canceled",
] as const satisfies readonly PlanStage["phase_status"][];
/** The plan's phase statuses and the one only an apply reaches. */
export const APPLY_PHASE_STATUSES = [
  ...PLAN_PHASE_STATUSES,
  "interrupted",
] as const satisfies readonly ApplyStage["phase_status"][];
export const STAGE_STATUSES = [
  "pending",
  "running",
  "succeeded",
  "failed",
  "skipped",
  "waiting",
] as const satisfies readonly PlanStage["status"][];
/** The run statuses, their words and the terminal ones: one list for the whole dashboard (app/closed-sets.ts). */
export { isTerminal, RUN_STATUSES };
export const RUN_KINDS = ["plan_and_apply", "speculative"] as const satisfies readonly Header["kind"][];
export const APPROVAL_STATES = [
  "not_reached",
  "not_required",
  "awaiting",
  "approved",
  "discarded",
  "expired",
  "canceled",
  "not_recorded",
] as const satisfies readonly ApprovalStage["state"][];
export const PLAN_CHANGE_ACTIONS = [
  "create",
  "update",
  "delete",
  "replace",
  "forget",
  "forget_replace",
  "unknown",
] as const satisfies readonly PlanDiffResource["action"][];

// Each list above names every value the generated types allow (and, by `satisfies`, nothing else):
// a value added to the spec fails this type check until the page knows how to show it.
type Exhaustive<Listed, All> = [Exclude<All, Listed>] extends [never] ? true : { missing: Exclude<All, Listed> };
const complete: [
  Exhaustive<(typeof PLAN_PHASE_STATUSES)[number], PlanStage["phase_status"]>,
  Exhaustive<(typeof APPLY_PHASE_STATUSES)[number], ApplyStage["phase_status"]>,
  Exhaustive<(typeof STAGE_STATUSES)[number], PlanStage["status"]>,
  Exhaustive<(typeof RUN_KINDS)[number], Header["kind"]>,
  Exhaustive<(typeof APPROVAL_STATES)[number], ApprovalStage["state"]>,
  Exhaustive<(typeof PLAN_CHANGE_ACTIONS)[number], PlanDiffResource["action"]>,
] = [true, true, true, true, true, true];
void complete;

export type PhaseStatus = (typeof APPLY_PHASE_STATUSES)[number];
export type StageStatus = (typeof STAGE_STATUSES)[number];
export type RunStatus = (typeof RUN_STATUSES)[number];
export type PlanChangeAction = (typeof PLAN_CHANGE_ACTIONS)[number];

/** Narrows `value` to the closed set, or returns null for anything outside it (rendered as an error by the caller). */
export function known<const T extends readonly string[]>(set: T, value: unknown): T[number] | null {
  return typeof value === "string" && (set as readonly string[]).includes(value) ? value : null;
}

/** Human words for a run status. */
export const RUN_STATUS_LABELS = Object.fromEntries(
  RUN_STATUSES.map((status) => [status, APP_STATUS_LABELS[status].label]),
) as Record<RunStatus, string>;

/** The tone of a run status badge. */
export type Tone = "info" | "success" | "attention" | "danger" | "neutral";
export const RUN_STATUS_TONES = Object.fromEntries(
  RUN_STATUSES.map((status) => [status, APP_STATUS_LABELS[status].intent]),
) as Record<RunStatus, Tone>;

/** Phase badge tones, exactly as the product description assigns them. */
export const PHASE_TONES: Record<PhaseStatus, Tone> = {
  pending: "info",
  running: "info",
  finished: "success",
  canceled: "attention",
  errored: "danger",
  interrupted: "danger",
};

export const STAGE_STATUS_LABELS: Record<StageStatus, string> = {
  pending: "Pending",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
  skipped: "Skipped",
  waiting: "Waiting",
};

export const STAGE_TONES: Record<StageStatus, Tone> = {
  pending: "neutral",
  running: "info",
  succeeded: "success",
  failed: "danger",
  skipped: "neutral",
  waiting: "attention",
};

export const ACTION_LABELS: Record<PlanChangeAction, string> = {
  create: "create",
  update: "update",
  delete: "delete",
  replace: "replace",
  forget: "forget",
  forget_replace: "forget and replace",
  unknown: "unrecognized",
};

/** "3 to create, 1 to change, 2 to destroy" */
export function countsSentence(counts: { create: number; change: number; destroy: number }): string {
  return `${counts.create} to create, ${counts.change} to change, ${counts.destroy} to destroy`;
}

/** `1 h 02 min`, `4 min 05 s`, `12 s`, `<1 s` for a span in milliseconds (never negative). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return "<1 s";
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, "0")} min`;
  if (m > 0) return `${m} min ${String(s).padStart(2, "0")} s`;
  return `${s} s`;
}

/** The span from `start` to `end`, or to `now` while `end` is null; null when `start` is not recorded. */
export function spanMs(start: string | null, end: string | null, now: number): number | null {
  if (start === null) return null;
  const from = Date.parse(start);
  const to = end === null ? now : Date.parse(end);
  return Number.isNaN(from) || Number.isNaN(to) ? null : to - from;
}

/** `2026-12-03 11:40:15 UTC` */
export function formatUtc(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** The leading fact of the approval stage ("Approved by Avery", "Awaiting a decision", ...). */
export function approvalHeadline(
  stage: ApprovalStage,
): { verb: string; who: { name: string | null; id: string } | null } | null {
  const who = stage.decided_by ? { name: stage.decided_by.display_name, id: stage.decided_by.actor_id } : null;
  switch (known(APPROVAL_STATES, stage.state)) {
    case "awaiting":
      return { verb: "Awaiting a decision", who: null };
    case "approved":
      return { verb: who ? "Approved by" : "Approved (who approved was not recorded)", who };
    case "discarded":
      return { verb: who ? "Discarded by" : "Discarded (who discarded was not recorded)", who };
    case "canceled":
      return { verb: who ? "Canceled by" : "Canceled (who canceled was not recorded)", who };
    case "expired":
      return { verb: "Expired without a decision", who: null };
    case "not_reached":
      return { verb: "Not reached", who: null };
    case "not_required":
      return { verb: "No approval needed", who: null };
    case "not_recorded":
      return { verb: "The decision was not recorded", who: null };
    case null:
      return null;
  }
}
