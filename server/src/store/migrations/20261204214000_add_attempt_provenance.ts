import type { Knex } from "knex";

// NOTE: frozen once released; later changes go in a new migration.

/**
 * What an attempt ran on, recorded when it starts (runner/provenance.ts): `run_attempts.provenance`,
 * JSON text (the job id, the StackShip build, the runner release, the sandbox profile digest, the
 * OpenTofu binary's digest). Null for attempts recorded before this migration.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("run_attempts", (t) => {
    t.text("provenance").nullable();
  });
}

/** Drops what `up` added. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("run_attempts", (t) => {
    t.dropColumn("provenance");
  });
}
