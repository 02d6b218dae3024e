import type { Knex } from "knex";

// NOTE: frozen once released; later changes go in a new migration.

/**
 * `attestation_keys.first_key`: 1 on the deployment's first attestation key, null on every later
 * one, under a unique index. Two processes that find no key at once (an approval's background
 * issuance and a listing, or two hosts) both generate one; the index lets only one become the
 * first, where before both were stored and the deployment started with two signing keys.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("attestation_keys", (t) => {
    t.integer("first_key").nullable().unique({ indexName: "attestation_keys_first_key_unique" });
  });
  const oldest = await knex("attestation_keys")
    .orderBy([{ column: "signs_from" }, { column: "kid" }])
    .first<{ kid: string } | undefined>("kid");
  if (oldest) await knex("attestation_keys").where({ kid: oldest.kid }).update({ first_key: 1 });
}

/** Drops what `up` added. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("attestation_keys", (t) => {
    t.dropUnique(["first_key"], "attestation_keys_first_key_unique");
    t.dropColumn("first_key");
  });
}
