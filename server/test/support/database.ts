// What the database holds, for tests that prove a refused request wrote nothing or that a value
// is stored nowhere.
import * as assert from "uvu/assert";
import { brief, type SdkResult } from "./responses.ts";
import type { TestServer } from "./test-server.ts";

/** The tables a refused request must leave untouched. */
export const WRITE_TABLES = [
  "runs",
  "input_snapshots",
  "snapshot_secrets",
  "configuration_versions",
  "audit_events",
  "run_jobs",
  "run_reviews",
] as const;

/** Row counts of `tables` (PostgreSQL returns count(*) as a string; normalised to numbers). */
export async function countRows(
  server: TestServer,
  tables: readonly string[] = WRITE_TABLES,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const row = (await server.db.knex(table).count({ n: "*" }).first()) as { n: number | string } | undefined;
    counts[table] = Number(row?.n ?? NaN);
  }
  return counts;
}

/** Runs `act` and asserts that no row was added to or removed from `tables` meanwhile. */
export async function expectNothingWritten<T>(
  server: TestServer,
  act: () => Promise<T>,
  tables: readonly string[] = WRITE_TABLES,
): Promise<T> {
  const before = await countRows(server, tables);
  const result = await act();
  const status = (result as { response?: Response } | undefined)?.response?.status;
  const answer =
    status === undefined
      ? ""
      : ` (the server answered ${status}: ${brief((result as SdkResult).error ?? (result as SdkResult).data)})`;
  assert.equal(await countRows(server, tables), before, `a refused request wrote rows${answer}`);
  return result;
}

/** Every application table (knex's own bookkeeping excluded), as the dialect lists them. */
export async function applicationTables(server: TestServer): Promise<string[]> {
  const rows =
    server.dialect === "sqlite"
      ? await server.db.knex("sqlite_master").where({ type: "table" }).select<Array<{ name: string }>>("name")
      : await server.db
          .knex("information_schema.tables")
          .where({ table_schema: "public" })
          .select<Array<{ name: string }>>("table_name as name");
  return rows
    .map((row) => row.name)
    .filter((name) => !name.startsWith("knex_") && !name.startsWith("sqlite_"))
    .sort();
}

/** Every row of every application table as JSON text, for "this value is nowhere" checks. */
export async function databaseText(server: TestServer): Promise<string> {
  const parts: string[] = [];
  for (const table of await applicationTables(server)) {
    const rows = await server.db.knex(table).select("*");
    parts.push(`${table}: ${JSON.stringify(rows)}`);
  }
  return parts.join("\n");
}

/** The spellings a leaked secret could take in stored text: plain, base64, base64url, hex. */
export function leakForms(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  return [secret, bytes.toString("base64"), bytes.toString("base64url"), bytes.toString("hex")];
}
