import { DomainError, isDomainError } from "../domain/errors.ts";
import type { Run, RunReview } from "../domain/records.ts";
import { isCancelable, type RunEvent } from "../domain/run-lifecycle.ts";
import { approvalRefusal } from "../domain/approval-binding.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { inTransaction, type RecordAuditEventInput, type Stores } from "../store/index.ts";
import { activeOverrideOf } from "./active-override.ts";
import { recordRunEvent, releaseRun } from "./run-transitions.ts";
import { currentStateEvidence } from "./state-evidence.ts";
import { planEvidenceAgrees } from "./plan-evidence-digests.ts";
import { attestAfterDecision } from "./attestations.ts";

async function recordDecision(
  stores: Stores,
  review: Omit<RunReview, "id" | "decidedAt">,
  now: Date,
): Promise<RunReview> {
  try {
    return await stores.reviews.record({ ...review, decidedAt: now });
  } catch (error) {
    if (isDomainError(error, "CONSTRAINT_VIOLATION"))
      throw new DomainError("RUN_ALREADY_DECIDED", `Run ${review.runId} already has a recorded decision.`);
    throw error;
  }
}

/** What the audit event of a decision says beyond the run it is about. */
type DecisionAudit = Pick<RecordAuditEventInput, "actorId" | "action" | "reason" | "data">;

/** Records `event` on the run, with its audit event (the run's organization and id as target). */
function recordAuditedEvent(stores: Stores, run: Run, event: RunEvent, now: Date, audit: DecisionAudit): Promise<Run> {
  return recordRunEvent(stores, run, event, {
    now,
    audit: [{ organizationId: run.organizationId, targetType: "runs", targetId: run.id, ...audit }],
  });
}

/**
 * Ends the run by a person's decision in one transaction: `event` audited as `run.<decision>`,
 * and the decision recorded with the evidence the run holds.
 */
function endByDecision(
  services: Services,
  actor: AuthenticatedPrincipal,
  run: Run,
  event: RunEvent,
  decision: "discarded" | "canceled",
  reason: string | null,
  now: Date,
): Promise<Run> {
  return inTransaction(services.db, async (stores) => {
    const current = (await stores.runs.getById(run.id)) ?? run;
    const ended = await recordAuditedEvent(stores, current, event, now, {
      actorId: actor.id,
      action: `run.${decision}`,
      reason,
    });
    await recordDecision(stores, { runId: run.id, decision, actorId: actor.id, reason, ...evidenceOf(current) }, now);
    return ended;
  });
}

/**
 * Approves a run awaiting approval, bound to the evidence the reviewer saw: the plan digest they
 * send must equal the run's, the stored saved plan, plan JSON and plan changes must be exactly
 * what the plan phase recorded (all three digests are bound), and the policy result, the workspace's current state and the
 * dependency bundle must all still be what the plan was made against. Then the apply is queued.
 * One transaction; exactly one decision per run (two racing approvals give one apply).
 */
export async function approveRun(
  services: Services,
  actor: AuthenticatedPrincipal,
  run: Run,
  input: { planDigest: string; reason?: string },
): Promise<Run> {
  const now = services.clock();
  const decided = await inTransaction(services.db, async (stores) => {
    const current = await stores.runs.getById(run.id);
    if (!current) throw new DomainError("NOT_FOUND", `Run ${run.id} does not exist.`);
    const x = current.execution;
    const awaiting = current.status === "awaiting_approval";
    // One after another: the transaction holds one connection (PostgreSQL warns on queries sent concurrently on it).
    const storedEvidenceAgrees = awaiting && (await planEvidenceAgrees(stores, current));
    const override =
      awaiting && x.policyOutcome === "soft_failed"
        ? await activeOverrideOf(stores, current, now)
        : { finding: "none" as const };
    const state = await currentStateEvidence(stores, current.workspaceId);
    const refusal = approvalRefusal({
      run: current,
      sentPlanDigest: input.planDigest,
      storedEvidenceAgrees,
      override: override.finding,
      currentStateDigest: state?.digest ?? null,
      now,
    });
    if (refusal) throw refusal;
    const policyOverride = override.override;
    await recordDecision(
      stores,
      {
        runId: run.id,
        decision: "approved",
        actorId: actor.id,
        reason: input.reason ?? null,
        ...evidenceOf(current),
      },
      now,
    );
    const approved = await recordAuditedEvent(stores, current, { type: "approved" }, now, {
      actorId: actor.id,
      action: "run.approved",
      reason: input.reason ?? null,
      data: {
        plan_digest: x.planDigest,
        plan_json_digest: x.planJsonDigest,
        plan_diff_digest: x.planDiffDigest,
        policy_result_digest: x.policyResultDigest,
        predecessor_state_digest: x.predecessorStateDigest,
        dependency_bundle_digest: x.dependencyBundleDigest,
        ...(policyOverride
          ? { policy_override_id: policyOverride.id, policy_override_expires_at: policyOverride.expiresAt }
          : {}),
      },
    });
    await stores.jobs.enqueue({ runId: run.id, workspaceId: run.workspaceId, phase: "apply", serial: true, now });
    return approved;
  });
  services.jobQueued?.();
  // Signed right after the decision commits, off the request's path (it never fails and never
  // delays the answer); listing the run's attestations issues whatever is still missing.
  void attestAfterDecision(services, run.id);
  return decided;
}

