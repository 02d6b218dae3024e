// Component-test assertions: small, with messages that show both values.

/** Fails with `message` unless `value` is truthy. */
export function ok(value: unknown, message = "expected a truthy value"): asserts value {
  if (!value) throw new Error(message);
}
/** Fails unless the two are equal as JSON, showing both. */
export function equal<T>(actual: T, expected: T, message = ""): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${message ? `${message}: ` : ""}expected ${e}, got ${a}`);
}
/** Fails unless `pattern` matches `actual`, showing both. */
export function match(actual: string, pattern: RegExp, message = ""): void {
  if (!pattern.test(actual))
    throw new Error(`${message ? `${message}: ` : ""}${JSON.stringify(actual)} does not match ${pattern}`);
}
