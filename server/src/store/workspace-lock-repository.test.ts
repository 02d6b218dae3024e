import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { createStores } from "./index.ts";
import { assertDomainError, at, countRows, seedTenancy } from "../../test/support/store-fixtures.ts";
import { translateError } from "./translate-error.ts";

const locks = suite("WorkspaceLockRepository");

const alice = { kind: "user" as const, id: "prn-alice00000000000" };
const bob = { kind: "user" as const, id: "prn-bob0000000000000" };
const run = { kind: "run" as const, id: "run-0000000000000001" };

testEachDatabase(
  locks,
  "acquire takes a free lock with fence 1 and reports the held lock to everyone after, the holder included",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const { workspace } = await seedTenancy(stores);
    assert.is(await stores.workspaceLocks.current(workspace.id), undefined);
    assert.is(await stores.workspaceLocks.lastFence(workspace.id), 0);
    const first = await stores.workspaceLocks.acquire(workspace.id, alice, "Locked by OpenTofu", at(1));
    const expected = {
      workspaceId: workspace.id,
      holder: alice,
      fence: 1,
      reason: "Locked by OpenTofu",
      lockedAt: at(1),
    };
    assert.equal(first, { acquired: true, lock: expected });
    assert.equal(await stores.workspaceLocks.current(workspace.id), expected);
    assert.equal(await stores.workspaceLocks.acquire(workspace.id, bob, "x", at(2)), {
      acquired: false,
      lock: expected,
    });
    assert.equal(await stores.workspaceLocks.acquire(workspace.id, alice, "again", at(3)), {
      acquired: false,
      lock: expected,
    });
    // A refused acquisition hands out no fence.
    assert.is(await stores.workspaceLocks.lastFence(workspace.id), 1);
  },
);

testEachDatabase(locks, "every acquisition gets a larger fence, across releases and forced releases", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const { workspace } = await seedTenancy(stores);
  const fences: number[] = [];
  for (const [i, holder] of [alice, run, bob, run].entries()) {
    const result = await stores.workspaceLocks.acquire(workspace.id, holder, "", at(i));
    assert.ok(result.acquired);
    fences.push(result.lock.fence);
    if (i % 2 === 0) assert.ok(await stores.workspaceLocks.release(workspace.id, holder));
    else assert.equal((await stores.workspaceLocks.forceRelease(workspace.id))?.fence, result.lock.fence);
  }
  assert.equal(fences, [1, 2, 3, 4]);
  assert.is(await stores.workspaceLocks.lastFence(workspace.id), 4);
});

testEachDatabase(
  locks,
  "release frees only the holder’s lock; forceRelease frees anyone’s and returns it",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const { workspace } = await seedTenancy(stores);
    assert.is(await stores.workspaceLocks.release(workspace.id, alice), false);
    assert.is(await stores.workspaceLocks.forceRelease(workspace.id), undefined);
    await stores.workspaceLocks.acquire(workspace.id, run, "apply", at(1));
    assert.is(await stores.workspaceLocks.release(workspace.id, alice), false);
    assert.is(
      await stores.workspaceLocks.release(workspace.id, { kind: "user", id: run.id }),
      false,
      "the kind is part of the holder",
    );
    assert.equal((await stores.workspaceLocks.current(workspace.id))?.holder, run);
    const released = await stores.workspaceLocks.forceRelease(workspace.id);
    assert.equal(released, { workspaceId: workspace.id, holder: run, fence: 1, reason: "apply", lockedAt: at(1) });
    assert.is(await stores.workspaceLocks.current(workspace.id), undefined);
  },
);

testEachDatabase(
  locks,
  "concurrent acquisitions of one workspace: exactly one wins, every loser sees the winner’s fence",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const { workspace } = await seedTenancy(stores);
    for (let round = 0; round < 3; round += 1) {
      const holders = Array.from({ length: 8 }, (_, i) => ({
        kind: "user" as const,
        id: `prn-racer${round}${String(i).padStart(10, "0")}`,
      }));
      // Each acquisition on its own executor, so PostgreSQL really runs them side by side.
      const results = await Promise.all(
        holders.map((holder) =>
          createStores(db.knex, db.dialect).workspaceLocks.acquire(workspace.id, holder, "race", at(round)),
        ),
      );
      const winners = results.filter((r) => r.acquired);
      assert.is(winners.length, 1, JSON.stringify(results));
      const winner = winners[0].lock;
      assert.is(winner.fence, round + 1);
      for (const result of results) assert.equal(result.lock, winner);
      assert.is(await stores.workspaceLocks.lastFence(workspace.id), round + 1, "losers roll their fence back");
      assert.ok(await stores.workspaceLocks.release(workspace.id, winner.holder));
    }
  },
);

testEachDatabase(
  locks,
  "the database refuses a second lock row, an unknown holder kind, and a lock on a missing workspace",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const { workspace } = await seedTenancy(stores);
    await stores.workspaceLocks.acquire(workspace.id, alice, "", at(1));
    const raw = (row: Record<string, unknown>) =>
      db
        .knex("workspace_locks")
        .insert({
          workspace_id: workspace.id,
          holder_kind: "user",
          holder_id: "prn-x",
          fence: 9,
          reason: "",
          locked_at: at(2),
          ...row,
        })
        .catch((error: unknown) => Promise.reject(translateError(db.dialect, error)));
    await assertDomainError(raw({}), "CONSTRAINT_VIOLATION");
    await stores.workspaceLocks.forceRelease(workspace.id);
    await assertDomainError(raw({ holder_kind: "team" }), "CONSTRAINT_VIOLATION");
    await assertDomainError(raw({ workspace_id: "ws-0000000000000000" }), "CONSTRAINT_VIOLATION");
    await assertDomainError(
      stores.workspaceLocks.acquire("ws-0000000000000000", alice, "", at(3)),
      "CONSTRAINT_VIOLATION",
    );
    assert.is(await countRows(db.knex, "workspace_locks"), 0);
  },
);

locks.run();
