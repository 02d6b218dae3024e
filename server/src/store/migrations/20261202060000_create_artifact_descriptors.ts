import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import { columnsFor, ID } from "./schema-helpers.ts";

// NOTE: frozen once released; later changes go in a new migration.

/**
 * Descriptors of framed (streamed) artifacts: which workspace an object belongs to, what kind it
 * is, its plaintext size and SHA-256, and its format. The bytes stay in the artifact store; a
 * reader checks the object against this row before releasing anything.
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  await knex.schema.createTable("artifact_descriptors", (t) => {
    const c = columnsFor(dialect, "artifact_descriptors", t);
    t.string("artifact_key", 255).notNullable().primary();
    t.string("workspace_id", ID).notNullable().references("id").inTable("workspaces");
    t.string("run_id", ID).nullable().references("id").inTable("runs");
    t.string("kind", 32).notNullable();
    t.string("format", 32).notNullable();
    t.bigInteger("size_bytes").notNullable();
    t.string("sha256", 64).notNullable();
    c.timestamp("created_at");
    t.check(`?? in ('plan_json')`, ["kind"], "artifact_descriptors_kind_check");
    t.check("?? >= 0", ["size_bytes"], "artifact_descriptors_size_check");
    t.unique(["run_id", "kind"], { indexName: "artifact_descriptors_run_kind_unique" });
  });
}

/** Drops what `up` created. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable("artifact_descriptors");
}
