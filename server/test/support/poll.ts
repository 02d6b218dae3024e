/**
 * Waiting on a condition instead of for a fixed time. The limits are backstops for a loaded
 * machine (CI runs every suite at once on two cores), never claims about speed.
 */
import * as assert from "uvu/assert";

/** Polls `read` until it gives a value other than undefined (fails after `timeoutMs` naming `what`). */
export async function poll<T>(
  what: string,
  read: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Resolves once `condition` holds; fails after `timeoutMs` naming `what`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  await poll(what, () => (condition() ? true : undefined), timeoutMs);
}
