import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase, testDialects, withDatabase } from "../../test/support/databases.ts";
import { auditChainOf, DEPLOYMENT_CHAIN, verifyAuditChain } from "../domain/audit-chain.ts";
import { migrateDown, migrateLatest } from "./db.ts";
import { createStores, inTransaction, type Database } from "./index.ts";
import { at } from "../../test/support/store-fixtures.ts";

const chain = suite("audit events: a hash chain per organization");

const ORG_A = "org-aaaaaaaaaaaaaaaa";
const ORG_B = "org-bbbbbbbbbbbbbbbb";
// No checkpoint is involved below: any well-formed key will do.
const UNUSED_KEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";

async function verifyStored(db: Database, name: string) {
  const stores = createStores(db.knex, db.dialect);
  const head = await stores.audit.head(name);
  return verifyAuditChain({
    chain: name,
    events: await stores.audit.listChain(name),
    checkpoints: [],
    verifierKey: UNUSED_KEY,
    head,
  });
}

testEachDatabase(
  chain,
  "events chain per organization, deployment events in their own chain; a rolled-back change leaves no link",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    await stores.audit.record({
      organizationId: ORG_A,
      actorId: null,
      action: "a.one",
      targetType: "t",
      targetId: "1",
      createdAt: at(1),
    });
    await stores.audit.record({
      organizationId: null,
      actorId: null,
      action: "d.one",
      targetType: "t",
      targetId: "2",
      createdAt: at(2),
    });
    await stores.audit.record({
      organizationId: ORG_B,
      actorId: null,
      action: "b.one",
      targetType: "t",
      targetId: "3",
      createdAt: at(3),
    });
    const failed = await inTransaction(db, async (trx) => {
      await trx.audit.record({
        organizationId: ORG_A,
        actorId: null,
        action: "a.rolled_back",
        targetType: "t",
        targetId: "4",
        createdAt: at(4),
      });
      throw new Error("the change fails");
    }).catch((error: unknown) => error);
    assert.instance(failed, Error);
    await inTransaction(db, (trx) =>
      trx.audit.record({
        organizationId: ORG_A,
        actorId: null,
        action: "a.two",
        targetType: "t",
        targetId: "5",
        createdAt: at(5),
      }),
    );
    const a = await stores.audit.listChain(auditChainOf(ORG_A));
    assert.equal(
      a.map((e) => [e.sequence, e.action]),
      [
        [0, "a.one"],
        [1, "a.two"],
      ],
    );
    assert.is(a[1].previousDigest, a[0].digest);
    assert.is((await stores.audit.listChain(DEPLOYMENT_CHAIN)).length, 1);
    for (const name of [ORG_A, ORG_B, DEPLOYMENT_CHAIN]) assert.is((await verifyStored(db, name)).problem, null, name);
  },
);

testEachDatabase(
  chain,
  "concurrent writers to one organization get consecutive positions and a valid chain",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        inTransaction(db, (trx) =>
          trx.audit.record({
            organizationId: ORG_A,
            actorId: null,
            action: "c.write",
            targetType: "t",
            targetId: String(i),
            createdAt: at(i),
          }),
        ),
      ),
    );
    assert.equal(
      (await stores.audit.listChain(ORG_A)).map((e) => e.sequence),
      Array.from({ length: 12 }, (_, i) => i),
    );
    const report = await verifyStored(db, ORG_A);
    assert.is(report.problem, null);
    assert.is(report.verifiedEvents, 12);
  },
);

