import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";

// NOTE: frozen once released; later changes go in a new migration.

const KINDS_BEFORE = "'configuration','state','plan','plan_json','plan_diff'";
const KINDS_AFTER = "'configuration','state','plan','plan_json','plan_diff','plan_json_redacted'";

/**
 * Structured run output (issue 29): the workspace switch `structured_run_output_enabled`, the
 * flag each run records from it when it is created (`structured_run_output`, so a run's logs are
 * read in the form they were written), and the artifact kind `plan_json_redacted` (the redacted
 * plan the CLI renders). Existing workspaces and runs keep today's behaviour (false).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("workspaces", (t) =>
    t.boolean("structured_run_output_enabled").notNullable().defaultTo(false),
  );
  await knex.schema.alterTable("runs", (t) => t.boolean("structured_run_output").notNullable().defaultTo(false));
  await setArtifactKinds(knex, KINDS_BEFORE, KINDS_AFTER);
}

export async function down(knex: Knex): Promise<void> {
  await knex("artifacts").where({ kind: "plan_json_redacted" }).delete();
  await setArtifactKinds(knex, KINDS_AFTER, KINDS_BEFORE);
  for (const [table, column] of [
    ["runs", "structured_run_output"],
    ["workspaces", "structured_run_output_enabled"],
  ] as const) {
    if (dialectOf(knex) === "sqlite") await knex.raw("alter table ?? drop column ??", [table, column]);
    else await knex.schema.alterTable(table, (t) => t.dropColumn(column));
  }
}

/**
 * Replaces the closed set of `artifacts.kind`. PostgreSQL alters the constraint; SQLite cannot,
 * so the table is rebuilt from its own stored definition with only the set changed (rows,
 * columns, indexes and the other checks as they were).
 */
async function setArtifactKinds(knex: Knex, from: string, to: string): Promise<void> {
  if (dialectOf(knex) !== "sqlite") {
    await knex.raw("alter table artifacts drop constraint artifacts_kind_check");
    await knex.raw(`alter table artifacts add constraint artifacts_kind_check check (kind in (${to}))`);
    return;
  }
  const [table] = await knex.raw<Array<{ sql: string }>>(
    "select sql from sqlite_master where type = 'table' and name = 'artifacts'",
  );
  const indexes = await knex.raw<
    Array<{
      name: string;
      sql: string;
    }>
  >("select name, sql from sqlite_master where type = 'index' and tbl_name = 'artifacts' and sql is not null");
  if (!table || !table.sql.includes(`in (${from})`))
    throw new Error("artifacts: the kind check is not the expected one");
  const next = table.sql
    .replace(`in (${from})`, `in (${to})`)
    .replace(/^create table [`"]?artifacts[`"]?/i, "create table `artifacts_next`");
  await knex.raw(next);
  await knex.raw("insert into artifacts_next select * from artifacts");
  await knex.raw("drop table artifacts");
  await knex.raw("alter table artifacts_next rename to artifacts");
  for (const index of indexes) await knex.raw(index.sql);
}
