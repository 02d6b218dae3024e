// Types of sensitive-values.mjs (plain JavaScript so the plan sandbox can run it through the plan-diff builder).

export declare const REDACTED: "[sensitive value]";
export declare const MIN_SENSITIVE_VALUE_LENGTH: 6;

/** Whether a text is long enough to be redacted by value (at least MIN_SENSITIVE_VALUE_LENGTH code points). */
export declare function isSpecific(text: unknown): boolean;
/** Every specific value the plan JSON marks sensitive anywhere (never throws). */
export declare function sensitiveValuesOfPlan(plan: unknown): string[];
/** Every specific value at a sensitive path of a state file, and of its sensitive outputs (never throws). */
export declare function sensitiveValuesOfState(state: unknown): string[];
/** The canonical decimal form OpenTofu prints for a number literal, or undefined when the text is not one. */
export declare function canonicalNumber(text: string): string | undefined;
/** A secret value and the forms it takes in OpenTofu's output (collection elements, canonical numbers; derived forms from 6 code points). */
export declare function formsOfSecret(value: string): string[];
/** The spellings a value can take in text (as is, JSON-escaped, Go-escaped, HCL-escaped, its specific lines). */
export declare function spellingsOf(value: string): string[];

export declare class ValueMatcher {
  constructor(values: Iterable<string>);
  /** The number of distinct spellings looked for. */
  readonly size: number;
  readonly empty: boolean;
  contains(text: string): boolean;
  redact(text: string): string;
}

export declare class StreamRedactor {
  constructor(matcherOrValues: ValueMatcher | Iterable<string>);
  push(chunk: string): string;
  flush(): string;
}