// PostgreSQL only: SQLite has a single writer by design. An open transaction that recorded an event
// of organization A holds A's chain head; organization B's writers must not wait for it, A's must.
for (const dialect of testDialects().filter((d) => d === "postgres")) {
  chain(`an open transaction holds only its own organization's chain [${dialect}]`, () =>
    withDatabase(dialect, async (db) => {
      const stores = createStores(db.knex, db.dialect);
      await stores.audit.record({
        organizationId: ORG_A,
        actorId: null,
        action: "a.first",
        targetType: "t",
        targetId: "0",
        createdAt: at(0),
      });
      const trx = await db.knex.transaction();
      let sameOrg: Promise<unknown> | undefined;
      try {
        await createStores(trx, db.dialect).audit.record({
          organizationId: ORG_A,
          actorId: null,
          action: "a.held",
          targetType: "t",
          targetId: "1",
          createdAt: at(1),
        });
        // Another organization completes while A's transaction is open.
        await stores.audit.record({
          organizationId: ORG_B,
          actorId: null,
          action: "b.free",
          targetType: "t",
          targetId: "2",
          createdAt: at(2),
        });
        // A second writer to A waits on A's head row until the first commits.
        let settled = false;
        sameOrg = stores.audit
          .record({
            organizationId: ORG_A,
            actorId: null,
            action: "a.waits",
            targetType: "t",
            targetId: "3",
            createdAt: at(3),
          })
          .finally(() => {
            settled = true;
          });
        for (;;) {
          const waiting = await db.knex.raw<{ rows: unknown[] }>(
            "select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%audit_chain_heads%'",
          );
          if (waiting.rows.length > 0) break;
          assert.not.ok(settled, "the second writer to organization A did not wait for the first");
          await new Promise((resolve) => setImmediate(resolve));
        }
        await trx.commit();
      } catch (error) {
        await trx.rollback();
        throw error;
      }
      await sameOrg;
      assert.equal(
        (await stores.audit.listChain(ORG_A)).map((e) => e.action),
        ["a.first", "a.held", "a.waits"],
      );
      assert.is((await verifyStored(db, ORG_A)).problem, null);
    }),
  );
}

testEachDatabase(
  chain,
  "the migration chains the events written before it, per organization, in (created_at, id) order",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    while (!(await migrateDown(db)).includes("20261204200000_create_audit_chain"));
    const legacy = [
      { id: "aud-0000000000000003", organization_id: ORG_A, created_at: at(2) },
      { id: "aud-0000000000000001", organization_id: ORG_A, created_at: at(1) },
      { id: "aud-0000000000000002", organization_id: null, created_at: at(1) },
      { id: "aud-0000000000000004", organization_id: ORG_A, created_at: at(2) },
    ];
    for (const row of legacy) {
      await db.knex("audit_events").insert({
        ...row,
        actor_id: null,
        action: "legacy",
        target_type: "t",
        target_id: row.id,
        reason: null,
        data: '{"k":1}',
      });
    }
    // More than one page of the migration (1,000 rows) in another organization.
    const many = Array.from({ length: 1003 }, (_, i) => ({
      id: `aud-1${String(i).padStart(15, "0")}`,
      organization_id: ORG_B,
      actor_id: null,
      action: "legacy",
      target_type: "t",
      target_id: String(i),
      reason: null,
      data: "{}",
      created_at: at(i % 7),
    }));
    await db.knex.batchInsert("audit_events", many, 200);
    await migrateLatest(db);
    const b = await verifyStored(db, ORG_B);
    assert.is(b.problem, null);
    assert.is(b.verifiedEvents, 1003);
    assert.equal(
      (await stores.audit.listChain(ORG_A)).map((e) => [e.sequence, e.id]),
      [
        [0, "aud-0000000000000001"],
        [1, "aud-0000000000000003"],
        [2, "aud-0000000000000004"],
      ],
    );
    assert.is((await verifyStored(db, ORG_A)).problem, null);
    assert.is((await verifyStored(db, DEPLOYMENT_CHAIN)).problem, null);
    // The chain goes on from the migrated head.
    await stores.audit.record({
      organizationId: ORG_A,
      actorId: null,
      action: "new",
      targetType: "t",
      targetId: "n",
      createdAt: at(3),
    });
    const report = await verifyStored(db, ORG_A);
    assert.is(report.problem, null);
    assert.is(report.verifiedEvents, 4);
  },
);

chain.run();
