import type { Knex } from "knex";

// NOTE: frozen once released; later changes go in a new migration.

/**
 * The PostgreSQL artifact backend (artifacts/backends/postgres.ts): a key's current object and
 * its size, and the object's bytes in chunk rows. Created on SQLite too (unused there), so both
 * databases have one schema.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("artifact_objects", (t) => {
    t.string("object_key", 255).notNullable().primary();
    t.string("object_id", 32).notNullable().unique({ indexName: "artifact_objects_object_id_unique" });
    t.bigInteger("size_bytes").notNullable();
    t.integer("chunk_bytes").notNullable();
    t.check("?? >= 0", ["size_bytes"], "artifact_objects_size_check");
    t.check("?? > 0", ["chunk_bytes"], "artifact_objects_chunk_check");
  });
  await knex.schema.createTable("artifact_object_chunks", (t) => {
    // No foreign key: chunks are inserted before the object row that names them (same transaction).
    t.string("object_id", 32).notNullable();
    t.integer("seq").notNullable();
    t.binary("data").notNullable();
    t.primary(["object_id", "seq"], "artifact_object_chunks_pkey");
  });
}

/** Drops what `up` created. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable("artifact_object_chunks");
  await knex.schema.dropTable("artifact_objects");
}
