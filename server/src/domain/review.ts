import type { RunArtifactKind } from "./artifacts.ts";
import type { Permission, PrincipalLike } from "./authorization.ts";
import type { EnforcementLevel } from "./policy/index.ts";
import type { RunAttempt, RunJob, RunReview as ReviewDecision, Run } from "./records.ts";
import { awaitsDecision, isCancelable, type PolicyOutcome, type RunReason } from "./run-lifecycle.ts";
import { isTerminalRunStatus } from "./run.ts";

/**
 * The facts of the run review (GET /v1/runs/{run_id}/review), derived purely from persisted
 * records: what each stage's status is, which actions a caller may take, which downloads exist.
 * Nothing here reads a clock, a store or a sandbox, and nothing here knows the wire shape: the
 * handler loads the records, api/v1/review-presenter.ts turns these facts into the document. A
 * fact that was not recorded comes out as null beside an explicit state; nothing is inferred from
 * the top-level status that a record should have said (ARCHITECTURE.md, invariant 7).
 */

/** The status of one review stage (plan, policy, approval, apply). */
export type ReviewStageStatus = "pending" | "running" | "succeeded" | "failed" | "skipped" | "waiting";
/** An action the review offers its caller. */
export type ReviewAction = "approve" | "discard" | "cancel" | "override" | "recover";
/** Where the approval stands: a recorded decision, awaiting one, or why there is none. */
export type ApprovalState = ReviewDecision["decision"] | "awaiting" | "not_required" | "not_reached" | "not_recorded";
/** A download the review can offer. */
export type ReviewDownloadKind = "redacted_plan" | "raw_plan" | "emergency_state";

/** The terminal reason codes the review explains: every lifecycle reason plus the pipeline's plan_credentials_required. */
export type TerminalReasonCode = RunReason | "plan_credentials_required";

/** One human sentence per terminal reason code: the only place these sentences live. */
export const TERMINAL_REASON_SENTENCES: Readonly<Record<TerminalReasonCode, string>> = {
  plan_failed: "The plan failed, so there is nothing to review or apply.",
  plan_canceled: "The run was canceled while it was planning.",
  no_changes: "The plan found no changes and passed policy, so there was nothing to apply.",
  speculative: "This speculative plan finished; speculative runs are never applied.",
  policy_hard_failed: "A hard-mandatory policy failed, so this plan cannot be applied.",
  policy_errored: "The policy check could not be completed, which blocks the run like a hard failure.",
  discarded: "A reviewer discarded the plan; nothing was applied.",
  canceled: "The run was canceled before anything was applied.",
  approval_expired: "No decision was made before the approval window closed, so the run expired without applying.",
  applied: "The plan was applied and its state was published.",
  apply_failed: "The apply failed and published no state.",
  apply_interrupted: "The apply was interrupted; an operator must decide whether the infrastructure changed.",
  apply_uncertain: "The apply ended uncertainly; an operator must decide whether the infrastructure changed.",
  recovered: "An operator resolved this run's interrupted or uncertain apply.",
  sandbox_memory_limit:
    "The plan or apply used more memory than its sandbox allows, so StackShip stopped it (STACKSHIP_SANDBOX_MEMORY_MB).",
  sandbox_process_limit:
    "The plan or apply started more processes and threads than its sandbox allows, so StackShip stopped it (STACKSHIP_SANDBOX_PROCESSES).",
  sandbox_file_size_limit:
    "The plan or apply wrote a file larger than its sandbox allows, so it failed (STACKSHIP_SANDBOX_FILE_SIZE_MB).",
  sandbox_disk_limit:
    "The plan or apply wrote more to its work directory than its sandbox allows, so it failed (STACKSHIP_SANDBOX_DISK_MB).",
  sandbox_cpu_limit:
    "The plan or apply used more CPU time than its sandbox allows, so StackShip stopped it (STACKSHIP_SANDBOX_CPU_SECONDS).",
  plan_credentials_required:
    "The plan could not start because the workspace has no cloud credentials it may use for this run.",
};

/** Guidance for the two blocked terminal states, shown where the approval bar would be. */
export const TERMINAL_GUIDANCE = {
  plan_credentials_required: {
    sentence: "Set up the workspace's cloud access, then start a new run.",
    target: "workspace_cloud_access",
  },
  expired: {
    sentence: "A new run starts from a push to the tracked branch or from the CLI.",
    target: "workspace_source_settings",
  },
} as const;

