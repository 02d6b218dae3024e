import type { Knex } from "knex";

// NOTE: frozen once released; later changes go in a new migration.

/** The redacted plan-diff artifact (stackship.plan-diff/v1) of a run's plan: its descriptor on the run. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("runs", (t) => {
    t.string("plan_diff_digest", 64).nullable();
    t.bigInteger("plan_diff_size_bytes").nullable();
    t.string("plan_diff_artifact_key", 255).nullable();
  });
}

/** Drops what `up` added. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("runs", (t) => {
    for (const column of ["plan_diff_digest", "plan_diff_size_bytes", "plan_diff_artifact_key"]) t.dropColumn(column);
  });
}
