// The closed sets the dashboard renders, checked against the generated types in both directions:
// adding a value to the spec without adding it here fails the type check, and a value a response
// carries that is not listed here makes the response a contract error (an explicit error state,
// never a guess).
import type { Run } from "@stackship/client";

type RunStatus = Run["attributes"]["status"];
type Exhaustive<Listed, All> = [Exclude<All, Listed>] extends [never] ? true : { missing: Exclude<All, Listed> };

const TERMINAL = [
  "applied",
  "planned_and_finished",
  "discarded",
  "canceled",
  "errored",
  "expired",
  "plan_credentials_required",
] as const;

export const RUN_STATUSES = [
  "pending",
  "planning",
  "policy_checking",
  "policy_soft_failed",
  "awaiting_approval",
  "applying",
  ...TERMINAL,
  "needs_recovery",
] as const satisfies readonly RunStatus[];
const runStatusesComplete: Exhaustive<(typeof RUN_STATUSES)[number], RunStatus> = true;
void runStatusesComplete;

/** Statuses a run does not leave on its own (the runs page stops re-reading when only these are listed). */
export const TERMINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>(TERMINAL);

/** A run in a terminal status never changes again on its own: no polling, final durations. */
export function isTerminal(status: string): boolean {
  return (TERMINAL_RUN_STATUSES as ReadonlySet<string>).has(status);
}

export type Intent = "info" | "attention" | "success" | "danger" | "neutral";

/** How each run status is worded and coloured (text always carries the state, colour only repeats it). */
export const RUN_STATUS_LABELS: Record<RunStatus, { label: string; intent: Intent }> = {
  pending: { label: "Pending", intent: "info" },
  planning: { label: "Planning", intent: "info" },
  policy_checking: { label: "Checking policy", intent: "info" },
  policy_soft_failed: { label: "Policy soft-failed", intent: "attention" },
  awaiting_approval: { label: "Awaiting approval", intent: "attention" },
  applying: { label: "Applying", intent: "info" },
  applied: { label: "Applied", intent: "success" },
  planned_and_finished: { label: "Planned and finished", intent: "success" },
  discarded: { label: "Discarded", intent: "neutral" },
  canceled: { label: "Canceled", intent: "attention" },
  errored: { label: "Errored", intent: "danger" },
  expired: { label: "Expired", intent: "attention" },
  plan_credentials_required: { label: "Plan credentials required", intent: "attention" },
  needs_recovery: { label: "Needs recovery", intent: "danger" },
};

/** Statuses that wait on a person: an approval, a soft-failed policy's override, an interrupted apply's recovery. */
export const ATTENTION_STATUSES = [
  "awaiting_approval",
  "policy_soft_failed",
  "needs_recovery",
] as const satisfies readonly RunStatus[];

export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === "string" && (RUN_STATUSES as readonly string[]).includes(value);
}

/** A response the contract does not allow. */
export class ContractError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = "ContractError";
  }
}

/** Checks the fields of a run the dashboard renders; throws ContractError naming the first value outside its set. */
export function checkRun(run: Run): Run {
  const a = run?.attributes;
  if (!a || typeof run.id !== "string") throw new ContractError("A run in the response has no id or attributes.");
  if (!isRunStatus(a.status))
    throw new ContractError(
      `Run ${run.id} has the status “${String(a.status)}”, which is not one of the statuses StackShip defines.`,
    );
  if (typeof a.created_at !== "string" || Number.isNaN(Date.parse(a.created_at)))
    throw new ContractError(`Run ${run.id} has no valid creation time.`);
  if (a.finished_at !== null && (typeof a.finished_at !== "string" || Number.isNaN(Date.parse(a.finished_at))))
    throw new ContractError(`Run ${run.id} has an invalid finish time.`);
  if (typeof run.relationships?.workspace?.data?.id !== "string")
    throw new ContractError(`Run ${run.id} names no workspace.`);
  if (!Object.hasOwn(RUN_SOURCE_LABELS, a.source))
    throw new ContractError(`Run ${run.id} has the source “${String(a.source)}”, which StackShip does not define.`);
  return run;
}

type RunSource = Run["attributes"]["source"];

/** How each run source is worded (exhaustive over the generated union). */
export const RUN_SOURCE_LABELS: Record<RunSource, string> = {
  api: "API",
  cli: "CLI",
  github_push: "GitHub push",
  github_pull_request: "GitHub pull request",
};

/** "GitHub push abc1234" for a run with a commit (checkRun has checked its source); null when it records none. */
export function commitLine(run: Run): { text: string; title: string } | null {
  const { commit, source } = run.attributes;
  if (!commit) return null;
  const label = RUN_SOURCE_LABELS[source] ?? source;
  return {
    text: `${label}${commit.fork ? " (fork)" : ""} ${commit.sha.slice(0, 7)}`,
    title: `${commit.repository} ${commit.ref} ${commit.sha}`,
  };
}
