// Types for failure-lines.mjs (plain JavaScript so that run-tests.mjs runs it without a loader).
export interface FailedTest {
  file: string | null;
  /** The suite's name; "" for a test of uvu's unnamed default suite. */
  suite: string;
  title: string;
  message: string[];
}
export function failedTests(output: string, lines?: number): FailedTest[];
