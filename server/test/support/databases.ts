import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import knex from "knex";
import type { Test } from "uvu";
import { migrateGraphileWorker } from "../../src/runner/graphile.ts";
import { migrateLatest, openDatabase, type Database, type Dialect } from "../../src/store/db.ts";
import { skipTest } from "./skips.ts";

/** The environment variable that turns on the PostgreSQL half of every store test. */
export const TEST_PG_URL_ENV = "STACKSHIP_TEST_PG_URL";

/** The dialects store tests run on: SQLite always, PostgreSQL when STACKSHIP_TEST_PG_URL is set. */
export function testDialects(): Dialect[] {
  return process.env[TEST_PG_URL_ENV] ? ["sqlite", "postgres"] : ["sqlite"];
}

/** Options of withDatabase(). */
export interface WithDatabaseOptions {
  /** Apply every migration first (default true). */
  migrate?: boolean;
}

interface Scratch {
  url: string;
  drop(): Promise<void>;
}

/**
 * Runs `fn` on a fresh, private database of the given dialect (migrated unless told otherwise),
 * then closes and deletes it whatever happens.
 */
export async function withDatabase<T>(
  dialect: Dialect,
  fn: (db: Database) => Promise<T>,
  options: WithDatabaseOptions = {},
): Promise<T> {
  const scratch = dialect === "sqlite" ? await scratchSqlite() : await scratchPostgres();
  let db: Database | undefined;
  try {
    db = await openDatabase(scratch.url);
    if (options.migrate !== false) {
      await migrateLatest(db);
      await migrateGraphileWorker(db);
    }
    return await fn(db);
  } finally {
    await db?.close();
    await scratch.drop();
  }
}

/** Runs `fn` once per test dialect, each time on a fresh database. */
export async function eachDatabase(
  fn: (db: Database, dialect: Dialect) => Promise<void>,
  options: WithDatabaseOptions = {},
): Promise<void> {
  for (const dialect of testDialects()) {
    await withDatabase(dialect, (db) => fn(db, dialect), options);
  }
}

/** Registers one uvu case per test dialect, named `<title> [<dialect>]`, each on a fresh database. */
export function testEachDatabase<T>(
  test: Test<T>,
  title: string,
  fn: (db: Database, dialect: Dialect) => Promise<void>,
  options: WithDatabaseOptions = {},
): void {
  for (const dialect of testDialects()) {
    test(`${title} [${dialect}]`, () => withDatabase(dialect, (db) => fn(db, dialect), options));
  }
  skipPostgresHalf(test, title);
}

/** Without STACKSHIP_TEST_PG_URL the PostgreSQL half of a both-databases test is a counted, named skip. */
export function skipPostgresHalf<T>(test: Test<T>, title: string): void {
  if (!process.env[TEST_PG_URL_ENV])
    skipTest(
      test,
      `${title} [postgres]`,
      `${TEST_PG_URL_ENV} is not set (export ${TEST_PG_URL_ENV}=$(bash scripts/ensure-postgres))`,
    );
}

async function scratchSqlite(): Promise<Scratch> {
  const directory = await mkdtemp(join(tmpdir(), "ss-test-"));
  return {
    // A nested path also exercises openDatabase() creating the parent directory.
    url: `sqlite://${join(directory, "db", "stackship.db")}`,
    drop: () => rm(directory, { recursive: true, force: true }),
  };
}

async function scratchPostgres(): Promise<Scratch> {
  const adminUrl = process.env[TEST_PG_URL_ENV];
  if (!adminUrl) throw new Error(`${TEST_PG_URL_ENV} is not set`);
  const name = `ss_test_${randomBytes(8).toString("hex")}`;
  await withAdmin(adminUrl, (admin) => admin.raw("create database ??", [name]));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withAdmin(adminUrl, (admin) => admin.raw("drop database if exists ?? with (force)", [name])),
  };
}

// A short-lived admin connection: a pooled one left open would keep the test process alive.
async function withAdmin(adminUrl: string, fn: (admin: knex.Knex) => Promise<unknown>): Promise<void> {
  const admin = knex({ client: "pg", connection: adminUrl, pool: { min: 0, max: 1 } });
  try {
    await fn(admin);
  } finally {
    await admin.destroy();
  }
}
