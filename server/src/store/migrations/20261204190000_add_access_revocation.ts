import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";

// NOTE: frozen once released; later changes go in a new migration.

/**
 * Taking access away: a user can be disabled (`users.disabled_at`), an organization API token
 * can expire (`api_tokens.expires_at`, chosen at creation) and be revoked
 * (`api_tokens.revoked_at`). Null means "not" for all three. Timestamps are written by the
 * repositories (SQLite cannot add the ISO GLOB check to an existing table; the repositories only
 * write toISOString() text).
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  const timestamp = (t: Knex.AlterTableBuilder, column: string) =>
    dialect === "postgres"
      ? t.timestamp(column, { useTz: true, precision: 3 }).nullable()
      : t.string(column, 24).nullable();
  await knex.schema.alterTable("users", (t) => timestamp(t, "disabled_at"));
  await knex.schema.alterTable("api_tokens", (t) => {
    timestamp(t, "expires_at");
    timestamp(t, "revoked_at");
  });
}

/** Drops what `up` added. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("api_tokens", (t) => {
    t.dropColumn("expires_at");
    t.dropColumn("revoked_at");
  });
  await knex.schema.alterTable("users", (t) => t.dropColumn("disabled_at"));
}
