import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";

// NOTE: frozen once released; later changes go in a new migration.

/**
 * Deleting a workspace (`/api/v2` safe-delete and force delete) keeps its row, marked with
 * `workspaces.deleted_at`: runs, state versions, audit events and every other record that names
 * the workspace stay as they were, while every lookup of the workspace answers "not found". The
 * repository renames a deleted workspace to `deleted~<id>` so its name can be taken again.
 * Null means "not deleted". Written by the repository (toISOString() text on SQLite).
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  await knex.schema.alterTable("workspaces", (t) => {
    if (dialect === "postgres") t.timestamp("deleted_at", { useTz: true, precision: 3 }).nullable();
    else t.string("deleted_at", 24).nullable();
  });
}

/** Drops what `up` added. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("workspaces", (t) => t.dropColumn("deleted_at"));
}
