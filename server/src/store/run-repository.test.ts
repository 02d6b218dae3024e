import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { decodeRunCursor, encodeRunCursor } from "../domain/cursor.ts";
import { isId } from "../domain/ids.ts";
import type { Run } from "../domain/records.ts";
import type { Database } from "./db.ts";
import type { DbBoolean } from "./rows.ts";
import { createStores, inTransaction } from "./index.ts";
import { RunRepository } from "./run-repository.ts";
import {
  assertDomainError,
  assertRejects,
  at,
  countRows,
  runInput,
  seedRunPrerequisites,
  storesWithRun,
  type RunPrerequisites,
} from "../../test/support/store-fixtures.ts";
import { runExecution } from "../../test/support/domain-fixtures.ts";
import { translateError } from "./translate-error.ts";

const CURSOR_SECRET = Buffer.from("run-repository-test-secret-0123456789");

/** A raw runs row for the prerequisites, as a stale or hostile writer would insert it. */
function rawRunRow(
  prerequisites: RunPrerequisites,
  id: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    organization_id: prerequisites.organization.id,
    project_id: prerequisites.project.id,
    workspace_id: prerequisites.workspace.id,
    configuration_version_id: prerequisites.configurationVersion.id,
    input_snapshot_id: prerequisites.snapshot.id,
    kind: "plan_and_apply",
    status: "pending",
    message: "",
    source: "api",
    auto_apply: false,
    is_destroy: false,
    config_digest: "a".repeat(64),
    input_digest: prerequisites.snapshot.inputDigest,
    opentofu_version: "1.8.5",
    execution_region: "eu-west-1",
    platform: "linux_amd64",
    created_by: null,
    created_at: at(10),
    updated_at: at(10),
    ...overrides,
  };
}

async function rejectsTranslated(db: Database, promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return translateError(db.dialect, error);
  }
  return assert.unreachable("the database accepted the row");
}

const NOTHING_EXECUTED = runExecution({ planImports: null, planGeneratedConfiguration: null });

const runs = suite("RunRepository");

testEachDatabase(
  runs,
  "create and getById round-trip with exact timestamps; the flags are always false",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const prerequisites = await seedRunPrerequisites(stores);
    // Every field of the input comes back as given (the fixture's ids, digests, version, region and platform).
    const input = runInput(prerequisites, {
      message: "first",
      createdBy: "prn-0000000000000001",
      createdAt: "2026-12-02T10:11:12.345Z",
      autoApply: false,
      isDestroy: false,
    });
    const run = await stores.runs.create(input);
    assert.ok(isId("run", run.id));
    assert.equal(run, {
      ...input,
      id: run.id,
      status: "pending",
      updatedAt: "2026-12-02T10:11:12.345Z",
      commit: null,
      sourceWorkingDirectory: null,
      pullRequestNumber: null,
      execution: NOTHING_EXECUTED,
      structuredRunOutput: false,
      allowConfigGeneration: false,
    });
    assert.equal(
      [run.kind, run.source, run.configDigest, run.opentofuVersion, run.executionRegion, run.platform],
      ["plan_and_apply", "api", "a".repeat(64), "1.8.5", "eu-west-1", "linux_amd64"],
    );
    assert.equal(await stores.runs.getById(run.id), run);
    assert.is(await stores.runs.getById("run-0000000000000000"), undefined);
    const [row] = await db
      .knex("runs")
      .where({ id: run.id })
      .select<Array<{ auto_apply: DbBoolean; is_destroy: DbBoolean }>>("auto_apply", "is_destroy");
    assert.not.ok(row.auto_apply);
    assert.not.ok(row.is_destroy);
  },
);

testEachDatabase(runs, "update is compare-and-set on the status and round-trips every execution field", async (db) => {
  const { stores, run } = await storesWithRun(db);
  const patch = {
    status: "awaiting_approval" as const,
    planStatus: "finished" as const,
    hasChanges: true,
    planCounts: { create: 2, change: 1, destroy: 3 },
    planDigest: "b".repeat(64),
    dependencyBundleDigest: "c".repeat(64),
    dependencyLockFile: "# lock",
    policyOutcome: "skipped" as const,
    policyResultDigest: "d".repeat(64),
    workspaceLockFence: 7,
    approvalExpiresAt: "2026-12-03T10:11:12.345Z",
    updatedAt: "2026-12-02T10:11:13.000Z",
  };
  assert.is(await stores.runs.update(run.id, "planning", patch), undefined, "a stale expected status changes nothing");
  assert.is((await stores.runs.getById(run.id))!.status, "pending");
  const updated = await stores.runs.update(run.id, "pending", patch);
  assert.is(updated!.status, "awaiting_approval");
  assert.is(updated!.updatedAt, "2026-12-02T10:11:13.000Z");
  const { status: _status, updatedAt: _updatedAt, ...execution } = patch;
  assert.equal(updated!.execution, { ...NOTHING_EXECUTED, ...execution });
  assert.equal(await stores.runs.getById(run.id), updated);
  await assertRejects(
    stores.runs.update(run.id, "awaiting_approval", { planStatus: "bogus" as never, updatedAt: patch.updatedAt }),
    TypeError,
  );
});

