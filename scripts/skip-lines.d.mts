// Types for skip-lines.mjs (plain JavaScript so that run-tests.mjs runs it without a loader).
export interface NamedSkip {
  title: string;
  reason: string;
  /** Why CI may skip it too, when it may. */
  allowedInCi?: string;
}
export function namedSkips(output: string): NamedSkip[];
