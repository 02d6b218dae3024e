import { buildPlanDiff, isPlanDiffArtifactOf } from "../domain/plan-diff/index.ts";
import type { ValueMatcher } from "../domain/redaction/index.ts";
import { redactByValue } from "../domain/plan-diff/redacted-plan.mjs";

/**
 * The plan changes built on the host, from the plan JSON the runner stores, redacting every value
 * of the phase's whole set (`secrets`, matched by `matcher`): used when the sandbox's plan-diff
 * cannot be kept, typically because it holds a value only the host knows (a sensitive workspace
 * variable a speculative run's snapshot leaves out, copied into the prior state). Null when the
 * plan JSON cannot be built into one, or the result still holds a sensitive value.
 */
export function hostPlanDiff(
  planJson: unknown,
  runId: string,
  secrets: readonly string[],
  matcher: ValueMatcher,
): Buffer | null {
  try {
    const built = Buffer.from(buildPlanDiff(planJson, { runId, knownSecrets: [...secrets] }).json, "utf8");
    return isPlanDiffArtifactOf(built, runId, matcher) ? built : null;
  } catch {
    return null;
  }
}

/** The largest redacted plan stored (the route serves up to the plan JSON's 100 MiB). */
export const REDACTED_PLAN_MAX_BYTES = 100 * 1024 * 1024;

/**
 * The redacted plan the CLI renders (json-output-redacted), as the launcher built it
 * (redacted-plan.mjs: by the plan's masks, the snapshot's secrets and the plan's own sensitive
 * values), checked on the host against the phase's whole set (`matcher`: also the values only
 * the stored prior state and the workspace's sensitive variables hold): a document holding one
 * anywhere is redacted by value again here. Null when it is not such a document or too large.
 */
export function hostRedactedPlan(bytes: Buffer, matcher: ValueMatcher): Buffer | null {
  if (bytes.length > REDACTED_PLAN_MAX_BYTES) return null;
  let text: string;
  let document: unknown;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    document = JSON.parse(text);
  } catch {
    return null;
  }
  if (document === null || typeof document !== "object" || Array.isArray(document)) return null;
  const d = document as Record<string, unknown>;
  if (typeof d.plan_format_version !== "string" || typeof d.provider_format_version !== "string") return null;
  if (d.provider_schemas === null || typeof d.provider_schemas !== "object" || Array.isArray(d.provider_schemas))
    return null;
  if (!matcher.contains(text)) return bytes;
  const again = Buffer.from(JSON.stringify(redactByValue(d, matcher)), "utf8");
  return matcher.contains(again.toString("utf8")) ? null : again;
}
