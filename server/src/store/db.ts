import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import knex from "knex";
import type { Knex } from "knex";
import type { Dialect } from "./dialect.ts";
import { migrations } from "./migrations/index.ts";

export { dialectOf } from "./dialect.ts";
export type { Dialect } from "./dialect.ts";

/** An open database: the Knex instance, its dialect, and how to close it. */
export interface Database {
  knex: Knex;
  dialect: Dialect;
  /** The URL it was opened with (Knex keeps no password), for other clients of the same database. */
  url: string;
  close(): Promise<void>;
}

/** How long a SQLite connection waits for a competing writer before failing. */
const SQLITE_BUSY_TIMEOUT_MS = 5000;

/** What knex hands to afterCreate for better-sqlite3 (the package ships no types here). */
interface BetterSqliteConnection {
  pragma(source: string): unknown;
  prepare(source: string): unknown;
}

/** How many prepared statements a SQLite connection keeps for reuse (least recently used dropped first). */
const SQLITE_STATEMENT_CACHE_SIZE = 500;

/**
 * Knex prepares every query anew; the server runs the same few hundred statements over and over,
 * so the connection keeps them (SQLite re-prepares a statement itself after a schema change).
 */
function cacheStatements(connection: BetterSqliteConnection): void {
  const prepare = connection.prepare.bind(connection);
  const statements = new Map<string, unknown>();
  connection.prepare = (source: string) => {
    let statement = statements.get(source);
    if (statement === undefined) {
      statement = prepare(source);
      if (statements.size >= SQLITE_STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
    } else statements.delete(source);
    statements.set(source, statement);
    return statement;
  };
}

/**
 * Opens a database from a URL: `sqlite:///abs/path.db`, `sqlite://relative/path.db`,
 * `sqlite::memory:`, or `postgres://…` / `postgresql://…`.
 */
export async function openDatabase(url: string): Promise<Database> {
  const config = knexConfig(url);
  const instance = knex(config.knex);
  try {
    // Connect now so a bad URL fails here rather than on the first query.
    await instance.raw("select 1");
  } catch (error) {
    await instance.destroy();
    throw error;
  }
  return { knex: instance, dialect: config.dialect, url, close: () => instance.destroy() };
}

function knexConfig(url: string): { dialect: Dialect; knex: Knex.Config } {
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    return { dialect: "postgres", knex: { client: "pg", connection: url, pool: { min: 0, max: 10 } } };
  }
  if (url.startsWith("sqlite:")) {
    return { dialect: "sqlite", knex: sqliteConfig(sqliteFilename(url)) };
  }
  throw new Error(`unsupported database URL scheme: ${url.split(":", 1)[0]}`);
}

/** The file a `sqlite:` URL names (`:memory:` for an in-memory database). */
export function sqliteFilename(url: string): string {
  if (url === "sqlite::memory:") return ":memory:";
  if (url.startsWith("sqlite:///")) return url.slice("sqlite://".length);
  if (url.startsWith("sqlite://") && url.length > "sqlite://".length) return resolve(url.slice("sqlite://".length));
  throw new Error("a SQLite URL is sqlite:///abs/path.db, sqlite://relative/path.db or sqlite::memory:");
}

function sqliteConfig(filename: string): Knex.Config {
  const inMemory = filename === ":memory:";
  if (!inMemory) {
    // Private from the first byte: SQLite gives the -wal and -shm files the database file's mode.
    mkdirSync(dirname(filename), { recursive: true, mode: 0o700 });
    closeSync(openSync(filename, "a", 0o600));
  }
  return {
    client: "better-sqlite3",
    connection: { filename },
    useNullAsDefault: true,
    // NOTE: better-sqlite3 is synchronous and SQLite has one writer; one connection avoids
    // SQLITE_BUSY between our own connections, and an in-memory database exists only on the
    // connection that created it.
    pool: {
      min: 1,
      max: 1,
      afterCreate(
        connection: BetterSqliteConnection,
        done: (error: Error | null, connection: BetterSqliteConnection) => void,
      ) {
        try {
          connection.pragma("foreign_keys = ON");
          connection.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
          if (!inMemory) connection.pragma("journal_mode = WAL");
          cacheStatements(connection);
          done(null, connection);
        } catch (error) {
          done(error as Error, connection);
        }
      },
    },
  };
}

/** The migration list as a knex migration source (static imports, so it works under tsx). */
const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => migrations.map((migration) => migration.name),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const migration = migrations.find((candidate) => candidate.name === name);
    if (migration === undefined) throw new Error(`unknown migration ${name}`);
    return migration;
  },
};

function withProgress(onProgress: ((message: string) => void) | undefined): Knex.MigrationSource<string> {
  if (onProgress === undefined) return migrationSource;
  return {
    ...migrationSource,
    getMigration: async (name) => {
      const migration = await migrationSource.getMigration(name);
      return {
        up: async (trx: Knex) => {
          onProgress(`migrating up: ${name}`);
          await migration.up(trx);
        },
        down: async (trx: Knex) => {
          onProgress(`migrating down: ${name}`);
          await migration.down?.(trx);
        },
      };
    },
  };
}

/** Applies every pending migration; returns the names applied. */
export async function migrateLatest(db: Database, onProgress?: (message: string) => void): Promise<string[]> {
  const [, applied] = (await db.knex.migrate.latest({ migrationSource: withProgress(onProgress) })) as [
    number,
    string[],
  ];
  onProgress?.(applied.length === 0 ? "database schema is up to date" : `applied ${applied.length} migration(s)`);
  return applied;
}

/** Reverts the most recently applied migration; returns the names reverted. */
export async function migrateDown(db: Database, onProgress?: (message: string) => void): Promise<string[]> {
  const [, reverted] = (await db.knex.migrate.down({ migrationSource: withProgress(onProgress) })) as [
    number,
    string[],
  ];
  return reverted;
}

/** Reverts every applied migration (for tests); returns the names reverted. */
export async function rollbackAll(db: Database, onProgress?: (message: string) => void): Promise<string[]> {
  const [, reverted] = (await db.knex.migrate.rollback({ migrationSource: withProgress(onProgress) }, true)) as [
    number,
    string[],
  ];
  return reverted;
}
