// The approval-binding rules: whether a reviewer's approval may be recorded for a run, given the
// facts read in the approval's transaction. Pure: the command reads the facts, this decides, and
// the first rule that fails is the refusal (so two callers never see different reasons).
import { DomainError } from "./errors.ts";
import type { Run } from "./records.ts";

/** What the approval of a soft policy failure found for the run's current result digest. */
export type OverrideFinding = "active" | "expired" | "none";

/** The facts an approval is decided on, all read in the approval's transaction. */
export interface ApprovalFacts {
  /** The run as read in the transaction (not as the caller last saw it). */
  run: Run;
  /** The plan digest the reviewer sent: the plan they saw. */
  sentPlanDigest: string;
  /** Whether the stored saved plan, plan JSON and plan changes are exactly what the plan phase recorded. */
  storedEvidenceAgrees: boolean;
  /** For a soft-failed run: whether an unexpired override covers its current result (ignored otherwise). */
  override: OverrideFinding;
  /** The digest of the workspace's current published state (null: none). */
  currentStateDigest: string | null;
  now: Date;
}

/**
 * The refusal of an approval, or null when it may be recorded. In order: the run awaits approval;
 * the sent plan digest is the run's; the stored evidence is what the plan recorded; the policy
 * result passed, was skipped, or soft-failed under an active override; the workspace state is the
 * one planned against; a dependency bundle was recorded; the approval window is open.
 */
export function approvalRefusal(facts: ApprovalFacts): DomainError | null {
  const { run, now } = facts;
  const x = run.execution;
  if (run.status !== "awaiting_approval") {
    return new DomainError(
      "RUN_TRANSITION_INVALID",
      `Run ${run.id} is ${run.status}; only a run awaiting approval can be approved.`,
    );
  }
  if (facts.sentPlanDigest !== x.planDigest) {
    return new DomainError(
      "RUN_PLAN_DIGEST_MISMATCH",
      `The plan digest sent (${facts.sentPlanDigest}) is not the digest of this run's plan (${x.planDigest}). Review the current plan and approve again.`,
      { source: { pointer: "/data/attributes/plan_digest" } },
    );
  }
  if (!facts.storedEvidenceAgrees) {
    return new DomainError(
      "RUN_PLAN_DIGEST_MISMATCH",
      `The stored evidence of run ${run.id} (its saved plan, plan JSON and plan changes) is not what its plan recorded. Start a new run.`,
    );
  }
  if (x.policyOutcome !== "skipped" && x.policyOutcome !== "passed" && x.policyOutcome !== "soft_failed") {
    return new DomainError(
      "RUN_POLICY_RESULT_CHANGED",
      `Run ${run.id} has no passing policy result to bind the approval to.`,
    );
  }
  // A soft failure is approvable only under an unexpired override of exactly this result.
  if (x.policyOutcome === "soft_failed" && facts.override === "expired") {
    return new DomainError(
      "POLICY_OVERRIDE_EXPIRED",
      `Every override of run ${run.id}'s soft policy failure has expired; override it again before approving.`,
    );
  }
  if (x.policyOutcome === "soft_failed" && facts.override === "none") {
    return new DomainError(
      "POLICY_OVERRIDE_REQUIRED",
      `Run ${run.id} failed a soft-mandatory policy; it needs an unexpired override of result ${x.policyResultDigest} before it can be approved.`,
    );
  }
  if (facts.currentStateDigest !== x.predecessorStateDigest) {
    return new DomainError(
      "RUN_PREDECESSOR_STATE_CHANGED",
      `The workspace state changed since this run was planned (planned against ${x.predecessorStateDigest ?? "no state"}, now ${facts.currentStateDigest ?? "no state"}). Start a new run.`,
    );
  }
  if (x.dependencyBundleDigest === null)
    return new DomainError("RUN_DEPENDENCY_BUNDLE_CHANGED", `Run ${run.id} recorded no dependency bundle.`);
  if (x.approvalExpiresAt !== null && new Date(x.approvalExpiresAt).getTime() <= now.getTime()) {
    return new DomainError(
      "RUN_TRANSITION_INVALID",
      `The approval window of run ${run.id} closed at ${x.approvalExpiresAt}.`,
    );
  }
  return null;
}
