// The stackship.plan-diff/v1 artifact: the builder (plan-diff.mjs, plain JavaScript so the plan
// sandbox can run it) and what the host checks before it stores one.
export { buildPlanDiff, classifyActions, MAX_BYTES, MAX_RESOURCES, PLAN_DIFF_FORMAT, PlanDiffInputError } from "./plan-diff.mjs";
export type { BuildOptions, BuildResult, PlanDiff, PlanDiffAction, PlanDiffResource, PlanDiffValue, WithheldReason } from "./plan-diff.mjs";
import { MAX_BYTES, PLAN_DIFF_FORMAT } from "./plan-diff.mjs";

/**
 * Whether bytes collected from a plan sandbox are a plan-diff artifact of this run: within the
 * byte bound, JSON, the right format and run, and free of every known secret value (as is or
 * JSON-escaped). The masks are the redaction; the secrets check only catches a value the
 * configuration did not mark sensitive (e.g. a sensitive workspace variable declared without
 * `sensitive = true`). Anything else is not stored: the run's plan changes are then unavailable,
 * never something else in their place.
 */
export function isPlanDiffArtifactOf(bytes: Uint8Array, runId: string, secrets: readonly string[] = []): boolean {
  if (bytes.byteLength === 0 || bytes.byteLength > MAX_BYTES) return false;
  let document: unknown;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    document = JSON.parse(text);
  } catch {
    return false;
  }
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    if (text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1))) return false;
  }
  if (document === null || typeof document !== "object" || Array.isArray(document)) return false;
  const artifact = document as Record<string, unknown>;
  return artifact.format === PLAN_DIFF_FORMAT && artifact.run_id === runId && typeof artifact.truncated === "boolean" && Array.isArray(artifact.resources);
}
