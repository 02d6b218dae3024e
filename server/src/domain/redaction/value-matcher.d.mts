// Types of value-matcher.mjs (plain JavaScript so the plan sandbox can run it through the plan-diff builder).

export declare const REDACTED: "[sensitive value]";
export declare const MIN_SENSITIVE_VALUE_LENGTH: 6;

/** Whether a text is long enough to be redacted by value (at least MIN_SENSITIVE_VALUE_LENGTH code points). */
export declare function isSpecific(text: unknown): boolean;
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
