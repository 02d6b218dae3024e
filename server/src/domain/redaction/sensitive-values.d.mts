// Types of sensitive-values.mjs (plain JavaScript so the plan sandbox can run it through the plan-diff builder).

export {
  isSpecific,
  MIN_SENSITIVE_VALUE_LENGTH,
  REDACTED,
  spellingsOf,
  StreamRedactor,
  ValueMatcher,
} from "./value-matcher.mjs";

/** Every specific value the plan JSON marks sensitive anywhere (never throws). */
export declare function sensitiveValuesOfPlan(plan: unknown): string[];
/** Every specific value at a sensitive path of a state file, and of its sensitive outputs (never throws). */
export declare function sensitiveValuesOfState(state: unknown): string[];
/** The canonical decimal form OpenTofu prints for a number literal, or undefined when the text is not one. */
export declare function canonicalNumber(text: string): string | undefined;
/** A secret value and the forms it takes in OpenTofu's output (collection elements, canonical numbers; derived forms from 6 code points). */
export declare function formsOfSecret(value: string): string[];
