import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { inTransaction } from "./index.ts";
import { decodeNotice, encodeNotice, openRunChangeFeed, type RunChangeNotice } from "./run-events.ts";
import { at, planStartedNotice, storesWithRun } from "../../test/support/store-fixtures.ts";
import { until } from "../../test/support/poll.ts";

const payloads = suite("run change notices");

payloads("a log notice carries its text only while the NOTIFY payload stays under 8000 bytes; both decode", () => {
  const small: RunChangeNotice = {
    kind: "log",
    runId: "run-0123456789abcdef",
    phase: "plan",
    seq: 7,
    final: false,
    text: "hello ✓\n",
  };
  assert.equal(decodeNotice(encodeNotice(small)), small);
  const big: RunChangeNotice = { ...small, seq: 8, final: true, text: "€".repeat(3000) };
  const encoded = encodeNotice(big);
  assert.ok(Buffer.byteLength(encoded) < 8000);
  assert.equal(decodeNotice(encoded), { kind: "log", runId: big.runId, phase: "plan", seq: 8, final: true });
  const run = planStartedNotice(small.runId);
  assert.equal(decodeNotice(encodeNotice(run)), run);
  assert.equal(decodeNotice(encodeNotice({ ...run, event: null })), { ...run, event: null });
  assert.is(decodeNotice('{"k":"log"'), undefined);
  assert.is(decodeNotice('{"k":"other","r":"x"}'), undefined);
});

const feed = suite("run change feed");

testEachDatabase(
  feed,
  "announces committed log chunks and run updates, after the commit, and nothing that rolls back",
  async (db) => {
    const { stores, run } = await storesWithRun(db);
    const heard: RunChangeNotice[] = [];
    const changes = openRunChangeFeed(db);
    const unsubscribe = await changes.subscribe({
      notice: (n) => n.runId === run.id && heard.push(n),
      resync: () => undefined,
    });
    const settle = (count: number) => until(() => heard.length >= count, `${count} notices`);
    try {
      await stores.logs.append(run.id, "plan", "one\n", false, at(1));
      await settle(1);
      assert.equal(heard, [{ kind: "log", runId: run.id, phase: "plan", seq: 0, final: false, text: "one\n" }]);

      let heardInside = -1;
      await inTransaction(db, async (trx) => {
        await trx.logs.append(run.id, "plan", "two\n", false, at(2));
        await trx.runs.update(
          run.id,
          "pending",
          { status: "planning", planStatus: "running", updatedAt: at(2) },
          { event: "plan_started" },
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
        heardInside = heard.length;
      });
      assert.is(heardInside, 1, "nothing is announced before the commit");
      await settle(3);
      assert.equal(
        heard.slice(1).map((n) => n.kind),
        ["log", "run"],
      );
      assert.equal(heard[2], planStartedNotice(run.id));

      await inTransaction(db, async (trx) => {
        await trx.logs.append(run.id, "apply", "never\n", false, at(3));
        throw new Error("roll back");
      }).catch(() => undefined);
      // A committed chunk after it is announced after anything the rollback could have announced.
      await stores.logs.append(run.id, "apply", "sentinel\n", false, at(4));
      await settle(4);
      assert.is(heard.length, 4, "a rolled-back write announces nothing");
      assert.equal(heard[3], { kind: "log", runId: run.id, phase: "apply", seq: 0, final: false, text: "sentinel\n" });
    } finally {
      unsubscribe();
      await changes.close();
    }
  },
);

payloads.run();
feed.run();
