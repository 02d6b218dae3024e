// A log write that fails on a timer's flush (a full disk, a lost database) is reported by close(),
// never left as an unhandled rejection (which ends a Node 20 process), and nothing after it is written.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Stores } from "../store/index.ts";
import { PhaseLog } from "./phase-log.ts";
import { until } from "../../test/support/poll.ts";

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
    await until(() => calls > 0, "the timer to flush");
    assert.is(calls, 1, "the timer flushed once");
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

/** Stores that keep each phase's appended text. */
function recordingStores(): { stores: Stores; logs: Record<string, string> } {
  const logs: Record<string, string> = {};
  const stores = {
    logs: {
      append: (_run: string, phase: string, text: string) => {
        logs[phase] = (logs[phase] ?? "") + text;
        return Promise.resolve();
      },
    },
  } as unknown as Stores;
  return { stores, logs };
}

const ui = (type: string, message: string) => `${JSON.stringify({ "@level": "info", "@message": message, type })}\n`;
const CANARY = "canary-7f3a9e";
const planLines =
  "Initializing the backend...\n" +
  ui("version", "OpenTofu 1.12.6") +
  ui("refresh_start", "a: Refreshing state...") +
  ui("planned_change", `a: Plan to create ${CANARY}`) +
  ui("change_summary", "Plan: 1 to add, 0 to change, 0 to destroy.") +
  ui("diagnostic", "Warning: after the plan");

test("a held structured plan log shows tofu's own rendering of the plan where its lines came, redacted", async () => {
  const { stores, logs } = recordingStores();
  const log = new PhaseLog(stores, "run-1", "plan", () => new Date(), [], { hold: true, json: true });
  log.write(planLines);
  log.release(
    [CANARY],
    `\n\nOpenTofu will perform the following actions:\n\n  # a will be created\n  + id = "${CANARY}"\n\nPlan: 1 to add, 0 to change, 0 to destroy.`,
  );
  await log.close();
  assert.is(
    logs.plan,
    'Initializing the backend...\na: Refreshing state...\n\nOpenTofu will perform the following actions:\n\n  # a will be created\n  + id = "[sensitive value]"\n\nPlan: 1 to add, 0 to change, 0 to destroy.\nWarning: after the plan\n',
  );
  assert.not.match(logs.plan_json, CANARY);
  assert.match(logs.plan_json, '"type":"planned_change"');
});

test("without tofu's rendering (the show failed), the plan's @message lines take its place", async () => {
  const { stores, logs } = recordingStores();
  const log = new PhaseLog(stores, "run-1", "plan", () => new Date(), [], { hold: true, json: true });
  log.write(planLines);
  log.release([CANARY]);
  await log.close();
  assert.is(
    logs.plan,
    "Initializing the backend...\na: Refreshing state...\na: Plan to create [sensitive value]\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n\nWarning: after the plan\n",
  );
});

test("a human plan given to a log that is not structured output changes nothing", async () => {
  const { stores, logs } = recordingStores();
  const log = new PhaseLog(stores, "run-1", "plan", () => new Date(), [], { hold: true });
  log.write("plain human log\n");
  log.release([], "ignored rendering");
  await log.close();
  assert.is(logs.plan, "plain human log\n");
});

test.run();
