import { buildPlanDiff, isPlanDiffArtifactOf } from "../domain/plan-diff/index.ts";
import type { ValueMatcher } from "../domain/redaction/index.ts";

/**
 * The plan changes built on the host, from the plan JSON the runner stores, redacting every value
 * of the phase's whole set (`secrets`, matched by `matcher`): used when the sandbox's plan-diff
 * cannot be kept, typically because it holds a value only the host knows (a sensitive workspace
 * variable a speculative run's snapshot leaves out, copied into the prior state). Null when the
 * plan JSON cannot be built into one, or the result still holds a sensitive value.
 */
export function hostPlanDiff(planJson: unknown, runId: string, secrets: readonly string[], matcher: ValueMatcher): Buffer | null {
  try {
    const built = Buffer.from(buildPlanDiff(planJson, { runId, knownSecrets: [...secrets] }).json, "utf8");
    return isPlanDiffArtifactOf(built, runId, matcher) ? built : null;
  } catch {
    return null;
  }
}
