import type { Knex } from "knex";

// NOTE: this migration is frozen once released; later changes go in a new migration.

/**
 * Failed password checks per account and per client address (domain/auth-throttle.ts). In the
 * database rather than in memory so every API process sees the same counts. Times are epoch
 * milliseconds so the counting update is plain arithmetic on both databases.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("auth_throttles", (t) => {
    // `account:<sha256 of the email>` or `address:<sha256 of the address>`: no email is stored.
    t.string("key", 80).notNullable().primary();
    t.integer("failures").notNullable();
    t.bigInteger("last_failure_ms").notNullable();
    t.bigInteger("blocked_until_ms").nullable();
    t.check("?? >= 0", ["failures"], "auth_throttles_failures_check");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists("auth_throttles");
}