const REFUSED: Array<[string, Record<string, unknown>, string]> = [
  ["autoApply: true", { autoApply: true }, "RUN_AUTO_APPLY_FORBIDDEN"],
  ["autoApply: 'true'", { autoApply: "true" }, "RUN_AUTO_APPLY_FORBIDDEN"],
  ["autoApply: 1", { autoApply: 1 }, "RUN_AUTO_APPLY_FORBIDDEN"],
  ["autoApply: null", { autoApply: null }, "RUN_AUTO_APPLY_FORBIDDEN"],
  ["auto_apply: true", { auto_apply: true }, "RUN_AUTO_APPLY_FORBIDDEN"],
  ["autoApply: false with auto_apply: true", { autoApply: false, auto_apply: true }, "RUN_AUTO_APPLY_FORBIDDEN"],
  ["isDestroy: true", { isDestroy: true }, "RUN_DESTROY_FORBIDDEN"],
  ["is_destroy: 'yes'", { is_destroy: "yes" }, "RUN_DESTROY_FORBIDDEN"],
  ["isDestroy: false with is_destroy: 1", { isDestroy: false, is_destroy: 1 }, "RUN_DESTROY_FORBIDDEN"],
  ["both flags", { autoApply: true, isDestroy: true }, "RUN_AUTO_APPLY_FORBIDDEN"],
  ["unknown kind", { kind: "destroy" }, "DOCUMENT_INVALID"],
];

testEachDatabase(runs, "create refuses auto-apply, destroy and unknown kinds before any query", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const prerequisites = await seedRunPrerequisites(stores);
  const queries: string[] = [];
  const listener = (query: { sql: string }) => queries.push(query.sql);
  db.knex.on("query", listener);
  try {
    for (const [label, overrides, code] of REFUSED) {
      const input = { ...runInput(prerequisites), ...overrides };
      await assertDomainError(stores.runs.create(input), code as never, label);
    }
  } finally {
    db.knex.off("query", listener);
  }
  assert.equal(queries, []);
  assert.is(await countRows(db.knex, "runs"), 0);
});

testEachDatabase(runs, "a refused run inside a command transaction leaves no run and no snapshot", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const prerequisites = await seedRunPrerequisites(stores);
  const snapshotsBefore = await countRows(db.knex, "input_snapshots");
  for (const [label, overrides, code] of REFUSED) {
    await assertDomainError(
      inTransaction(db, async (trx) => {
        const snapshot = await trx.snapshots.create({
          workspaceId: prerequisites.workspace.id,
          inputDigest: prerequisites.snapshot.inputDigest,
          document: prerequisites.snapshot.document,
          secrets: [],
          createdAt: at(20),
        });
        await trx.runs.create({ ...runInput(prerequisites, { inputSnapshotId: snapshot.id }), ...overrides });
      }),
      code as never,
      label,
    );
  }
  assert.is(await countRows(db.knex, "runs"), 0);
  assert.is(await countRows(db.knex, "input_snapshots"), snapshotsBefore);
});

testEachDatabase(runs, "the CHECK constraints refuse auto_apply and is_destroy from a raw insert", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const prerequisites = await seedRunPrerequisites(stores);
  await stores.runs.create(runInput(prerequisites));
  const before = await countRows(db.knex, "runs");
  assert.is(before, 1);

  const cases: Array<[Record<string, unknown>, string]> = [
    [{ auto_apply: true }, "RUN_AUTO_APPLY_FORBIDDEN"],
    [{ is_destroy: true }, "RUN_DESTROY_FORBIDDEN"],
  ];
  // SQLite has no boolean type: any non-zero or non-numeric value must be refused too.
  if (db.dialect === "sqlite")
    cases.push(
      [{ auto_apply: 1 }, "RUN_AUTO_APPLY_FORBIDDEN"],
      [{ auto_apply: 2 }, "RUN_AUTO_APPLY_FORBIDDEN"],
      [{ auto_apply: "true" }, "RUN_AUTO_APPLY_FORBIDDEN"],
      [{ is_destroy: -1 }, "RUN_DESTROY_FORBIDDEN"],
    );
  let index = 0;
  for (const [overrides, code] of cases) {
    index += 1;
    const id = `run-raw0000000000${String(index).padStart(2, "0")}`;
    const error = await rejectsTranslated(db, db.knex("runs").insert(rawRunRow(prerequisites, id, overrides)));
    assert.is((error as { code?: string }).code, code, JSON.stringify(overrides));
    assert.is(await countRows(db.knex, "runs"), before);
  }
});

