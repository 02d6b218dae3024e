/**
 * Waiting on a condition instead of for a fixed time. The limits are backstops for a loaded
 * machine (CI runs every suite at once on two cores), never claims about speed.
 */
import * as assert from "uvu/assert";

/** What a wait is for, or a function describing it when it fails (to show what was seen by then). */
export type Waited = string | (() => string);

/** Polls `read` until it gives a value other than undefined (fails after `timeoutMs` naming `what`). */
export async function poll<T>(
  what: Waited,
  read: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) assert.unreachable(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Resolves once `condition` holds (it may read asynchronously); fails after `timeoutMs` naming `what`. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: Waited,
  timeoutMs = 60_000,
  everyMs = 20,
): Promise<void> {
  await poll(what, async () => ((await condition()) ? true : undefined), timeoutMs, everyMs);
}
