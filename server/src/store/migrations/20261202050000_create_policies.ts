import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import { columnsFor, ID, idColumn, reference, type Columns } from "./schema-helpers.ts";

// NOTE: this migration is frozen once released; later changes go in a new migration.

/**
 * Policy sets and their immutable digested versions, the policy result each run pinned (with
 * its sanitized findings), and the time-bounded, digest-bound overrides of soft failures.
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  const create = (table: string, build: (t: Knex.CreateTableBuilder, c: Columns) => void) =>
    knex.schema.createTable(table, (t) => build(t, columnsFor(dialect, table, t)));

  await create("policy_sets", (t, c) => {
    idColumn(t);
    reference(t, "organization_id", "organizations");
    t.string("name", 90).notNullable();
    t.text("description").nullable();
    t.boolean("global").notNullable().defaultTo(false);
    // Canonical JSON: { project_ids: [...], workspace_ids: [...] }.
    t.text("attachments").notNullable();
    t.string("current_version_id", ID).nullable();
    c.timestamp("created_at");
    t.unique(["organization_id", "name"], { indexName: "policy_sets_organization_id_name_unique" });
  });

  await create("policy_set_versions", (t, c) => {
    idColumn(t);
    reference(t, "policy_set_id", "policy_sets");
    t.integer("version").notNullable();
    t.string("digest", 64).notNullable();
    // Canonical JSON: the policies with their names, levels, packages and sources.
    t.text("policies").notNullable();
    c.timestamp("created_at");
    t.unique(["policy_set_id", "version"], { indexName: "policy_set_versions_set_version_unique" });
    t.check("?? >= 1", ["version"], "policy_set_versions_version_positive");
  });

  await create("run_policy_evaluations", (t, c) => {
    t.string("run_id", ID).notNullable().primary().references("id").inTable("runs");
    t.string("outcome", 16).notNullable();
    t.string("result_digest", 64).notNullable();
    t.string("opa_version", 64).nullable();
    t.string("opa_build_commit", 64).nullable();
    // Canonical JSON: [{ policy_set_id, version, digest }].
    t.text("policy_set_versions").notNullable();
    t.text("error").nullable();
    c.timestamp("evaluated_at");
    t.check(
      `?? in ('skipped', 'passed', 'soft_failed', 'hard_failed', 'errored')`,
      ["outcome"],
      "run_policy_evaluations_outcome_check",
    );
  });

  await create("run_policy_findings", (t) => {
    idColumn(t);
    reference(t, "run_id", "runs");
    t.integer("seq").notNullable();
    t.string("policy_set_id", ID).notNullable();
    t.integer("policy_set_version").notNullable();
    t.string("policy_name", 90).notNullable();
    t.string("enforcement_level", 16).notNullable();
    t.text("title").notNullable();
    t.text("message").notNullable();
    t.text("address").nullable();
    t.unique(["run_id", "seq"], { indexName: "run_policy_findings_run_seq_unique" });
    t.check(
      `?? in ('advisory', 'soft_mandatory', 'hard_mandatory')`,
      ["enforcement_level"],
      "run_policy_findings_level_check",
    );
  });

  await create("policy_overrides", (t, c) => {
    idColumn(t);
    reference(t, "run_id", "runs");
    reference(t, "organization_id", "organizations");
    t.string("result_digest", 64).notNullable();
    t.text("reason").notNullable();
    t.string("actor_id", ID).nullable();
    c.timestamp("created_at");
    c.timestamp("expires_at");
    t.index(["run_id", "created_at"], "policy_overrides_run_created");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists("policy_overrides");
  await knex.schema.dropTableIfExists("run_policy_findings");
  await knex.schema.dropTableIfExists("run_policy_evaluations");
  await knex.schema.dropTableIfExists("policy_set_versions");
  await knex.schema.dropTableIfExists("policy_sets");
}
