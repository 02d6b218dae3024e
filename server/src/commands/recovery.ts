import type { components } from "../../../generated/v1/types.gen.ts";
import { DomainError } from "../domain/errors.ts";
import type { Run } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../http/principal.ts";
import type { Services } from "../services.ts";
import { inTransaction } from "../store/index.ts";
import { recordRunEvent, releaseRun } from "./run-transitions.ts";
import { confirmStatePublication } from "./state-versions.ts";

type RunRecovery = components["schemas"]["RunRecovery"];

/** Whether a run carries recovery evidence: it needs recovery, or it was recovered. */
export function hasRecovery(run: Run): boolean {
  return run.status === "needs_recovery" || run.execution.statusReason === "recovered";
}

/** The recovery evidence of a run, read from records only (null when it has none). */
export async function recoveryEvidence(services: Services, run: Run): Promise<RunRecovery | null> {
  if (!hasRecovery(run)) return null;
  const attempts = (await services.stores.attempts.listByRun(run.id)).filter((a) => a.phase === "apply");
  const attempt = attempts[attempts.length - 1];
  const pending = await services.stores.stateVersions.listPendingByRun(run.id);
  const lock = await services.stores.workspaceLocks.current(run.workspaceId);
  const version = pending[pending.length - 1];
  return {
    attempt: attempt
      ? {
          id: attempt.id,
          attempt_number: attempt.attemptNumber,
          status: attempt.status,
          terminal_classification: attempt.terminalClassification,
          sandbox_id: attempt.sandboxId,
          runner_id: attempt.runnerId,
          started_at: attempt.startedAt,
          finished_at: attempt.finishedAt,
        }
      : null,
    last_log_lines: await services.stores.logs.tail(run.id, "apply", 8),
    pending_state_version: version ? { id: version.id, serial: version.serial, lineage: version.lineage, sha256: version.sha256 } : null,
    lock: lock ? { holder_kind: lock.holder.kind, holder_id: lock.holder.id, fence: lock.fence } : null,
    predecessor_state_digest: run.execution.predecessorStateDigest,
  };
}

/** The ways an operator can resolve a recovery. */
export type RecoveryResolution = "commit_pending_state" | "keep_current_state";

/**
 * Resolves a run that needs recovery: publish the pending state version its apply uploaded (the
 * run ends applied), or discard it and keep the current state (the run ends errored); the reason
 * is `recovered` either way, the decision is audited with the operator's reason, and the
 * workspace lock is released.
 */
export async function resolveRecovery(services: Services, actor: AuthenticatedPrincipal, run: Run, resolution: RecoveryResolution, reason: string): Promise<Run> {
  if (run.status !== "needs_recovery") throw new DomainError("RUN_TRANSITION_INVALID", `Run ${run.id} is ${run.status}; only a run that needs recovery can be resolved.`);
  const pending = await services.stores.stateVersions.listPendingByRun(run.id);
  const now = services.clock();
  if (resolution === "commit_pending_state") {
    const uploaded = pending.filter((v) => v.sha256 !== null);
    if (uploaded.length !== 1) {
      throw new DomainError("RECOVERY_NOTHING_TO_COMMIT", `Run ${run.id} left ${uploaded.length} uploaded pending state versions; committing needs exactly one. Keep the current state instead.`);
    }
    const [version] = uploaded;
    await confirmStatePublication(services, { runId: run.id, stateVersionId: version.id, serial: version.serial, lineage: version.lineage, sha256: version.sha256!, fence: version.fence });
  }
  const resolved = await inTransaction(services.db, async (stores) => {
    const current = (await stores.runs.getById(run.id)) ?? run;
    if (resolution === "keep_current_state") await stores.stateVersions.discardPendingByRun(run.id);
    return recordRunEvent(stores, current, { type: "recovery_resolved", stateCommitted: resolution === "commit_pending_state" }, {
      now,
      audit: [
        {
          organizationId: run.organizationId,
          actorId: actor.id,
          action: "run.recovery_resolved",
          targetType: "runs",
          targetId: run.id,
          reason,
          data: { resolution, pending_state_versions: pending.map((v) => v.id) },
        },
      ],
    });
  });
  await releaseRun(services, resolved);
  return resolved;
}
