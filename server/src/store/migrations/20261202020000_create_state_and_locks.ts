import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import { columnsFor, ID, idColumn, reference, type Columns } from "./schema-helpers.ts";

// NOTE: this migration is frozen once released; later changes go in a new migration.

/**
 * Creates the workspace lock with its fencing counter, run-scoped tokens, and state versions
 * (ARCHITECTURE invariant 4: applies hold the lock with a fencing token; a state version from a
 * stale fence is refused).
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  const create = (table: string, build: (t: Knex.CreateTableBuilder, c: Columns) => void) =>
    knex.schema.createTable(table, (t) => build(t, columnsFor(dialect, table, t)));

  // One row per workspace that was ever locked: the last fence handed out. It only grows, so a
  // fence identifies one acquisition of the workspace lock for ever.
  await create("workspace_lock_fences", (t) => {
    t.string("workspace_id", ID).notNullable().primary().references("id").inTable("workspaces");
    t.bigInteger("fence").notNullable();
    t.check("?? > 0", ["fence"], "workspace_lock_fences_fence_positive");
  });

  // The primary key is the lock: inserting a second row for a workspace fails, so of two
  // concurrent acquisitions exactly one wins.
  await create("workspace_locks", (t, c) => {
    t.string("workspace_id", ID).notNullable().primary().references("id").inTable("workspaces");
    t.string("holder_kind", 16).notNullable();
    t.string("holder_id", ID).notNullable();
    t.bigInteger("fence").notNullable();
    t.text("reason").notNullable().defaultTo("");
    c.timestamp("locked_at");
    t.check(`?? in ('run', 'user')`, ["holder_kind"], "workspace_locks_holder_kind_check");
    t.check("?? > 0", ["fence"], "workspace_locks_fence_positive");
  });

  await create("run_tokens", (t, c) => {
    idColumn(t);
    reference(t, "run_id", "runs");
    t.string("phase", 16).notNullable();
    t.string("token_hash", 128).notNullable();
    // The fence of the run's workspace lock an apply-phase token is bound to; null for plan.
    t.bigInteger("fence").nullable();
    c.timestamp("expires_at");
    c.timestamp("created_at");
    c.timestamp("revoked_at", { nullable: true });
    t.unique(["token_hash"], { indexName: "run_tokens_token_hash_unique" });
    t.index(["run_id"], "run_tokens_run_id");
    t.check(`?? in ('plan', 'apply')`, ["phase"], "run_tokens_phase_check");
    t.check(
      `(?? = 'plan' and ?? is null) or (?? = 'apply' and ?? is not null)`,
      ["phase", "fence", "phase", "fence"],
      "run_tokens_fence_check",
    );
  });

  await create("state_versions", (t, c) => {
    idColumn(t);
    reference(t, "workspace_id", "workspaces");
    reference(t, "run_id", "runs", { nullable: true });
    t.bigInteger("serial").notNullable();
    t.string("lineage", 255).notNullable();
    t.string("md5", 32).notNullable();
    t.string("sha256", 64).nullable();
    t.bigInteger("size_bytes").nullable();
    t.string("status", 16).notNullable();
    t.bigInteger("fence").notNullable();
    t.string("artifact_key", 1024).nullable();
    // The outputs with sensitive values removed (JSON array), or null when none were declared.
    t.text("json_outputs").nullable();
    c.timestamp("created_at");
    c.timestamp("uploaded_at", { nullable: true });
    c.timestamp("published_at", { nullable: true });
    t.check(`?? in ('pending', 'finalized', 'discarded')`, ["status"], "state_versions_status_check");
    t.check("?? >= 0", ["serial"], "state_versions_serial_check");
    // A finalized version has its bytes and its publication time.
    t.check(
      `?? <> 'finalized' or (?? is not null and ?? is not null and ?? is not null)`,
      ["status", "sha256", "artifact_key", "published_at"],
      "state_versions_finalized_check",
    );
    // The current state version is the finalized one with the highest serial.
    t.index(["workspace_id", "status", "serial"], "state_versions_ws_status_serial");
    t.index(["run_id"], "state_versions_run_id");
  });
  // Partial unique index (the same SQL on SQLite and PostgreSQL): two published versions of one
  // workspace never share a serial.
  await knex.raw(
    `create unique index state_versions_finalized_serial_unique on state_versions (workspace_id, serial) where status = 'finalized'`,
  );
}

/** Drops everything up() created, dependants first. */
export async function down(knex: Knex): Promise<void> {
  for (const table of ["state_versions", "run_tokens", "workspace_locks", "workspace_lock_fences"]) {
    await knex.schema.dropTableIfExists(table);
  }
}
