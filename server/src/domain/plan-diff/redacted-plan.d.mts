// Types of redacted-plan.mjs (plain JavaScript so the plan sandbox can run it without a TypeScript toolchain).

/** The first distinct sensitive primitive of a change; the n-th is `(sensitive value n)`. */
export declare const SENSITIVE_VALUE: "(sensitive value)";

/** Input that is not a plan JSON or a provider schema document; the message never quotes the input. */
export declare class RedactedPlanInputError extends Error {}

/** Matches sensitive values in text (the redaction module's ValueMatcher). */
export interface TextMatcher {
  readonly empty: boolean;
  contains(text: string): boolean;
  redact(text: string): string;
}

/** The redacted plan of a parsed `tofu show -json` with a parsed `tofu providers schema -json`, as JSON text. */
export declare function buildRedactedPlan(
  plan: unknown,
  schemas: unknown,
  options?: { knownSecrets?: readonly string[] },
): string;

/** Every string, key, number and boolean of `value` holding a value `matcher` finds, redacted (a copy). */
export declare function redactByValue<T>(value: T, matcher: TextMatcher): T;
