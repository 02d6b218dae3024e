import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import { columnsFor, idColumn, reference, type Columns } from "./schema-helpers.ts";

// NOTE: this migration is frozen once released; later changes go in a new migration.

/**
 * People: users with passwords, their memberships (a built-in role at organization, project or
 * workspace scope), and dashboard sessions (only hashes of the cookie and CSRF secrets, with the
 * time of the last step-up).
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  const create = (table: string, build: (t: Knex.CreateTableBuilder, c: Columns) => void) =>
    knex.schema.createTable(table, (t) => build(t, columnsFor(dialect, table, t)));

  await create("users", (t, c) => {
    idColumn(t);
    // Stored lower-cased, so the unique index is case-insensitive.
    t.string("email", 254).notNullable();
    t.string("display_name", 255).notNullable();
    t.string("password_hash", 255).notNullable();
    t.boolean("site_admin").notNullable().defaultTo(false);
    c.timestamp("created_at");
    t.unique(["email"], { indexName: "users_email_unique" });
    t.check("?? = lower(??)", ["email", "email"], "users_email_lower");
  });

  await create("memberships", (t, c) => {
    idColumn(t);
    reference(t, "organization_id", "organizations");
    reference(t, "user_id", "users");
    t.string("role", 16).notNullable();
    t.string("scope_kind", 16).notNullable();
    t.string("scope_id", 32).notNullable();
    c.timestamp("created_at");
    t.unique(["user_id", "scope_kind", "scope_id"], { indexName: "memberships_user_scope_unique" });
    t.index(["organization_id", "user_id"], "memberships_organization_user");
    t.check(`?? in ('viewer', 'operator', 'admin')`, ["role"], "memberships_role_check");
    t.check(`?? in ('organization', 'project', 'workspace')`, ["scope_kind"], "memberships_scope_kind_check");
  });

  await create("sessions", (t, c) => {
    idColumn(t);
    reference(t, "user_id", "users");
    t.string("token_hash", 64).notNullable();
    t.string("csrf_token_hash", 64).notNullable();
    c.timestamp("created_at");
    c.timestamp("expires_at");
    c.timestamp("stepped_up_at", { nullable: true });
    c.timestamp("revoked_at", { nullable: true });
    t.unique(["token_hash"], { indexName: "sessions_token_hash_unique" });
    t.index(["user_id"], "sessions_user_id");
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ["sessions", "memberships", "users"]) await knex.schema.dropTableIfExists(table);
}