/** A person's decision that ends (or, during apply, interrupts) a run, with the reason they gave. */
type EndingDecision = (
  services: Services,
  actor: AuthenticatedPrincipal,
  run: Run,
  reason: string | null,
) => Promise<Run>;

/** Discards a run awaiting a decision, recording who, when and why. */
export const discardRun: EndingDecision = async (services, actor, run, reason) => {
  const now = services.clock();
  const discarded = await endByDecision(services, actor, run, { type: "discarded" }, "discarded", reason, now);
  await releaseRun(services, discarded);
  void attestAfterDecision(services, run.id);
  return discarded;
};

/**
 * Cancels a run. Before apply it ends now (a planning attempt is interrupted by its runner);
 * during apply it only asks the runner to interrupt tofu, and the run then ends as what
 * really happened.
 */
export const cancelRun: EndingDecision = async (services, actor, run, reason) => {
  const now = services.clock();
  if (run.status === "applying") {
    const marked = await inTransaction(services.db, async (stores) => {
      const current = (await stores.runs.getById(run.id)) ?? run;
      return recordAuditedEvent(stores, current, { type: "apply_cancel_requested" }, now, {
        actorId: actor.id,
        action: "run.cancel_requested",
        reason,
      });
    });
    services.interruptRun?.(run.id);
    return marked;
  }
  if (!isCancelable(run.status))
    throw new DomainError("RUN_TRANSITION_INVALID", `Run ${run.id} is ${run.status} and cannot be canceled.`);
  const canceled = await endByDecision(services, actor, run, { type: "cancel_requested" }, "canceled", reason, now);
  services.interruptRun?.(run.id);
  await releaseRun(services, canceled);
  return canceled;
};

/**
 * Ends a run whose approval window closed (the runner's sweep): the run expires, the decision
 * `expired` is recorded with the evidence it waited on, audited, and what the run held is
 * released. Undefined when the run moved on or was decided meanwhile.
 */
export async function expireApproval(services: Services, run: Run, now: Date): Promise<Run | undefined> {
  let expired: Run;
  try {
    expired = await inTransaction(services.db, async (stores) => {
      const current = (await stores.runs.getById(run.id)) ?? run;
      const ended = await recordAuditedEvent(stores, current, { type: "approval_expired" }, now, {
        actorId: null,
        action: "run.expired",
      });
      await stores.reviews.record({
        runId: run.id,
        decision: "expired",
        actorId: null,
        reason: null,
        ...evidenceOf(current),
        decidedAt: now,
      });
      return ended;
    });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "RUN_TRANSITION_INVALID" || code === "CONSTRAINT_VIOLATION") return undefined;
    throw error;
  }
  await releaseRun(services, expired);
  return expired;
}

function evidenceOf(run: Run) {
  return {
    planDigest: run.execution.planDigest,
    planJsonDigest: run.execution.planJsonDigest,
    planDiffDigest: run.execution.planDiffDigest,
    policyResultDigest: run.execution.policyResultDigest,
    predecessorStateDigest: run.execution.predecessorStateDigest,
    dependencyBundleDigest: run.execution.dependencyBundleDigest,
  };
}
