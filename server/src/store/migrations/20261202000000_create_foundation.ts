import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import { columnsFor, ID, idColumn, reference, type Columns } from "./schema-helpers.ts";

// NOTE: this migration is frozen once released; later changes go in a new migration.

/** Creates the foundation schema: tenancy, identity, configuration, inputs, runs, audit. */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  const create = (table: string, build: (t: Knex.CreateTableBuilder, c: Columns) => void) =>
    knex.schema.createTable(table, (t) => build(t, columnsFor(dialect, table, t)));

  await create("organizations", (t, c) => {
    idColumn(t);
    t.string("name", 255).notNullable();
    c.timestamp("created_at");
    t.unique(["name"], { indexName: "organizations_name_unique" });
  });

  await create("projects", (t, c) => {
    idColumn(t);
    reference(t, "organization_id", "organizations");
    t.string("name", 255).notNullable();
    c.timestamp("created_at");
    t.unique(["organization_id", "name"], { indexName: "projects_organization_id_name_unique" });
  });

  await create("workspaces", (t, c) => {
    idColumn(t);
    reference(t, "organization_id", "organizations");
    reference(t, "project_id", "projects");
    t.string("name", 255).notNullable();
    t.text("description").nullable();
    t.string("tracked_branch", 255).notNullable().defaultTo("main");
    t.string("working_directory", 1024).notNullable().defaultTo("");
    t.string("opentofu_version", 64).notNullable();
    t.string("execution_region", 64).notNullable();
    c.timestamp("created_at");
    c.timestamp("updated_at");
    t.unique(["organization_id", "name"], { indexName: "workspaces_organization_id_name_unique" });
    t.index(["project_id"], "workspaces_project_id");
  });

  await create("workspace_variables", (t, c) => {
    idColumn(t);
    reference(t, "workspace_id", "workspaces");
    t.string("key", 255).notNullable();
    t.string("category", 16).notNullable();
    t.boolean("hcl").notNullable().defaultTo(false);
    t.boolean("sensitive").notNullable().defaultTo(false);
    t.text("value").nullable();
    t.text("value_ciphertext").nullable();
    t.text("description").nullable();
    c.timestamp("created_at");
    t.unique(["workspace_id", "category", "key"], {
      indexName: "workspace_variables_workspace_id_category_key_unique",
    });
    t.check(`?? in ('terraform', 'env')`, ["category"], "workspace_variables_category_check");
    t.check(
      "(?? = true and ?? is null and ?? is not null) or (?? = false and ?? is not null and ?? is null)",
      ["sensitive", "value", "value_ciphertext", "sensitive", "value", "value_ciphertext"],
      "workspace_variables_sensitive_value_check",
    );
  });

  await create("principals", (t, c) => {
    idColumn(t);
    t.string("kind", 16).notNullable();
    reference(t, "organization_id", "organizations", { nullable: true });
    t.string("name", 255).notNullable();
    c.timestamp("created_at");
    t.check(`?? in ('api_token', 'bootstrap')`, ["kind"], "principals_kind_check");
  });

  await create("api_tokens", (t, c) => {
    idColumn(t);
    reference(t, "principal_id", "principals");
    reference(t, "organization_id", "organizations", { nullable: true });
    t.string("role", 16).nullable();
    t.text("description").nullable();
    t.string("token_hash", 128).notNullable();
    c.timestamp("created_at");
    c.timestamp("last_used_at", { nullable: true });
    t.unique(["token_hash"], { indexName: "api_tokens_token_hash_unique" });
    t.index(["principal_id"], "api_tokens_principal_id");
    t.check(`?? in ('viewer', 'operator', 'admin')`, ["role"], "api_tokens_role_check");
  });

  await create("permission_grants", (t, c) => {
    idColumn(t);
    reference(t, "principal_id", "principals");
    t.string("scope_kind", 16).notNullable();
    t.string("scope_id", ID).notNullable();
    t.string("permission", 64).notNullable();
    c.timestamp("created_at");
    t.unique(["principal_id", "scope_kind", "scope_id", "permission"], {
      indexName: "permission_grants_principal_scope_permission_unique",
    });
    t.check(`?? in ('organization', 'project', 'workspace')`, ["scope_kind"], "permission_grants_scope_kind_check");
  });

  await create("configuration_versions", (t, c) => {
    idColumn(t);
    reference(t, "organization_id", "organizations");
    reference(t, "workspace_id", "workspaces");
    t.string("status", 16).notNullable();
    t.boolean("speculative").notNullable();
    t.string("source", 64).notNullable();
    t.string("config_digest", 128).nullable();
    t.bigInteger("size_bytes").nullable();
    t.string("artifact_key", 1024).nullable();
    c.timestamp("created_at");
    c.timestamp("uploaded_at", { nullable: true });
    t.index(["workspace_id"], "configuration_versions_workspace_id");
    t.check(`?? in ('pending', 'uploaded', 'errored')`, ["status"], "configuration_versions_status_check");
  });

  await create("input_snapshots", (t, c) => {
    idColumn(t);
    reference(t, "workspace_id", "workspaces");
    t.string("input_digest", 128).notNullable();
    t.text("document").notNullable();
    c.timestamp("created_at");
    t.index(["workspace_id"], "input_snapshots_workspace_id");
  });

  await create("snapshot_secrets", (t, c) => {
    t.string("handle", ID).notNullable().primary();
    t.text("ciphertext").notNullable();
    c.timestamp("created_at");
  });

  await create("runs", (t, c) => {
    idColumn(t);
    reference(t, "organization_id", "organizations");
    reference(t, "project_id", "projects");
    reference(t, "workspace_id", "workspaces");
    reference(t, "configuration_version_id", "configuration_versions");
    reference(t, "input_snapshot_id", "input_snapshots");
    t.string("kind", 32).notNullable();
    t.string("status", 32).notNullable();
    t.text("message").notNullable().defaultTo("");
    t.string("source", 64).notNullable();
    t.boolean("auto_apply").notNullable().defaultTo(false);
    t.boolean("is_destroy").notNullable().defaultTo(false);
    t.string("config_digest", 128).notNullable();
    t.string("input_digest", 128).notNullable();
    t.string("opentofu_version", 64).notNullable();
    t.string("execution_region", 64).notNullable();
    t.string("platform", 64).notNullable();
    // No foreign key: the bootstrap identity has no principals row.
    t.string("created_by", ID).nullable();
    c.timestamp("created_at");
    c.timestamp("updated_at");
    t.check(`?? in ('plan_and_apply', 'speculative')`, ["kind"], "runs_kind_check");
    // Invariants 1 and 2 of ARCHITECTURE.md, enforced even against a raw insert.
    t.check("?? = false", ["auto_apply"], "runs_auto_apply_false");
    t.check("?? = false", ["is_destroy"], "runs_is_destroy_false");
    t.index(["organization_id", "created_at", "id"], "runs_org_created_id");
    t.index(["workspace_id", "created_at", "id"], "runs_ws_created_id");
  });

  await create("audit_events", (t, c) => {
    idColumn(t);
    // No foreign keys: the audit trail must be writable for anything, including the bootstrap actor.
    t.string("organization_id", ID).nullable();
    t.string("actor_id", ID).nullable();
    t.string("action", 128).notNullable();
    t.string("target_type", 64).notNullable();
    t.string("target_id", 255).notNullable();
    t.text("reason").nullable();
    t.text("data").notNullable().defaultTo("{}");
    c.timestamp("created_at");
    t.index(["organization_id", "created_at", "id"], "audit_events_org_created_id");
  });
}

/** Drops everything up() created, dependants first. */
export async function down(knex: Knex): Promise<void> {
  for (const table of [
    "audit_events",
    "runs",
    "snapshot_secrets",
    "input_snapshots",
    "configuration_versions",
    "permission_grants",
    "api_tokens",
    "principals",
    "workspace_variables",
    "workspaces",
    "projects",
    "organizations",
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