/** The most log lines a failed run's terminal panel shows. */
export const TERMINAL_LOG_TAIL_LINES = 8;

/** The permissions that hand out a download; a caller holding none of them anywhere never sees a downloads section. */
const DOWNLOAD_PERMISSIONS = ["artifact:read", "artifact:read_sensitive", "state:recover", "org:admin"] as const;

/** A persisted policy result as the review reads it. */
export interface ReviewPolicyEvaluation {
  outcome: PolicyOutcome;
  resultDigest: string;
  opaVersion: string | null;
  opaBuildCommit: string | null;
  evaluatedAt: string;
}

/** A persisted finding as the review reads it (only its text leaves). */
export interface ReviewPolicyFinding {
  title: string;
  message: string;
  address: string | null;
  enforcementLevel: EnforcementLevel;
}

/** A persisted policy override as the review reads it. */
export interface ReviewPolicyOverride {
  id: string;
  resultDigest: string;
  reason: string;
  actorId: string | null;
  createdAt: string;
  expiresAt: string;
}

/** A state version this run created, as the review reads it. */
export interface ReviewStateVersion {
  id: string;
  serial: number;
  sha256: string | null;
  status: "pending" | "finalized" | "discarded";
  publishedAt: string | null;
  /** Whether its bytes arrived (stored object, digest and size recorded). */
  uploaded: boolean;
}

/** The commit facts of a run, when its source recorded them (GitHub runs). */
export interface ReviewCommit {
  sha: string | null;
  ref: string | null;
  message: string | null;
  author: string | null;
  /** The commit's web page, when the repository and SHA were recorded (see `commitWebUrl`). */
  url: string | null;
}

/** Everything the review is derived from. */
export interface ReviewRecords {
  run: Run;
  /** The run's workspace; null when its record could not be found. */
  workspace: { id: string; name: string; workingDirectory: string } | null;
  commit: ReviewCommit | null;
  attempts: readonly RunAttempt[];
  jobs: readonly RunJob[];
  decision: ReviewDecision | null;
  evaluation: ReviewPolicyEvaluation | null;
  findings: readonly ReviewPolicyFinding[];
  overrides: readonly ReviewPolicyOverride[];
  overridesTruncated: boolean;
  /** The state versions whose run is this run (any status). */
  stateVersions: readonly ReviewStateVersion[];
  /** Display names of the actors named by the decision and overrides, by actor id. */
  displayNames: ReadonlyMap<string, string>;
  /** The failed phase's last log lines, read only when `failedPhase(run)` named a phase. */
  logTail: { phase: "plan" | "apply"; lines: readonly string[] } | null;
  /** The artifacts the run has published (commands/run-artifacts.ts publishedRunArtifacts). */
  artifacts: readonly RunArtifactKind[];
}

/** Who is asking, as far as the review needs it. */
export interface ReviewCaller {
  /** Whether the caller holds `permission` on this run. */
  may(permission: Permission): boolean;
  /** Whether the caller holds any download permission at all (anywhere). */
  mayDownloadSomewhere: boolean;
}

/** Whether a principal holds any permission that could ever hand it a download. */
export function holdsAnyDownloadPermission(principal: PrincipalLike): boolean {
  if (principal.siteAdmin) return true;
  return principal.grants.some((grant) => (DOWNLOAD_PERMISSIONS as readonly string[]).includes(grant.permission));
}

/**
 * The phase whose log tail a terminal run's panel shows: only for a run that ended errored
 * because its plan or its apply failed. Null otherwise (and then no log is read at all).
 */
export function failedPhase(run: Run): "plan" | "apply" | null {
  if (run.status !== "errored") return null;
  if (run.execution.planStatus === "errored") return "plan";
  if (run.execution.applyStatus === "errored" || run.execution.applyStatus === "interrupted") return "apply";
  return null;
}

/**
 * The run's title: its own message, or a server-generated one for a trigger that recorded none.
 * A GitHub run's message is the one the pipeline generated (`GitHub <commit-sha>`), so it counts as generated.
 */
export function reviewTitle(
  run: Pick<Run, "message" | "source">,
  commitSha: string | null,
): { title: string; generated: boolean } {
  const github = run.source === "github_push" || run.source === "github_pull_request";
  if (run.message.trim() !== "")
    return { title: run.message, generated: github && commitSha !== null && run.message === `GitHub ${commitSha}` };
  switch (run.source) {
    case "github_push":
    case "github_pull_request":
      return { title: commitSha ? `GitHub ${commitSha}` : "GitHub", generated: true };
    case "cli":
      return { title: "OpenTofu CLI run", generated: true };
    default:
      return { title: "API run", generated: true };
  }
}

