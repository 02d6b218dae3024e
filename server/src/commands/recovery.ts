import { DomainError } from "../domain/errors.ts";
import type { Run, RunAttempt } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { inTransaction, type StateVersion, type WorkspaceLock } from "../store/index.ts";
import { recordRunEvent, releaseRun } from "./run-transitions.ts";
import { confirmStatePublication, publicationOf } from "./state-versions.ts";

/** What an operator sees of a run that needs (or needed) recovery; api/v1/presenters.ts shapes it. */
export interface RecoveryEvidence {
  /** The last apply attempt (null when none was recorded). */
  attempt: RunAttempt | null;
  /** The last sanitized lines of the apply log (at most eight). */
  lastLogLines: string[];
  /** The newest pending state version of the run. */
  pendingStateVersion: Pick<StateVersion, "id" | "serial" | "lineage" | "sha256"> | null;
  /** The workspace lock as it is now. */
  lock: WorkspaceLock | null;
  predecessorStateDigest: string | null;
}

/** Whether a run carries recovery evidence: it needs recovery, or it was recovered. */
export function hasRecovery(run: Run): boolean {
  return run.status === "needs_recovery" || run.execution.statusReason === "recovered";
}

/** The recovery evidence of a run, read from records only (null when it has none). */
export async function recoveryEvidence(services: Services, run: Run): Promise<RecoveryEvidence | null> {
  if (!hasRecovery(run)) return null;
  const attempts = (await services.stores.attempts.listByRun(run.id)).filter((a) => a.phase === "apply");
  const pending = await services.stores.stateVersions.listPendingByRun(run.id);
  const version = pending[pending.length - 1];
  return {
    attempt: attempts[attempts.length - 1] ?? null,
    lastLogLines: await services.stores.logs.tail(run.id, "apply", 8),
    pendingStateVersion: version
      ? { id: version.id, serial: version.serial, lineage: version.lineage, sha256: version.sha256 }
      : null,
    lock: (await services.stores.workspaceLocks.current(run.workspaceId)) ?? null,
    predecessorStateDigest: run.execution.predecessorStateDigest,
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
export async function resolveRecovery(
  services: Services,
  actor: AuthenticatedPrincipal,
  run: Run,
  resolution: RecoveryResolution,
  reason: string,
): Promise<Run> {
  if (run.status !== "needs_recovery")
    throw new DomainError(
      "RUN_TRANSITION_INVALID",
      `Run ${run.id} is ${run.status}; only a run that needs recovery can be resolved.`,
    );
  const pending = await services.stores.stateVersions.listPendingByRun(run.id);
  const now = services.clock();
  if (resolution === "commit_pending_state") {
    const uploaded = pending.filter((v) => v.sha256 !== null);
    if (uploaded.length !== 1) {
      throw new DomainError(
        "RECOVERY_NOTHING_TO_COMMIT",
        `Run ${run.id} left ${uploaded.length} uploaded pending state versions; committing needs exactly one. Keep the current state instead.`,
      );
    }
    const [version] = uploaded;
    await confirmStatePublication(services, publicationOf(run.id, version, version.fence));
  }
  const resolved = await inTransaction(services.db, async (stores) => {
    const current = (await stores.runs.getById(run.id)) ?? run;
    if (resolution === "keep_current_state") await stores.stateVersions.discardPendingByRun(run.id);
    return recordRunEvent(
      stores,
      current,
      { type: "recovery_resolved", stateCommitted: resolution === "commit_pending_state" },
      {
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
      },
    );
  });
  await releaseRun(services, resolved);
  return resolved;
}
