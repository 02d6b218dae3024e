import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import { columnsFor, idColumn, reference } from "./schema-helpers.ts";

// NOTE: frozen once released; later changes go in a new migration.

/**
 * Signed run decision attestations (domain/attestations.ts).
 *
 * - `attestation_keys`: the deployment's ECDSA P-256 attestation keys; the public half as PEM,
 *   the private half sealed with the master key. A key signs from `signs_from`; a superseded key
 *   stays published (attestations it signed must stay verifiable), until an operator removes it.
 * - `run_attestations`: one DSSE envelope per run and stage (`decision`, `outcome`); the unique
 *   index makes issuing idempotent (a retry that finds one issued adds nothing).
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  await knex.schema.createTable("attestation_keys", (t) => {
    const c = columnsFor(dialect, "attestation_keys", t);
    t.string("kid", 64).notNullable().primary();
    t.string("algorithm", 32).notNullable();
    t.text("public_key_pem").notNullable();
    t.text("private_key_sealed").notNullable();
    c.timestamp("created_at");
    c.timestamp("signs_from");
  });
  await knex.schema.createTable("run_attestations", (t) => {
    const c = columnsFor(dialect, "run_attestations", t);
    idColumn(t);
    reference(t, "run_id", "runs");
    t.string("stage", 16).notNullable();
    t.string("key_id", 64).notNullable();
    t.string("predicate_type", 255).notNullable();
    t.text("envelope").notNullable();
    t.string("envelope_digest", 64).notNullable();
    c.timestamp("created_at");
    t.unique(["run_id", "stage"], { indexName: "run_attestations_run_stage" });
    t.check("?? in ('decision', 'outcome')", ["stage"], "run_attestations_stage");
  });
}

/** Drops what `up` created. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists("run_attestations");
  await knex.schema.dropTableIfExists("attestation_keys");
}