export function first<T>(items: readonly T[]): T | undefined {
  return items[0];
}

export function last<T>(items: readonly T[]): T | undefined {
  return items[items.length - 1];
}

export function earliest(times: readonly (string | null)[]): string | null {
  const known = times.filter((t): t is string => t !== null).sort();
  return first(known) ?? null;
}

/** The unexpired override of the run's current policy result digest that expires last, if any. */
export function activeOverride(records: ReviewRecords, now: Date): ReviewPolicyOverride | undefined {
  const digest = records.run.execution.policyResultDigest;
  if (digest === null) return undefined;
  return records.overrides
    .filter((o) => o.resultDigest === digest && Date.parse(o.expiresAt) > now.getTime())
    .sort((a, b) => (a.expiresAt < b.expiresAt ? 1 : a.expiresAt > b.expiresAt ? -1 : 0))[0];
}

/** Whether the run waits on a soft policy failure (an override may still let it through). */
export function waitsOnSoftFailure(run: Run): boolean {
  return (
    run.execution.policyOutcome === "soft_failed" &&
    (run.status === "policy_soft_failed" || run.status === "awaiting_approval")
  );
}

/** The actions this caller may take now: the caller's permissions intersected with the run's state. */
export function availableActions(records: ReviewRecords, caller: ReviewCaller, now: Date): ReviewAction[] {
  const { run } = records;
  const x = run.execution;
  const actions: ReviewAction[] = [];
  const windowOpen = x.approvalExpiresAt === null || Date.parse(x.approvalExpiresAt) > now.getTime();
  const policyAllows =
    x.policyOutcome === "skipped" ||
    x.policyOutcome === "passed" ||
    (x.policyOutcome === "soft_failed" && activeOverride(records, now) !== undefined);
  if (
    caller.may("run:approve") &&
    run.status === "awaiting_approval" &&
    windowOpen &&
    policyAllows &&
    x.planDigest !== null
  )
    actions.push("approve");
  if (caller.may("run:approve") && awaitsDecision(run.status)) actions.push("discard");
  if (
    caller.may("run:cancel") &&
    (isCancelable(run.status) || (run.status === "applying" && x.cancelRequestedAt === null))
  )
    actions.push("cancel");
  if (caller.may("policy:override_soft") && waitsOnSoftFailure(run) && x.policyResultDigest !== null)
    actions.push("override");
  if (caller.may("run:recover") && run.status === "needs_recovery") actions.push("recover");
  return actions;
}

/** The plan stage's status. */
export function planStageStatus(records: ReviewRecords): ReviewStageStatus {
  const x = records.run.execution;
  switch (x.planStatus) {
    case "pending":
      return "pending";
    case "running":
      return "running";
    case "finished":
      return "succeeded";
    case "errored":
      return "failed";
    case "canceled":
      // Stopped mid-plan is a failure of the stage; canceled before any attempt, it never ran.
      return records.attempts.some((a) => a.phase === "plan") ? "failed" : "skipped";
  }
}

/** The policy stage's outcome (recorded on the run, else on the evaluation) and status. */
export function policyStageStatus(records: ReviewRecords): {
  outcome: PolicyOutcome | null;
  status: ReviewStageStatus;
} {
  const { run, evaluation } = records;
  const x = run.execution;
  const outcome = x.policyOutcome ?? evaluation?.outcome ?? null;
  switch (outcome) {
    case null:
      if (x.planStatus === "pending" || x.planStatus === "running") return { outcome, status: "pending" };
      if (x.planStatus === "finished" && run.status === "policy_checking") return { outcome, status: "running" };
      return { outcome, status: "skipped" };
    case "skipped":
      return { outcome, status: "skipped" };
    case "passed":
      return { outcome, status: "succeeded" };
    case "soft_failed":
      // Waiting on an override; once one was recorded the stage let the run through.
      return {
        outcome,
        status: run.status === "policy_soft_failed" ? "waiting" : records.overrides.length > 0 ? "succeeded" : "failed",
      };
    case "hard_failed":
    case "errored":
      return { outcome, status: "failed" };
  }
}

