import { canonicalize, sha256Hex } from "../domain/canonical-json.ts";
import type { PlanCounts } from "../domain/records.ts";

/** What the lifecycle needs from a plan: counts, whether anything changes, whether it errored. */
export interface PlanSummary {
  counts: PlanCounts;
  hasChanges: boolean;
  /** OpenTofu's `errored`: planning failed part-way and the plan cannot be applied. */
  errored: boolean;
  /** How many resource changes import (`importing`), and whether any carries generated configuration (`-generate-config-out`). */
  imports: number;
  generatedConfiguration: boolean;
}

/**
 * Counts a plan's resource changes from `tofu show -json` output. A replace counts as both a
 * create and a destroy (`forget` replaces count only the create: nothing is destroyed). An
 * unknown action list counts as a change so that it is reviewed, never silently skipped. As in
 * OpenTofu's `plans.Changes.Empty`, a no-op that imports or moves a resource (`importing`, a
 * `previous_address`) is a change too: its apply writes the state, so it is reviewed and applied.
 */
export function summarizePlan(planJson: unknown): PlanSummary {
  if (!planJson || typeof planJson !== "object") throw new TypeError("the plan JSON is not an object");
  const plan = planJson as { resource_changes?: unknown; output_changes?: unknown; errored?: unknown };
  const counts: PlanCounts = { create: 0, change: 0, destroy: 0 };
  let forgets = 0;
  let moves = 0;
  let imports = 0;
  let generatedConfiguration = false;
  const changes = Array.isArray(plan.resource_changes) ? plan.resource_changes : [];
  for (const entry of changes) {
    const change = (entry as { change?: { importing?: unknown; generated_config?: unknown } })?.change;
    if (change?.importing && typeof change.importing === "object") imports++;
    if (typeof change?.generated_config === "string" && change.generated_config.length > 0)
      generatedConfiguration = true;
    const { address, previous_address: previous } = entry as { address?: unknown; previous_address?: unknown };
    if (typeof previous === "string" && previous !== address) moves++;
    const actions = (entry as { change?: { actions?: unknown } })?.change?.actions;
    const key = Array.isArray(actions) ? actions.join(",") : "";
    switch (key) {
      case "no-op":
      case "read":
        break;
      case "create":
        counts.create++;
        break;
      case "update":
        counts.change++;
        break;
      case "delete":
        counts.destroy++;
        break;
      case "delete,create":
      case "create,delete":
        counts.create++;
        counts.destroy++;
        break;
      case "forget":
        forgets++;
        break;
      case "forget,create":
        forgets++;
        counts.create++;
        break;
      default:
        counts.change++;
    }
  }
  const outputs =
    plan.output_changes && typeof plan.output_changes === "object"
      ? Object.values(plan.output_changes as Record<string, unknown>)
      : [];
  const outputsChange = outputs.some((change) => {
    const actions = (change as { actions?: unknown })?.actions;
    return !(Array.isArray(actions) && actions.length === 1 && actions[0] === "no-op");
  });
  return {
    counts,
    hasChanges: counts.create + counts.change + counts.destroy + forgets + imports + moves > 0 || outputsChange,
    errored: plan.errored === true,
    imports,
    generatedConfiguration,
  };
}

/**
 * The dependency bundle digest: SHA-256 over the canonical form of the dependency lock file and
 * the module manifest the plan was made with. The apply must run with the same bundle.
 */
export function dependencyBundleDigest(lockFile: Buffer | null, moduleManifest: Buffer | null): string {
  let modules: unknown = null;
  if (moduleManifest) {
    try {
      modules = JSON.parse(moduleManifest.toString("utf8"));
    } catch {
      modules = { unparsed_sha256: sha256Hex(moduleManifest) };
    }
  }
  return sha256Hex(
    canonicalize({
      format: "stackship.dependency-bundle/v1",
      lock_file_sha256: lockFile ? sha256Hex(lockFile) : null,
      modules,
    }),
  );
}