testEachDatabase(runs, "the CHECK constraints refuse a literal true in raw SQL and an UPDATE", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const prerequisites = await seedRunPrerequisites(stores);
  const existing = await stores.runs.create(runInput(prerequisites));
  const before = await countRows(db.knex, "runs");

  for (const [column, code] of [
    ["auto_apply", "RUN_AUTO_APPLY_FORBIDDEN"],
    ["is_destroy", "RUN_DESTROY_FORBIDDEN"],
  ] as const) {
    const row = rawRunRow(prerequisites, `run-literal${column === "auto_apply" ? "aaaaa" : "bbbbb"}`);
    const columns = Object.keys(row);
    const values = columns.map((name) =>
      name === column ? "true" : name === "auto_apply" || name === "is_destroy" ? "false" : "?",
    );
    const bindings = columns
      .filter((name) => name !== "auto_apply" && name !== "is_destroy")
      .map((name) => row[name] as string | null);
    const sql = `insert into runs (${columns.join(", ")}) values (${values.join(", ")})`;
    const error = await rejectsTranslated(db, db.knex.raw(sql, bindings));
    assert.is((error as { code?: string }).code, code, sql);
    assert.is(await countRows(db.knex, "runs"), before);

    const updateError = await rejectsTranslated(
      db,
      db.knex.raw(`update runs set ${column} = true where id = ?`, [existing.id]),
    );
    assert.is((updateError as { code?: string }).code, code);
  }
  const [row] = await db
    .knex("runs")
    .where({ id: existing.id })
    .select<Array<{ auto_apply: DbBoolean; is_destroy: DbBoolean }>>("auto_apply", "is_destroy");
  assert.not.ok(row.auto_apply);
  assert.not.ok(row.is_destroy);
});

function expectedOrder(list: Run[]): string[] {
  return [...list]
    .sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1,
    )
    .map((run) => run.id);
}

async function seedInventory(
  db: Database,
): Promise<{ prerequisites: RunPrerequisites; created: Run[]; foreign: Run[] }> {
  return inTransaction(db, async (stores) => {
    const prerequisites = await seedRunPrerequisites(stores, "acme");
    const other = await seedRunPrerequisites(stores, "other");
    const shared = at(500);
    const created: Run[] = [];
    for (let index = 0; index < 250; index += 1) {
      // 120 runs share one timestamp, the rest spread on both sides of it.
      const createdAt = index < 120 ? shared : at(index * 7 - 400, index);
      created.push(await stores.runs.create(runInput(prerequisites, { createdAt, message: `run ${index}` })));
    }
    const foreign: Run[] = [];
    for (let index = 0; index < 30; index += 1) {
      foreign.push(
        await stores.runs.create(runInput(other, { createdAt: index % 2 === 0 ? shared : at(index * 11 - 100) })),
      );
    }
    return { prerequisites, created, foreign };
  });
}

async function pageThrough(
  repository: RunRepository,
  organizationId: string,
  limit: number,
): Promise<{ ids: string[]; pages: Array<{ size: number; hasMore: boolean }> }> {
  const ids: string[] = [];
  const pages: Array<{ size: number; hasMore: boolean }> = [];
  let cursor: string | undefined;
  for (;;) {
    const after = cursor === undefined ? undefined : decodeRunCursor(cursor, CURSOR_SECRET);
    const page = await repository.listByOrganization(organizationId, { limit, after });
    ids.push(...page.runs.map((run) => run.id));
    pages.push({ size: page.runs.length, hasMore: page.hasMore });
    if (!page.hasMore) return { ids, pages };
    const last = page.runs[page.runs.length - 1];
    cursor = encodeRunCursor({ createdAt: last.createdAt, id: last.id }, CURSOR_SECRET);
    assert.ok(pages.length < 100, "pagination does not terminate");
  }
}

