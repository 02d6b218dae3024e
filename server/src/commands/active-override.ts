import { DomainError } from "../domain/errors.ts";
import { overrideCovers } from "../domain/policy/index.ts";
import type { Run } from "../domain/records.ts";
import type { PolicyOverride, Stores } from "../store/index.ts";

/**
 * For a soft-failed run: the unexpired override of exactly its current result digest, or the
 * refusal (POLICY_OVERRIDE_EXPIRED when there was one, POLICY_OVERRIDE_REQUIRED when never).
 * Used by the approval and by the apply's re-check.
 */
export async function requireActiveOverride(stores: Stores, run: Run, now: Date): Promise<PolicyOverride> {
  const digest = run.execution.policyResultDigest;
  const active = digest === null ? undefined : await stores.policyResults.findActiveOverride(run.id, digest, now);
  if (active && overrideCovers(active, digest, now)) return active;
  if (digest !== null && (await stores.policyResults.hasOverride(run.id, digest))) {
    throw new DomainError("POLICY_OVERRIDE_EXPIRED", `Every override of run ${run.id}'s soft policy failure has expired; override it again before approving.`);
  }
  throw new DomainError("POLICY_OVERRIDE_REQUIRED", `Run ${run.id} failed a soft-mandatory policy; it needs an unexpired override of result ${digest} before it can be approved.`);
}
