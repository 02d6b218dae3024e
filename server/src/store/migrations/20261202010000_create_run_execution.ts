import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import { columnsFor, ID, idColumn, reference, type Columns } from "./schema-helpers.ts";

// NOTE: frozen once released; later changes go in a new migration.

/** Run execution: phase results on runs, attempts, logs, review decisions, the job queue. */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  const create = (table: string, build: (t: Knex.CreateTableBuilder, c: Columns) => void) =>
    knex.schema.createTable(table, (t) => build(t, columnsFor(dialect, table, t)));
  const timestamp = (t: Knex.AlterTableBuilder, column: string) =>
    dialect === "postgres"
      ? t.timestamp(column, { useTz: true, precision: 3 }).nullable()
      : t.string(column, 24).nullable();

  await knex.schema.alterTable("runs", (t) => {
    // NOTE: SQLite cannot add CHECK constraints to an existing table; the closed phase-status
    // sets are enforced by the run repository on both databases.
    t.string("plan_status", 16).notNullable().defaultTo("pending");
    t.string("apply_status", 16).notNullable().defaultTo("pending");
    t.string("status_reason", 32).nullable();
    t.boolean("has_changes").nullable();
    t.integer("plan_create").nullable();
    t.integer("plan_change").nullable();
    t.integer("plan_destroy").nullable();
    t.string("plan_digest", 64).nullable();
    t.bigInteger("plan_size_bytes").nullable();
    t.string("plan_artifact_key", 255).nullable();
    t.string("plan_json_digest", 64).nullable();
    t.bigInteger("plan_json_size_bytes").nullable();
    t.string("plan_json_artifact_key", 255).nullable();
    t.string("dependency_bundle_digest", 64).nullable();
    // The plan's dependency lock file (provider pins and hashes, no secrets); the apply reuses it.
    t.text("dependency_lock_file").nullable();
    t.string("policy_outcome", 16).nullable();
    t.string("policy_result_digest", 64).nullable();
    t.string("predecessor_state_version_id", ID).nullable();
    t.string("predecessor_state_digest", 64).nullable();
    t.integer("workspace_lock_fence").nullable();
    timestamp(t, "approval_expires_at");
    timestamp(t, "cancel_requested_at");
    timestamp(t, "finished_at");
  });

  await create("run_attempts", (t, c) => {
    idColumn(t);
    reference(t, "run_id", "runs");
    t.string("phase", 16).notNullable();
    t.integer("attempt_number").notNullable();
    t.string("runner_id", 64).notNullable();
    t.string("sandbox_id", ID).nullable();
    t.string("sandbox_name", 64).nullable();
    t.string("region", 64).notNullable();
    t.string("base_profile", 64).notNullable();
    t.string("status", 16).notNullable();
    t.string("terminal_classification", 32).nullable();
    c.timestamp("started_at");
    c.timestamp("heartbeat_at");
    c.timestamp("finished_at", { nullable: true });
    t.check("?? in ('plan','apply')", ["phase"], "run_attempts_phase_check");
    t.check("?? in ('running','succeeded','failed','interrupted','lost')", ["status"], "run_attempts_status_check");
    t.unique(["run_id", "phase", "attempt_number"], { indexName: "run_attempts_run_phase_number_unique" });
  });

  await create("run_log_chunks", (t, c) => {
    reference(t, "run_id", "runs");
    t.string("phase", 16).notNullable();
    t.integer("seq").notNullable();
    t.text("text").notNullable();
    t.boolean("final").notNullable().defaultTo(false);
    c.timestamp("created_at");
    t.primary(["run_id", "phase", "seq"], "run_log_chunks_pkey");
    t.check("?? in ('plan','policy','apply')", ["phase"], "run_log_chunks_phase_check");
  });

  await create("run_reviews", (t, c) => {
    idColumn(t);
    reference(t, "run_id", "runs");
    t.string("decision", 16).notNullable();
    t.string("actor_id", ID).nullable();
    t.text("reason").nullable();
    t.string("plan_digest", 64).nullable();
    t.string("policy_result_digest", 64).nullable();
    t.string("predecessor_state_digest", 64).nullable();
    t.string("dependency_bundle_digest", 64).nullable();
    // The plan's dependency lock file (provider pins and hashes, no secrets); the apply reuses it.
    t.text("dependency_lock_file").nullable();
    c.timestamp("decided_at");
    t.check("?? in ('approved','discarded','canceled','expired')", ["decision"], "run_reviews_decision_check");
    // One decision per run: two approvals racing cannot both be recorded.
    t.unique(["run_id"], { indexName: "run_reviews_run_id_unique" });
  });

  await create("run_jobs", (t, c) => {
    idColumn(t);
    reference(t, "run_id", "runs");
    reference(t, "workspace_id", "workspaces");
    t.string("phase", 16).notNullable();
    // Non-speculative runs of one workspace run one at a time, in creation order.
    t.boolean("serial").notNullable();
    t.string("status", 16).notNullable();
    t.string("runner_id", 64).nullable();
    t.integer("attempts").notNullable().defaultTo(0);
    c.timestamp("available_at");
    c.timestamp("heartbeat_at", { nullable: true });
    c.timestamp("created_at");
    c.timestamp("finished_at", { nullable: true });
    t.check("?? in ('plan','apply')", ["phase"], "run_jobs_phase_check");
    t.check("?? in ('queued','running','done')", ["status"], "run_jobs_status_check");
    t.index(["status", "available_at"], "run_jobs_status_available");
    t.index(["workspace_id", "status"], "run_jobs_workspace_status");
  });

  await knex.schema.alterTable("workspaces", (t) => {
    t.integer("approval_ttl_seconds").notNullable().defaultTo(86_400);
  });
}

/** Drops what `up` created. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("workspaces", (t) => t.dropColumn("approval_ttl_seconds"));
  await knex.schema.dropTable("run_jobs");
  await knex.schema.dropTable("run_reviews");
  await knex.schema.dropTable("run_log_chunks");
  await knex.schema.dropTable("run_attempts");
  await knex.schema.alterTable("runs", (t) => {
    for (const column of [
      "plan_status",
      "apply_status",
      "status_reason",
      "has_changes",
      "plan_create",
      "plan_change",
      "plan_destroy",
      "plan_digest",
      "plan_size_bytes",
      "plan_artifact_key",
      "plan_json_digest",
      "plan_json_size_bytes",
      "plan_json_artifact_key",
      "dependency_bundle_digest",
      "dependency_lock_file",
      "policy_outcome",
      "policy_result_digest",
      "predecessor_state_version_id",
      "predecessor_state_digest",
      "workspace_lock_fence",
      "approval_expires_at",
      "cancel_requested_at",
      "finished_at",
    ]) {
      t.dropColumn(column);
    }
  });
}