testEachDatabase(
  runs,
  "keyset pages through 250 runs (120 sharing one timestamp) exactly once, newest first",
  async (db) => {
    const { prerequisites, created, foreign } = await seedInventory(db);
    const repository = createStores(db.knex, db.dialect).runs;

    const { ids, pages } = await pageThrough(repository, prerequisites.organization.id, 7);
    assert.is(ids.length, 250);
    assert.is(new Set(ids).size, 250);
    assert.equal(ids, expectedOrder(created));
    const foreignIds = new Set(foreign.map((run) => run.id));
    assert.not.ok(ids.some((id) => foreignIds.has(id)));
    assert.is(pages.length, 36);
    assert.ok(pages.slice(0, -1).every((page) => page.size === 7 && page.hasMore));
    assert.equal(pages[pages.length - 1], { size: 5, hasMore: false });

    // When the total is a multiple of the limit the last full page already says there is no more.
    const exact = await pageThrough(repository, prerequisites.organization.id, 5);
    assert.is(exact.pages.length, 50);
    assert.equal(exact.pages[exact.pages.length - 1], { size: 5, hasMore: false });
    assert.equal(exact.ids, ids);

    const single = await pageThrough(repository, prerequisites.organization.id, 1000);
    assert.equal(single.pages, [{ size: 250, hasMore: false }]);
    assert.equal(single.ids, ids);
  },
);

testEachDatabase(runs, "lists return full records and respect the workspace filter", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const prerequisites = await seedRunPrerequisites(stores);
  const first = await stores.runs.create(runInput(prerequisites, { createdAt: at(1) }));
  const second = await stores.runs.create(runInput(prerequisites, { createdAt: at(2), kind: "speculative" }));
  assert.equal(await stores.runs.listByOrganization(prerequisites.organization.id, { limit: 10 }), {
    runs: [second, first],
    hasMore: false,
  });
  assert.equal(await stores.runs.listByWorkspace(prerequisites.workspace.id, { limit: 1 }), {
    runs: [second],
    hasMore: true,
  });
  assert.equal(
    await stores.runs.listByWorkspace(prerequisites.workspace.id, {
      limit: 1,
      after: { createdAt: second.createdAt, id: second.id },
    }),
    {
      runs: [first],
      hasMore: false,
    },
  );
  assert.equal(await stores.runs.listByOrganization("org-0000000000000000", { limit: 10 }), {
    runs: [],
    hasMore: false,
  });
  await assertRejects(stores.runs.listByOrganization(prerequisites.organization.id, { limit: 0 }), TypeError);
  await assertRejects(stores.runs.listByOrganization(prerequisites.organization.id, { limit: 1.5 }), TypeError);
});

testEachDatabase(runs, "the keyset query is an index range scan, never a sort or an offset", async (db) => {
  const { prerequisites, created } = await seedInventory(db);
  await db.knex.raw(db.dialect === "postgres" ? "analyze runs" : "analyze");
  const middle = expectedOrder(created)[100];
  const after = { createdAt: created.find((run) => run.id === middle)?.createdAt ?? "", id: middle };

  await db.knex.transaction(async (trx) => {
    const captured: Array<{ sql: string; bindings: unknown[] }> = [];
    trx.on("query", (query: { sql: string; bindings: unknown[] }) => captured.push(query));
    if (db.dialect === "postgres") await trx.raw("set local enable_seqscan = off");
    await new RunRepository(trx, db.dialect).listByOrganization(prerequisites.organization.id, { limit: 7, after });
    const query = captured.find((entry) => /from .runs./.test(entry.sql));
    assert.ok(query, "captured the list query");
    assert.not.match(query.sql, /offset/i);
    const bindings = query.bindings as readonly string[];
    if (db.dialect === "postgres") {
      // The event carries pg's native $n placeholders; knex.raw wants ?.
      const sql = query.sql.replace(/\$\d+/g, "?");
      const plan = (await trx.raw<{ rows: Array<{ "QUERY PLAN": string }> }>(`explain ${sql}`, bindings)).rows
        .map((row) => row["QUERY PLAN"])
        .join("\n");
      assert.match(plan, /Index Scan Backward using runs_org_created_id/);
      assert.match(plan, /Index Cond: .*organization_id.*ROW\(created_at, .*\) < ROW\(/);
      assert.not.match(plan, /Sort/);
    } else {
      const plan = (await trx.raw<Array<{ detail: string }>>(`explain query plan ${query.sql}`, bindings))
        .map((row) => row.detail)
        .join("\n");
      assert.match(plan, /runs_org_created_id/);
      assert.not.match(plan, /TEMP B-TREE/);
    }
  });
});

runs.run();
