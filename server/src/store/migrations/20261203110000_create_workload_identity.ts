import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import { columnsFor, idColumn, reference } from "./schema-helpers.ts";

// NOTE: this migration is frozen once released; later changes go in a new migration.

/**
 * Workload identity: whether a workspace's plans need a cloud credential, its federation
 * profiles (verification bound to the digest of what was verified), and the issuer's signing
 * keys (private halves sealed with the master key; `signs_from` later than `created_at` for a
 * key published ahead of signing; `last_token_expires_at` keeps a retired key published until
 * the last token it signed has expired).
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  await knex.schema.alterTable("workspaces", (t) => {
    t.boolean("plan_requires_credential").notNullable().defaultTo(false);
  });
  await knex.schema.createTable("federation_profiles", (t) => {
    const c = columnsFor(dialect, "federation_profiles", t);
    idColumn(t);
    reference(t, "organization_id", "organizations");
    t.string("workspace_id", 32).notNullable().references("id").inTable("workspaces").onDelete("CASCADE");
    t.string("name", 90).notNullable();
    t.string("provider", 16).notNullable();
    t.string("audience", 255).notNullable();
    t.text("target").notNullable();
    t.text("phases").notNullable();
    c.timestamp("verified_at", { nullable: true });
    t.string("verified_by", 320).nullable();
    t.string("verified_digest", 64).nullable();
    c.timestamp("created_at");
    c.timestamp("updated_at");
    t.unique(["workspace_id", "name"], { indexName: "federation_profiles_workspace_name_unique" });
    t.check(`?? in ('aws', 'gcp', 'azure', 'generic')`, ["provider"], "federation_profiles_provider_check");
    // Verified means all three are recorded; unverified means none is.
    t.check(
      "(?? is null and ?? is null and ?? is null) or (?? is not null and ?? is not null and ?? is not null)",
      ["verified_at", "verified_by", "verified_digest", "verified_at", "verified_by", "verified_digest"],
      "federation_profiles_verification_complete",
    );
  });
  await knex.schema.createTable("workload_identity_keys", (t) => {
    const c = columnsFor(dialect, "workload_identity_keys", t);
    t.string("kid", 64).notNullable().primary();
    t.string("algorithm", 16).notNullable();
    t.text("public_jwk").notNullable();
    t.text("private_key_sealed").notNullable();
    c.timestamp("created_at");
    c.timestamp("signs_from");
    c.timestamp("last_token_expires_at", { nullable: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists("workload_identity_keys");
  await knex.schema.dropTableIfExists("federation_profiles");
  await knex.schema.alterTable("workspaces", (t) => {
    t.dropColumn("plan_requires_credential");
  });
}
