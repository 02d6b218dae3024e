// The stackship.plan-diff/v1 artifact: the builder (plan-diff.mjs, plain JavaScript so the plan
// sandbox can run it) and what the host checks before it stores one.
export {
  buildPlanDiff,
  classifyActions,
  MAX_BYTES,
  MAX_RESOURCES,
  PLAN_DIFF_FORMAT,
  PlanDiffInputError,
} from "./plan-diff.mjs";
export type {
  BuildOptions,
  BuildResult,
  PlanDiff,
  PlanDiffAction,
  PlanDiffResource,
  PlanDiffValue,
  WithheldReason,
} from "./plan-diff.mjs";
import { MAX_BYTES, PLAN_DIFF_FORMAT } from "./plan-diff.mjs";
import { ValueMatcher } from "../redaction/index.ts";

/** Members of the artifact whose values are the builder's own words (formats, enums), never the plan's. */
const FIXED = new Set(["format", "run_id", "action", "actions", "withheld_reason", "truncation"]);

/**
 * Whether any text of the artifact that came from the plan (addresses, names, versions, values
 * and object keys inside before/after, replace paths) contains a sensitive value. Member names of
 * the artifact's own structure and its markers are not looked at: they are the builder's words,
 * and a sensitive value that happens to be e.g. "sensitive" or "create" must not make every
 * artifact unavailable.
 */
function leaks(document: Record<string, unknown>, matcher: ValueMatcher): boolean {
  const stack: Array<{ value: unknown; keys: boolean }> = [];
  for (const key of Object.keys(document))
    if (!FIXED.has(key) && key !== "resources") stack.push({ value: document[key], keys: false });
  const resources: unknown[] = Array.isArray(document.resources) ? document.resources : [];
  for (const resource of resources) {
    if (resource === null || typeof resource !== "object" || Array.isArray(resource)) {
      stack.push({ value: resource, keys: true });
      continue;
    }
    for (const [key, value] of Object.entries(resource))
      if (!FIXED.has(key)) stack.push({ value, keys: key === "before" || key === "after" });
  }
  while (stack.length > 0) {
    const { value, keys } = stack.pop()!;
    if (value === null || value === undefined) continue;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      if (matcher.contains(String(value))) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, keys });
    } else if (typeof value === "object") {
      const entries = Object.entries(value);
      // A marker ({"$stackship": "sensitive" | "unknown" | "imprecise_number", sensitive?: true}).
      if (entries.length > 0 && entries[0][0] === "$stackship") continue;
      for (const [key, item] of entries) {
        if (keys && matcher.contains(key)) return true;
        stack.push({ value: item, keys });
      }
    }
  }
  return false;
}

/**
 * Whether bytes collected from a plan sandbox are a plan-diff artifact of this run: within the
 * byte bound, JSON, the right format and run, and free of every sensitive value of the phase
 * (domain/redaction: the snapshot's secrets, the prior state's and the plan's sensitive values).
 * The builder in the sandbox redacts by mask and by the values it can know (the plan's, the
 * sensitive variables'); this check also catches a value only the stored prior state marks, and
 * one in an address. Anything else is not stored: the run's plan changes are then unavailable,
 * never something else in their place.
 */
export function isPlanDiffArtifactOf(
  bytes: Uint8Array,
  runId: string,
  secrets: readonly string[] | ValueMatcher = [],
): boolean {
  if (bytes.byteLength === 0 || bytes.byteLength > MAX_BYTES) return false;
  let document: unknown;
  try {
    document = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return false;
  }
  if (document === null || typeof document !== "object" || Array.isArray(document)) return false;
  const artifact = document as Record<string, unknown>;
  if (!(
    artifact.format === PLAN_DIFF_FORMAT &&
    artifact.run_id === runId &&
    typeof artifact.truncated === "boolean" &&
    Array.isArray(artifact.resources)
  ))
    return false;
  const matcher = secrets instanceof ValueMatcher ? secrets : new ValueMatcher(secrets);
  return matcher.empty || !leaks(artifact, matcher);
}
