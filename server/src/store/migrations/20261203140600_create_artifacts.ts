import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import * as createArtifactDescriptors from "./20261202060000_create_artifact_descriptors.ts";
import { columnsFor, ID } from "./schema-helpers.ts";

// NOTE: frozen once released; later changes go in a new migration.

/** The run columns that held three artifacts' key, size and digest; their refs are rows of `artifacts` now. */
const RUN_ARTIFACT_COLUMNS = [
  "plan_size_bytes",
  "plan_artifact_key",
  "plan_json_digest",
  "plan_json_size_bytes",
  "plan_json_artifact_key",
  "plan_diff_digest",
  "plan_diff_size_bytes",
  "plan_diff_artifact_key",
];

/**
 * One descriptor table for the artifacts runs produce (`artifacts`, replacing
 * `artifact_descriptors`): each row is an ArtifactRef (kind, key, size, SHA-256, format) with its
 * workspace and run, at most one of each kind per run. The plan's digest stays on the run
 * (`plan_digest`): it is the evidence an approval binds to.
 *
 * Existing plan JSON descriptors are carried over (they are framed). Saved plans and plan-diffs of
 * earlier runs were whole sealed objects, a format that never shipped and is no longer read: their
 * columns are dropped without carrying them over, so those runs show no stored plan.
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  await knex.schema.createTable("artifacts", (t) => {
    const c = columnsFor(dialect, "artifacts", t);
    t.string("artifact_key", 255).notNullable().primary();
    t.string("workspace_id", ID).notNullable().references("id").inTable("workspaces");
    t.string("run_id", ID).nullable().references("id").inTable("runs");
    t.string("kind", 32).notNullable();
    t.string("format", 32).notNullable();
    t.bigInteger("size_bytes").notNullable();
    t.string("sha256", 64).notNullable();
    c.timestamp("created_at");
    t.check(`?? in ('configuration','state','plan','plan_json','plan_diff')`, ["kind"], "artifacts_kind_check");
    t.check(`?? = 'framed-aes256gcm-v1'`, ["format"], "artifacts_format_check");
    t.check("?? >= 0", ["size_bytes"], "artifacts_size_check");
    t.unique(["run_id", "kind"], { indexName: "artifacts_run_kind_unique" });
  });
  await knex.raw(
    `insert into artifacts (artifact_key, workspace_id, run_id, kind, format, size_bytes, sha256, created_at)
     select artifact_key, workspace_id, run_id, kind, format, size_bytes, sha256, created_at from artifact_descriptors`,
  );
  await knex.schema.dropTable("artifact_descriptors");
  for (const column of RUN_ARTIFACT_COLUMNS) {
    if (dialect === "sqlite") await knex.raw("alter table runs drop column ??", [column]);
    else await knex.schema.alterTable("runs", (t) => t.dropColumn(column));
  }
}

/** Restores the earlier shape (run columns empty; plan JSON descriptors carried back). */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("runs", (t) => {
    t.bigInteger("plan_size_bytes").nullable();
    t.string("plan_artifact_key", 255).nullable();
    t.string("plan_json_digest", 64).nullable();
    t.bigInteger("plan_json_size_bytes").nullable();
    t.string("plan_json_artifact_key", 255).nullable();
    t.string("plan_diff_digest", 64).nullable();
    t.bigInteger("plan_diff_size_bytes").nullable();
    t.string("plan_diff_artifact_key", 255).nullable();
  });
  // The earlier table exactly as its own (frozen) migration created it.
  await createArtifactDescriptors.up(knex);
  await knex.raw(
    `insert into artifact_descriptors (artifact_key, workspace_id, run_id, kind, format, size_bytes, sha256, created_at)
     select artifact_key, workspace_id, run_id, kind, format, size_bytes, sha256, created_at from artifacts where kind = 'plan_json'`,
  );
  await knex.schema.dropTable("artifacts");
}
