import type { OverrideFinding } from "../domain/approval-binding.ts";
import { overrideCovers } from "../domain/policy/index.ts";
import type { Run } from "../domain/records.ts";
import type { PolicyOverride, Stores } from "../store/index.ts";

/**
 * For a soft-failed run: the unexpired override of exactly its current result digest (`active`),
 * or whether there was one that expired (`expired`) or never any (`none`). The approval decides on
 * the finding (domain/approval-binding.ts) and binds the active override.
 */
export async function activeOverrideOf(
  stores: Stores,
  run: Run,
  now: Date,
): Promise<{ finding: OverrideFinding; override?: PolicyOverride }> {
  const digest = run.execution.policyResultDigest;
  const active = digest === null ? undefined : await stores.policyResults.findActiveOverride(run.id, digest, now);
  if (active && overrideCovers(active, digest, now)) return { finding: "active", override: active };
  return { finding: digest !== null && (await stores.policyResults.hasOverride(run.id, digest)) ? "expired" : "none" };
}
