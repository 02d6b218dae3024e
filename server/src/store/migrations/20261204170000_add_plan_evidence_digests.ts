import type { Knex } from "knex";

// NOTE: frozen once released; later changes go in a new migration.

/**
 * The plan's evidence digests beside the saved plan's: the SHA-256 of the plan JSON and of the
 * redacted plan changes the plan phase stored (null: none stored), on the run, and on its review
 * decision, which binds all three (an apply whose recorded digests disagree refuses).
 */
export async function up(knex: Knex): Promise<void> {
  for (const table of ["runs", "run_reviews"]) {
    await knex.schema.alterTable(table, (t) => {
      t.string("plan_json_digest", 64).nullable();
      t.string("plan_diff_digest", 64).nullable();
    });
  }
}

/** Drops what `up` added. */
export async function down(knex: Knex): Promise<void> {
  for (const table of ["run_reviews", "runs"]) {
    await knex.schema.alterTable(table, (t) => {
      for (const column of ["plan_json_digest", "plan_diff_digest"]) t.dropColumn(column);
    });
  }
}
