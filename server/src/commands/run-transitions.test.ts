import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { isDomainError } from "../domain/errors.ts";
import type { Run } from "../domain/records.ts";
import type { RunEvent } from "../domain/run-lifecycle.ts";
import type { Database } from "../store/db.ts";
import type { RunRow } from "../store/rows.ts";
import { createStores, inTransaction, openRunChangeFeed, type RunChangeNotice } from "../store/index.ts";
import { at, countRows, planStartedNotice, storesWithRun } from "../../test/support/store-fixtures.ts";
import { recordRunEvent } from "./run-transitions.ts";
import { until } from "../../test/support/poll.ts";

// The one writer of a run's lifecycle columns: what it writes, announces and audits, and that a
// refused or stale change writes nothing at all.
const writer = suite("recordRunEvent");

async function withFeed(db: Database, runId: string, fn: (heard: RunChangeNotice[]) => Promise<void>): Promise<void> {
  const heard: RunChangeNotice[] = [];
  const feed = openRunChangeFeed(db);
  const unsubscribe = await feed.subscribe({
    notice: (n) => n.runId === runId && heard.push(n),
    resync: () => undefined,
  });
  try {
    await fn(heard);
  } finally {
    unsubscribe();
    await feed.close();
  }
}

/**
 * Everything announced for the run so far, without waiting a fixed time: a committed log chunk is
 * announced after whatever came before it (one ordered feed), so once it is heard nothing earlier
 * can still arrive. The sentinel itself is left out of the answer.
 */
async function heardUntilSentinel(db: Database, runId: string, heard: RunChangeNotice[]): Promise<RunChangeNotice[]> {
  const text = `sentinel ${Math.random()}\n`;
  await createStores(db.knex, db.dialect).logs.append(runId, "plan", text, false, at(98));
  const isSentinel = (n: RunChangeNotice) => n.kind === "log" && n.text === text;
  await until(() => heard.some(isSentinel), "the sentinel log chunk to be announced");
  return heard.filter((n) => !isSentinel(n));
}
const rowOf = (db: Database, id: string) => db.knex<RunRow>("runs").where({ id }).first();
const AUDIT = { organizationId: null, actorId: null, action: "run.test", targetType: "runs", targetId: "x" };

async function move(
  db: Database,
  run: Run,
  event: RunEvent,
  seconds: number,
  extra: Partial<Parameters<typeof recordRunEvent>[3]> = {},
): Promise<Run> {
  return inTransaction(db, (stores) => recordRunEvent(stores, run, event, { now: new Date(at(seconds)), ...extra }));
}

testEachDatabase(
  writer,
  "writes the whole patch with the facts, announces the event, audits in the same transaction; facts never set a lifecycle column",
  async (db) => {
    const { run: pending } = await storesWithRun(db);
    await withFeed(db, pending.id, async (heard) => {
      const started = await move(db, pending, { type: "plan_started" }, 20, {
        facts: { workspaceLockFence: 7, status: "applied", finishedAt: at(99) } as never,
        audit: [{ ...AUDIT, targetId: pending.id }],
      });
      assert.is(started.status, "planning");
      assert.is(started.execution.planStatus, "running");
      assert.is(started.execution.workspaceLockFence, 7);
      assert.is(started.execution.finishedAt, null, "a lifecycle column smuggled in the facts is dropped");
      assert.is(started.updatedAt, at(20));
      const audit = await db.knex("audit_events").where({ target_id: pending.id, action: "run.test" });
      assert.is(audit.length, 1);
      assert.equal(await heardUntilSentinel(db, pending.id, heard), [planStartedNotice(pending.id)]);
    });
  },
);

testEachDatabase(
  writer,
  "a refused event and a stale run each write nothing: no row change, no audit, no announcement",
  async (db) => {
    const { run: pending } = await storesWithRun(db);
    const planning = await move(db, pending, { type: "plan_started" }, 20);
    await withFeed(db, pending.id, async (heard) => {
      const before = await rowOf(db, pending.id);
      const audits = await countRows(db.knex, "audit_events");
      const attempts: Array<[string, Run, RunEvent]> = [
        ["refused: approve a planning run", planning, { type: "approved" }],
        ["refused: apply_started before approval", planning, { type: "apply_started" }],
        ["stale: the run is no longer pending", pending, { type: "cancel_requested" }],
        [
          "stale phase: same status, the plan status moved on",
          { ...planning, execution: { ...planning.execution, planStatus: "pending" } },
          { type: "plan_failed" },
        ],
      ];
      for (const [title, run, event] of attempts) {
        try {
          await move(db, run, event, 30, {
            audit: [{ ...AUDIT, targetId: pending.id }],
            facts: { workspaceLockFence: 99 },
          });
          assert.unreachable(title);
        } catch (error) {
          assert.ok(isDomainError(error, "RUN_TRANSITION_INVALID"), `${title}: ${String(error)}`);
        }
      }
      assert.equal(await rowOf(db, pending.id), before);
      assert.is(await countRows(db.knex, "audit_events"), audits);
      assert.equal(await heardUntilSentinel(db, pending.id, heard), []);
    });
  },
);

testEachDatabase(writer, "apply_started sets the apply running once; a second start is refused", async (db) => {
  const { run: created } = await storesWithRun(db);
  let run = created;
  for (const [i, event] of (
    [
      { type: "plan_started" },
      { type: "plan_finished", hasChanges: true },
      { type: "policy_evaluated", outcome: "passed" },
      { type: "approved" },
    ] as RunEvent[]
  ).entries()) {
    run = await move(db, run, event, 20 + i);
  }
  assert.is(run.execution.approvalExpiresAt, new Date(Date.parse(at(22)) + 86_400_000).toISOString());
  const started = await move(db, run, { type: "apply_started" }, 30);
  assert.is(started.status, "applying");
  assert.is(started.execution.applyStatus, "running");
  try {
    await move(db, started, { type: "apply_started" }, 31);
    assert.unreachable("a second apply start");
  } catch (error) {
    assert.ok(isDomainError(error, "RUN_TRANSITION_INVALID"));
  }
  const canceled = await move(db, started, { type: "apply_cancel_requested" }, 32);
  assert.is(canceled.status, "applying");
  assert.is(canceled.execution.cancelRequestedAt, at(32));
});

writer.run();
