import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";

// NOTE: frozen once released; later changes go in a new migration.

const PHASES_BEFORE = "'plan','policy','apply'";
const PHASES_AFTER = "'plan','policy','apply','plan_json','apply_json'";

/**
 * Structured run output (issue 29): a run with it keeps both forms of its plan and apply logs,
 * the human text under `plan`/`apply` (what /v1, the dashboard and the live feed read) and the
 * `-json` UI lines the CLI renders under `plan_json`/`apply_json`. And configuration generation
 * (`tofu plan -generate-config-out`): whether the run was created allowing it
 * (`allow_config_generation`), and what its plan recorded: how many resources it imports and
 * whether it generated configuration (null until the plan finished).
 */
export async function up(knex: Knex): Promise<void> {
  await setLogPhases(knex, PHASES_BEFORE, PHASES_AFTER);
  await knex.schema.alterTable("runs", (t) => {
    t.boolean("allow_config_generation").notNullable().defaultTo(false);
    t.integer("plan_imports").nullable();
    t.boolean("plan_generated_configuration").nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const column of ["plan_generated_configuration", "plan_imports", "allow_config_generation"]) {
    if (dialectOf(knex) === "sqlite") await knex.raw("alter table ?? drop column ??", ["runs", column]);
    else await knex.schema.alterTable("runs", (t) => t.dropColumn(column));
  }
  await knex("run_log_chunks").whereIn("phase", ["plan_json", "apply_json"]).delete();
  await setLogPhases(knex, PHASES_AFTER, PHASES_BEFORE);
}

/**
 * Replaces the closed set of `run_log_chunks.phase`. PostgreSQL alters the constraint; SQLite
 * cannot, so the table is rebuilt from its own stored definition with only the set changed.
 */
async function setLogPhases(knex: Knex, from: string, to: string): Promise<void> {
  if (dialectOf(knex) !== "sqlite") {
    await knex.raw("alter table run_log_chunks drop constraint run_log_chunks_phase_check");
    await knex.raw(`alter table run_log_chunks add constraint run_log_chunks_phase_check check (phase in (${to}))`);
    return;
  }
  const [table] = await knex.raw<Array<{ sql: string }>>(
    "select sql from sqlite_master where type = 'table' and name = 'run_log_chunks'",
  );
  const indexes = await knex.raw<
    Array<{
      name: string;
      sql: string;
    }>
  >("select name, sql from sqlite_master where type = 'index' and tbl_name = 'run_log_chunks' and sql is not null");
  // The set as written, whatever the spacing (a table knex rebuilt to drop a column spells it its own way).
  const pattern = new RegExp(`in\\s*\\(\\s*${from.split(",").join("\\s*,\\s*")}\\s*\\)`, "i");
  if (!table || !pattern.test(table.sql)) throw new Error("run_log_chunks: the phase check is not the expected one");
  const next = table.sql
    .replace(pattern, `in (${to})`)
    .replace(/^create table [`"]?run_log_chunks[`"]?/i, "create table `run_log_chunks_next`");
  await knex.raw(next);
  await knex.raw("insert into run_log_chunks_next select * from run_log_chunks");
  await knex.raw("drop table run_log_chunks");
  await knex.raw("alter table run_log_chunks_next rename to run_log_chunks");
  for (const index of indexes) await knex.raw(index.sql);
}
