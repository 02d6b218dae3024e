import type { Knex } from "knex";

// NOTE: frozen once released; later changes go in a new migration.

/**
 * The one-time setup links `npm start` prints while no deployment administrator exists
 * (commands/setup.ts). Only the SHA-256 of a link's token is stored; times are epoch milliseconds
 * so "unused and not expired" is plain arithmetic on both databases.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("setup_tokens", (t) => {
    t.string("token_hash", 64).notNullable().primary();
    t.bigInteger("created_at_ms").notNullable();
    t.bigInteger("expires_at_ms").notNullable();
    t.bigInteger("used_at_ms").nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists("setup_tokens");
}
