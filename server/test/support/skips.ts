// A test that cannot run here is registered as skipped (uvu counts it) and names itself on a
// `[skip]` line that scripts/run-tests.mjs collects: the run's summary lists every skipped test
// with its reason, and with CI=true a skip the CI machine is expected not to need fails the run.
import type { Test } from "uvu";

/** Whether a skip is acceptable on the CI machine too (something CI does not provide on purpose). */
export interface SkipOptions {
  /** Why CI may skip it as well; absent: with CI=true this skip fails the run. */
  allowedInCi?: string;
}

/** Registers `title` as skipped because of `reason`, and says so on a `[skip]` line. */
export function skipTest<T>(test: Test<T>, title: string, reason: string, options: SkipOptions = {}): void {
  const line = JSON.stringify({ title, reason, ...(options.allowedInCi ? { allowedInCi: options.allowedInCi } : {}) });
  process.stdout.write(`[skip] ${line}\n`);
  test.skip(`${title} (skipped: ${reason})`, () => {});
}
