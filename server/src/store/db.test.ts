import { migrations as migrationList } from "./migrations/index.ts";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { dialectOf, migrateDown, migrateLatest, openDatabase, rollbackAll } from "./db.ts";

const FOUNDATION_TABLES = [
  "api_tokens",
  "audit_events",
  "configuration_versions",
  "input_snapshots",
  "organizations",
  "permission_grants",
  "principals",
  "projects",
  "runs",
  "snapshot_secrets",
  "workspace_variables",
  "workspaces",
];
const EXECUTION_TABLES = ["run_attempts", "run_jobs", "run_log_chunks", "run_reviews"];
const MIGRATION_NAMES = migrationList.map((m) => m.name);
const LAST = MIGRATION_NAMES[MIGRATION_NAMES.length - 1];

const open = suite("openDatabase");

open("opens an in-memory SQLite database with foreign keys on", async () => {
  const db = await openDatabase("sqlite::memory:");
  try {
    assert.is(db.dialect, "sqlite");
    assert.is(dialectOf(db.knex), "sqlite");
    const [foreignKeys] = await db.knex.raw<Array<{ foreign_keys: number }>>("pragma foreign_keys");
    assert.is(foreignKeys.foreign_keys, 1);
  } finally {
    await db.close();
  }
});

open("opens an absolute SQLite path, creating its directory, with WAL and a busy timeout", async () => {
  const directory = await mkdtemp(join(tmpdir(), "ss-db-"));
  try {
    const file = join(directory, "nested", "deeper", "stackship.db");
    const db = await openDatabase(`sqlite://${file}`);
    try {
      assert.ok(existsSync(file));
      const [journal] = await db.knex.raw<Array<{ journal_mode: string }>>("pragma journal_mode");
      assert.is(journal.journal_mode, "wal");
      const [busy] = await db.knex.raw<Array<{ timeout: number }>>("pragma busy_timeout");
      assert.is(busy.timeout, 5000);
      const [foreignKeys] = await db.knex.raw<Array<{ foreign_keys: number }>>("pragma foreign_keys");
      assert.is(foreignKeys.foreign_keys, 1);
    } finally {
      await db.close();
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});

open("opens a relative SQLite path against the working directory", async () => {
  const directory = await mkdtemp(join(tmpdir(), "ss-db-"));
  try {
    const file = join(directory, "rel", "stackship.db");
    const db = await openDatabase(`sqlite://${relative(process.cwd(), file)}`);
    await db.close();
    assert.ok(existsSync(file));
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});

open("refuses unknown schemes and empty SQLite paths", async () => {
  for (const url of ["mysql://localhost/x", "sqlite://", "sqlite:relative.db", "file:///tmp/x.db"]) {
    try {
      await openDatabase(url);
      assert.unreachable(url);
    } catch (error) {
      assert.instance(error, Error);
      assert.not.instance(error, assert.Assertion, url);
    }
  }
});

async function tableNames(db: Awaited<ReturnType<typeof openDatabase>>): Promise<string[]> {
  if (db.dialect === "sqlite") {
    const rows = await db.knex.raw<Array<{ name: string }>>(
      "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'knex_%'",
    );
    return rows.map((row) => row.name).sort();
  }
  const result = await db.knex.raw<{ rows: Array<{ tablename: string }> }>(
    "select tablename from pg_tables where schemaname = 'public' and tablename not like 'knex_%'",
  );
  return result.rows.map((row) => row.tablename).sort();
}

const migrations = suite("migrations");

migrations(
  "the list is in ascending, unique timestamp order (the order they apply in is the order of their names)",
  () => {
    const stamps = MIGRATION_NAMES.map((name) => name.slice(0, 14));
    for (const stamp of stamps) assert.match(stamp, /^\d{14}$/);
    assert.equal(stamps, [...new Set(stamps)].sort());
  },
);

testEachDatabase(
  migrations,
  "migrate up, down, then up again",
  async (db) => {
    const progress: string[] = [];
    assert.equal(await migrateLatest(db, (message) => progress.push(message)), MIGRATION_NAMES);
    assert.ok(progress.some((message) => message.includes("20261202000000_create_foundation")));
    const all = await tableNames(db);
    for (const table of [...FOUNDATION_TABLES, ...EXECUTION_TABLES]) assert.ok(all.includes(table), `missing ${table}`);
    assert.equal(await migrateLatest(db), [], "a second run applies nothing");

    // Down reverts only the newest migration; the older tables stay.
    assert.equal(await migrateDown(db), [LAST]);
    assert.ok((await tableNames(db)).includes("runs"));
    assert.equal(await migrateLatest(db), [LAST]);
    assert.equal(await tableNames(db), all);
    if (db.dialect === "sqlite") {
      // Dropping columns makes SQLite rebuild the table; the invariant's CHECKs must survive it.
      const [table] = await db.knex.raw<Array<{ sql: string }>>("select sql from sqlite_master where name = 'runs'");
      assert.match(table.sql, "runs_auto_apply_false");
      assert.match(table.sql, "runs_is_destroy_false");
    }

    assert.equal(await rollbackAll(db), [...MIGRATION_NAMES].reverse());
    assert.equal(await tableNames(db), []);
    assert.equal(await migrateLatest(db), MIGRATION_NAMES);
  },
  { migrate: false },
);

testEachDatabase(migrations, "creates the run indexes and named CHECK constraints", async (db) => {
  if (db.dialect === "sqlite") {
    const indexes = await db.knex.raw<Array<{ name: string }>>(
      "select name from sqlite_master where type = 'index' and tbl_name = 'runs'",
    );
    const names = indexes.map((index) => index.name);
    assert.ok(names.includes("runs_org_created_id"));
    assert.ok(names.includes("runs_ws_created_id"));
    const [table] = await db.knex.raw<Array<{ sql: string }>>("select sql from sqlite_master where name = 'runs'");
    assert.match(table.sql, "constraint runs_auto_apply_false check (`auto_apply` = false)");
    assert.match(table.sql, "constraint runs_is_destroy_false check (`is_destroy` = false)");
    return;
  }
  const indexes = await db.knex.raw<{ rows: Array<{ indexname: string; indexdef: string }> }>(
    "select indexname, indexdef from pg_indexes where tablename = 'runs'",
  );
  const byName = new Map(indexes.rows.map((row) => [row.indexname, row.indexdef]));
  assert.match(byName.get("runs_org_created_id") ?? "", "(organization_id, created_at, id)");
  assert.match(byName.get("runs_ws_created_id") ?? "", "(workspace_id, created_at, id)");
  const checks = await db.knex.raw<{
    rows: Array<{ conname: string; definition: string }>;
  }>(
    "select conname, pg_get_constraintdef(oid) as definition from pg_constraint where conrelid = 'runs'::regclass and contype = 'c'",
  );
  const definitions = new Map(checks.rows.map((row) => [row.conname, row.definition]));
  assert.is(definitions.get("runs_auto_apply_false"), "CHECK ((auto_apply = false))");
  assert.is(definitions.get("runs_is_destroy_false"), "CHECK ((is_destroy = false))");
});

testEachDatabase(migrations, "stores timestamps as timestamptz(3) on PostgreSQL and ISO text on SQLite", async (db) => {
  if (db.dialect === "postgres") {
    const result = await db.knex.raw<{
      rows: Array<{ data_type: string; datetime_precision: number }>;
    }>(
      "select data_type, datetime_precision from information_schema.columns where table_name = 'runs' and column_name = 'created_at'",
    );
    assert.equal({ ...result.rows[0] }, { data_type: "timestamp with time zone", datetime_precision: 3 });
    return;
  }
  // Any spelling but toISOString()'s would sort wrongly as text, so SQLite refuses it.
  await db
    .knex("organizations")
    .insert({ id: "org-aaaaaaaaaaaaaaaa", name: "ok", created_at: "2026-12-02T09:00:00.000Z" });
  for (const bad of ["2026-12-02 09:00:00", "2026-12-02T09:00:00Z", "1764666000000"]) {
    try {
      await db.knex("organizations").insert({ id: "org-bbbbbbbbbbbbbbbb", name: bad, created_at: bad });
      assert.unreachable(bad);
    } catch (error) {
      assert.is((error as { code?: string }).code, "SQLITE_CONSTRAINT_CHECK", bad);
    }
  }
});

open.run();
migrations.run();
