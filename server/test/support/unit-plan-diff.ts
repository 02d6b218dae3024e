// Shared by the unit tests of the plan-diff artifact (server/src/domain/plan-diff/plan-diff*.test.ts):
// the composed examples of plan-json.md §6, the artifact's markers and builders of plan JSON.
import { readFileSync } from "node:fs";
import * as assert from "uvu/assert";
import { buildPlanDiff, type PlanDiffResource, type PlanDiffValue } from "../../src/domain/plan-diff/plan-diff.mjs";

/** An object of plan JSON (a value, a mask). */
export type Values = Record<string, unknown>;

/** A resource_changes entry of a plan JSON: the members these tests read. */
export interface ChangeEntry {
  address: string;
  change: { actions: string[]; before: Values | null; after: Values | null; [mask: string]: unknown };
  [member: string]: unknown;
}

/** An object value of an artifact resource's before or after. */
export type Shown = { [key: string]: PlanDiffValue };

// The composed examples of plan-json.md §6, verbatim.
export const examples = JSON.parse(
  readFileSync(new URL("../../src/domain/plan-diff/section6-examples.json", import.meta.url), "utf8"),
) as Record<string, ChangeEntry>;

export const S = { $stackship: "sensitive" };
export const U = { $stackship: "unknown" };
export const US = { $stackship: "unknown", sensitive: true };

export function plan(entries: unknown[], extra: Record<string, unknown> = {}) {
  return { format_version: "1.2", terraform_version: "1.12.6", resource_changes: entries, errored: false, ...extra };
}

export function only(entry: unknown): PlanDiffResource {
  const { artifact } = buildPlanDiff(plan([entry]));
  assert.is(artifact.resources.length, 1);
  return artifact.resources[0];
}

/** The head the artifact gives a managed resource: address, provider, mode, type and name. */
export function managed(address: string, provider: string, type: string, name: string) {
  return { address, provider, mode: "managed", type, name };
}

/** A managed resource_changes entry of a plan. */
export function changeEntry(
  address: string,
  providerName: string,
  type: string,
  name: string,
  change: Record<string, unknown>,
) {
  return { address, provider_name: providerName, mode: "managed", type, name, change };
}

/** A resource_changes entry of the builtin provider's terraform_data resource `name`. */
export function terraformData(name: string, change: Record<string, unknown>) {
  return changeEntry(`terraform_data.${name}`, "terraform.io/builtin/terraform", "terraform_data", name, change);
}
