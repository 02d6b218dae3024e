// Redaction by value (sensitive-values.mjs, plain JavaScript because the plan-diff builder in the
// plan sandbox imports it): the rule and its minimum length are documented there.
export {
  canonicalNumber,
  formsOfSecret,
  isSpecific,
  MIN_SENSITIVE_VALUE_LENGTH,
  REDACTED,
  sensitiveValuesOfPlan,
  sensitiveValuesOfState,
  spellingsOf,
  StreamRedactor,
  ValueMatcher,
} from "./sensitive-values.mjs";
import { formsOfSecret, sensitiveValuesOfPlan, sensitiveValuesOfState } from "./sensitive-values.mjs";

/** Where a phase's sensitive values come from. */
export interface SensitiveValueSources {
  /**
   * Values secret whatever any mask says: the workspace's sensitive variable values (also those a
   * speculative snapshot leaves out), the run's own tokens. Redacted at any length, with the forms
   * OpenTofu prints them in (formsOfSecret: collection elements, canonical numbers).
   */
  variables?: readonly string[];
  /** The parsed predecessor state (the workspace's current state version when the phase began). */
  priorState?: unknown;
  /** The parsed plan JSON (`tofu show -json`) of the run. */
  plan?: unknown;
}

/**
 * The set of sensitive values of a phase: the secret values and their printed forms ∪ every
 * specific value at a sensitive path of the prior state ∪ every specific value the plan marks
 * sensitive anywhere. Deduplicated, in no particular order.
 */
export function sensitiveValueSet(sources: SensitiveValueSources): string[] {
  const set = new Set<string>();
  for (const v of sources.variables ?? []) for (const form of formsOfSecret(v)) set.add(form);
  if (sources.priorState !== undefined) for (const v of sensitiveValuesOfState(sources.priorState)) set.add(v);
  if (sources.plan !== undefined) for (const v of sensitiveValuesOfPlan(sources.plan)) set.add(v);
  return [...set];
}
