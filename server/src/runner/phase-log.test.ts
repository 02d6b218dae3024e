// A log write that fails on a timer's flush (a full disk, a lost database) is reported by close(),
// never left as an unhandled rejection (which ends a Node 20 process), and nothing after it is written.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Stores } from "../store/index.ts";
import { PhaseLog } from "./phase-log.ts";

test("a failed timer flush is no unhandled rejection; close() throws it and writes nothing after it", async () => {
  const appended: string[] = [];
  let calls = 0;
  const stores = {
    logs: {
      append: (_run: string, _phase: string, text: string) => {
        calls += 1;
        if (calls === 1) return Promise.reject(new Error("SQLITE_FULL: database or disk is full"));
        appended.push(text);
        return Promise.resolve();
      },
    },
  } as unknown as Stores;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    const log = new PhaseLog(stores, "run-1", "plan", () => new Date(), []);
    log.write("first line\n");
    // The 200 ms timer flushes it; the append fails.
    for (let i = 0; i < 100 && calls === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.is(calls, 1, "the timer flushed");
    await new Promise((resolve) => setImmediate(resolve));
    log.write("second line\n");
    const error = await log.close().then(
      () => null,
      (e: unknown) => e as Error,
    );
    assert.match(String(error?.message), /SQLITE_FULL/);
    assert.equal(appended, [], "nothing is written after the failed chunk");
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(unhandled, []);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});

test.run();
