import { DomainError } from "../domain/errors.ts";
import type { Run } from "../domain/records.ts";
import { LIFECYCLE_FIELDS, runChange, type RunEvent } from "../domain/run-lifecycle.ts";
import type { Services } from "./services.ts";
import { inTransaction, type RecordAuditEventInput, type Stores } from "../store/index.ts";
import type { RunPatch } from "../store/run-repository.ts";
import { revokeRunTokens } from "./run-tokens.ts";
import { unlockWorkspaceForRun } from "./workspace-locks.ts";

/**
 * The one way a run's lifecycle changes. `runChange` (domain/run-lifecycle.ts) decides the whole
 * patch from the run and the event: status, reason, plan/apply/policy status, approval expiry,
 * cancel and finish times. This command writes it, compare-and-set on the statuses it was
 * computed from, announces it with its event on the run change feed, and records the audit
 * entries that go with it, all in one transaction. Nothing else writes those columns (test:
 * server/src/store/run-lifecycle-writers.test.ts).
 */

/** Facts a change carries that are not lifecycle columns (plan digests, the lock's fence, …). */
export type RunFacts = Omit<RunPatch, (typeof LIFECYCLE_FIELDS)[number] | "updatedAt">;

/** What a change takes besides the run and the event. */
export interface RunChangeOptions {
  now: Date;
  facts?: RunFacts;
  /** The workspace's approval TTL, for a change that makes the run wait for a decision. */
  approvalTtlSeconds?: number;
  /** Audit entries recorded in the same transaction (their time is `now`). */
  audit?: Array<Omit<RecordAuditEventInput, "createdAt">>;
}

/**
 * Moves a run by one lifecycle event inside the caller's transaction (`stores` from
 * inTransaction). A refused event, or a run that changed since it was read, throws
 * RUN_TRANSITION_INVALID and writes nothing.
 */
export async function recordRunEvent(
  stores: Stores,
  run: Run,
  event: RunEvent,
  options: RunChangeOptions,
): Promise<Run> {
  const x = run.execution;
  const change = runChange(
    {
      status: run.status,
      kind: run.kind,
      hasChanges: x.hasChanges,
      planStatus: x.planStatus,
      applyStatus: x.applyStatus,
    },
    event,
    options,
  );
  // The facts can never override a lifecycle column: the patch is spread last.
  const facts = stripLifecycle(options.facts ?? {});
  const updated = await stores.runs.update(
    run.id,
    run.status,
    { ...facts, ...change.patch, updatedAt: options.now },
    { event: change.event, expected: { planStatus: x.planStatus, applyStatus: x.applyStatus } },
  );
  if (!updated)
    throw new DomainError(
      "RUN_TRANSITION_INVALID",
      `Run ${run.id} changed while '${event.type}' was being recorded; reload it and try again.`,
    );
  for (const entry of options.audit ?? []) await stores.audit.record({ ...entry, createdAt: options.now });
  return updated;
}

/**
 * Moves a run by one event in a transaction of its own, reading the run afresh; undefined when
 * the run is gone or moved on concurrently (canceled, discarded), so the event no longer applies.
 * `alongside` writes what belongs to the same change (a policy result) in that transaction.
 */
export async function moveRun(
  services: Services,
  runId: string,
  event: RunEvent,
  options: Omit<RunChangeOptions, "now"> & {
    now?: Date;
    alongside?: (stores: Stores, run: Run) => Promise<unknown>;
  } = {},
): Promise<Run | undefined> {
  try {
    return await inTransaction(services.db, async (stores) => {
      const current = await stores.runs.getById(runId);
      if (!current) return undefined;
      await options.alongside?.(stores, current);
      return recordRunEvent(stores, current, event, { ...options, now: options.now ?? services.clock() });
    });
  } catch (error) {
    if ((error as { code?: string }).code === "RUN_TRANSITION_INVALID") return undefined;
    throw error;
  }
}

function stripLifecycle(facts: RunFacts): RunFacts {
  const out: Record<string, unknown> = { ...facts };
  for (const field of LIFECYCLE_FIELDS) delete out[field];
  return out;
}

/** Releases what a run that ended holds: its run tokens and (plan_and_apply runs) the workspace lock. */
export async function releaseRun(services: Services, run: Run): Promise<void> {
  await revokeRunTokens(services, run.id);
  if (run.kind === "plan_and_apply") await unlockWorkspaceForRun(services, run.workspaceId, run.id);
}
