import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import { columnsFor, ID, reference } from "./schema-helpers.ts";

// NOTE: this migration is frozen once released; later changes go in a new migration.

/**
 * The GitHub App source pipeline: run sources by trigger (`cli` for the OpenTofu Cloud API,
 * `github_push`, `github_pull_request`) and the commit a run was made from; workspace source
 * connections; webhook deliveries (the idempotency record and the job); installations and the
 * repositories they can see; the check run kept in step with each GitHub-triggered run.
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  await knex("runs").where({ source: "tfe-api" }).update({ source: "cli" });
  await knex("runs").where({ source: "github" }).update({ source: "github_push" });
  await knex.schema.alterTable("runs", (t) => {
    t.string("commit_sha", 40).nullable();
    t.text("commit_message").nullable();
    t.string("commit_author", 255).nullable();
    t.string("commit_ref", 255).nullable();
    t.string("commit_repository", 255).nullable();
    t.boolean("commit_fork").nullable();
    // The working directory a GitHub run was created for (the connection's, at that time).
    t.string("working_directory", 1024).nullable();
    t.integer("pull_request_number").nullable();
    t.string("github_delivery_id", 100).nullable();
  });

  await knex.schema.createTable("source_connections", (t) => {
    const c = columnsFor(dialect, "source_connections", t);
    t.string("workspace_id", ID).notNullable().primary().references("id").inTable("workspaces").onDelete("CASCADE");
    reference(t, "organization_id", "organizations");
    t.string("provider", 16).notNullable().defaultTo("github");
    t.bigInteger("installation_id").notNullable();
    t.string("repository", 255).notNullable();
    // Lower case: GitHub repository names compare case-insensitively.
    t.string("repository_key", 255).notNullable();
    t.text("trigger_paths").notNullable().defaultTo("[]");
    c.timestamp("created_at");
    c.timestamp("updated_at");
    t.index(["repository_key"], "source_connections_repository_key");
    t.check(`?? in ('github')`, ["provider"], "source_connections_provider_check");
  });

  await knex.schema.createTable("github_deliveries", (t) => {
    const c = columnsFor(dialect, "github_deliveries", t);
    t.string("id", 100).notNullable().primary();
    t.string("event", 100).notNullable();
    t.string("action", 100).nullable();
    t.bigInteger("installation_id").nullable();
    t.string("repository", 255).nullable();
    t.string("repository_key", 255).nullable();
    t.text("payload").notNullable();
    t.string("status", 16).notNullable();
    t.string("outcome", 64).nullable();
    t.text("detail").nullable();
    t.integer("attempts").notNullable().defaultTo(0);
    c.timestamp("run_after");
    t.string("locked_by", 100).nullable();
    c.timestamp("locked_at", { nullable: true });
    t.text("run_ids").notNullable().defaultTo("[]");
    c.timestamp("received_at");
    c.timestamp("processed_at", { nullable: true });
    c.timestamp("updated_at");
    t.index(["status", "run_after"], "github_deliveries_status_run_after");
    t.index(["repository_key", "received_at"], "github_deliveries_repository_received");
    t.check(
      `?? in ('queued', 'processing', 'processed', 'ignored', 'refused', 'failed')`,
      ["status"],
      "github_deliveries_status_check",
    );
  });

  await knex.schema.createTable("github_installations", (t) => {
    const c = columnsFor(dialect, "github_installations", t);
    t.bigInteger("id").notNullable().primary();
    t.string("account", 255).nullable();
    // 'all' (every repository of the account) or 'selected' (the repository rows below).
    t.string("repository_selection", 16).notNullable();
    t.boolean("suspended").notNullable().defaultTo(false);
    t.boolean("deleted").notNullable().defaultTo(false);
    c.timestamp("updated_at");
  });
  await knex.schema.createTable("github_installation_repositories", (t) => {
    t.bigInteger("installation_id").notNullable().references("id").inTable("github_installations").onDelete("CASCADE");
    t.string("repository_key", 255).notNullable();
    t.primary(["installation_id", "repository_key"]);
  });

  await knex.schema.createTable("github_check_runs", (t) => {
    const c = columnsFor(dialect, "github_check_runs", t);
    t.string("run_id", ID).notNullable().primary().references("id").inTable("runs");
    t.bigInteger("installation_id").notNullable();
    t.string("repository", 255).notNullable();
    t.string("head_sha", 40).notNullable();
    t.bigInteger("check_run_id").nullable();
    // What GitHub was last told (`queued`, `in_progress`, `completed:<conclusion>`); null before the first call.
    t.string("sent_state", 64).nullable();
    t.integer("attempts").notNullable().defaultTo(0);
    c.timestamp("next_attempt_at");
    t.text("last_error").nullable();
    c.timestamp("updated_at");
    t.index(["next_attempt_at"], "github_check_runs_next_attempt");
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    "github_check_runs",
    "github_installation_repositories",
    "github_installations",
    "github_deliveries",
    "source_connections",
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
  await knex.schema.alterTable("runs", (t) => {
    for (const column of [
      "commit_sha",
      "commit_message",
      "commit_author",
      "commit_ref",
      "commit_repository",
      "commit_fork",
      "working_directory",
      "pull_request_number",
      "github_delivery_id",
    ])
      t.dropColumn(column);
  });
  await knex("runs").where({ source: "cli" }).update({ source: "tfe-api" });
  await knex("runs").whereIn("source", ["github_push", "github_pull_request"]).update({ source: "github" });
}
