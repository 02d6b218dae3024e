import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import { columnsFor, ID, reference } from "./schema-helpers.ts";

// NOTE: this migration is frozen once released; later changes go in a new migration.

/**
 * Who owns a GitHub App installation: the organization it was bound to through the App's setup
 * flow (or by a deployment administrator); the one-time setup states an organization
 * administrator's session installs the App with (stored as their SHA-256 only); and, per
 * workspace and ref, the newest push that created a run (a replayed older push body is refused).
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  await knex.schema.createTable("github_installation_bindings", (t) => {
    const c = columnsFor(dialect, "github_installation_bindings", t);
    t.bigInteger("installation_id").notNullable().primary();
    reference(t, "organization_id", "organizations");
    t.string("account", 255).nullable();
    t.string("bound_by", 255).notNullable();
    c.timestamp("bound_at");
    t.index(["organization_id"], "github_installation_bindings_organization");
  });
  await knex.schema.createTable("github_installation_states", (t) => {
    const c = columnsFor(dialect, "github_installation_states", t);
    t.string("state_hash", 64).notNullable().primary();
    reference(t, "organization_id", "organizations");
    t.string("user_id", 255).notNullable();
    t.string("session_id", 255).notNullable();
    c.timestamp("created_at");
    c.timestamp("expires_at");
    c.timestamp("used_at", { nullable: true });
  });
  await knex.schema.createTable("github_push_heads", (t) => {
    const c = columnsFor(dialect, "github_push_heads", t);
    t.string("workspace_id", ID).notNullable().references("id").inTable("workspaces").onDelete("CASCADE");
    t.string("ref", 255).notNullable();
    // GitHub's `repository.pushed_at` of the newest push (seconds since the epoch).
    t.bigInteger("pushed_at").notNullable();
    t.string("head_sha", 40).notNullable();
    c.timestamp("updated_at");
    t.primary(["workspace_id", "ref"]);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ["github_push_heads", "github_installation_states", "github_installation_bindings"])
    await knex.schema.dropTableIfExists(table);
}