/** The approval stage: its state, its status, and whether the run ever reached approval. */
export function approvalStageStatus(records: ReviewRecords): {
  state: ApprovalState;
  status: ReviewStageStatus;
  reached: boolean;
} {
  const { run, decision } = records;
  const x = run.execution;
  // The approval window is opened (recorded) exactly when a plan became approvable.
  const reached = x.approvalExpiresAt !== null || decision?.decision === "approved";
  let state: ApprovalState;
  if (decision) state = decision.decision;
  else if (awaitsDecision(run.status)) state = "awaiting";
  else if (run.kind === "speculative" || run.status === "planned_and_finished") state = "not_required";
  else if (
    reached ||
    run.status === "discarded" ||
    run.status === "expired" ||
    run.status === "applying" ||
    run.status === "applied" ||
    run.status === "needs_recovery"
  )
    state = "not_recorded";
  else state = "not_reached";
  const status = ((): ReviewStageStatus => {
    switch (state) {
      case "awaiting":
        return run.status === "awaiting_approval" ? "waiting" : "pending";
      case "approved":
        return "succeeded";
      case "discarded":
      case "expired":
        return "failed";
      case "canceled":
        return reached ? "failed" : "skipped";
      case "not_required":
        return "skipped";
      case "not_reached":
      case "not_recorded":
        return isTerminalRunStatus(run.status) ? "skipped" : "pending";
    }
  })();
  return { state, status, reached };
}

/** The apply stage's status. */
export function applyStageStatus(records: ReviewRecords): ReviewStageStatus {
  const { run } = records;
  switch (run.execution.applyStatus) {
    case "pending":
      return run.kind === "speculative" || isTerminalRunStatus(run.status) ? "skipped" : "pending";
    case "running":
      return "running";
    case "finished":
      return "succeeded";
    case "errored":
    case "interrupted":
    case "canceled":
      return "failed";
  }
}

/** The state version the apply committed, or why there is none to show. */
export function committedStateVersion(
  records: ReviewRecords,
):
  | { state: "committed"; version: ReviewStateVersion & { publishedAt: string } }
  | { state: "unavailable" | "not_recorded" } {
  const committed = records.stateVersions.find((v) => v.status === "finalized");
  if (committed && committed.publishedAt !== null)
    return { state: "committed", version: { ...committed, publishedAt: committed.publishedAt } };
  // The apply says it finished (or a version says it is committed) but its record does not resolve.
  if (committed || records.run.execution.applyStatus === "finished") return { state: "unavailable" };
  return { state: "not_recorded" };
}

/** Why a finished run ended: null while it has not, `not_recorded` when no reason was written. */
export function terminalReasonOf(
  records: ReviewRecords,
):
  | null
  | { state: "not_recorded" }
  | { state: "recorded"; code: TerminalReasonCode; guidance: keyof typeof TERMINAL_GUIDANCE | null } {
  const { run } = records;
  if (!isTerminalRunStatus(run.status) && run.status !== "needs_recovery") return null;
  const code: TerminalReasonCode | null =
    run.execution.statusReason ?? (run.status === "plan_credentials_required" ? "plan_credentials_required" : null);
  if (code === null) return { state: "not_recorded" };
  const guidance =
    run.status === "plan_credentials_required"
      ? "plan_credentials_required"
      : run.status === "expired"
        ? "expired"
        : null;
  return { state: "recorded", code, guidance };
}

/**
 * The downloads this caller may take from this run, each with whether its bytes exist; `hidden`
 * when the caller holds no download permission anywhere, `not_permitted` when only elsewhere.
 */
export function reviewDownloads(
  records: ReviewRecords,
  caller: ReviewCaller,
):
  | { state: "permitted"; items: { kind: ReviewDownloadKind; available: boolean }[] }
  | { state: "not_permitted" | "hidden" } {
  const items: { kind: ReviewDownloadKind; available: boolean }[] = [];
  if (caller.may("artifact:read")) {
    items.push({ kind: "redacted_plan", available: records.artifacts.includes("plan_diff") });
  }
  if (caller.may("artifact:read_sensitive")) {
    items.push({ kind: "raw_plan", available: records.artifacts.includes("plan_json") });
  }
  // Emergency state needs state:recover itself; run:recover alone never hands out state bytes.
  // What the endpoint serves: any state version this run uploaded bytes for (pending first, then
  // committed, then one a recovery discarded).
  if (caller.may("state:recover"))
    items.push({ kind: "emergency_state", available: records.stateVersions.some((v) => v.uploaded) });
  if (items.length > 0) return { state: "permitted", items };
  return { state: caller.mayDownloadSomewhere ? "not_permitted" : "hidden" };
}
