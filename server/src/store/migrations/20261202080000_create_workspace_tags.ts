import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";
import { columnsFor, reference } from "./schema-helpers.ts";

// NOTE: this migration is frozen once released; later changes go in a new migration.

/** Workspace tags: what the `tofu` CLI's `workspaces { tags = [...] }` strategy selects by. */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  await knex.schema.createTable("workspace_tags", (t) => {
    const c = columnsFor(dialect, "workspace_tags", t);
    reference(t, "workspace_id", "workspaces");
    t.string("name", 255).notNullable();
    c.timestamp("created_at");
    t.unique(["workspace_id", "name"], { indexName: "workspace_tags_workspace_name_unique" });
    t.index(["name", "workspace_id"], "workspace_tags_name_workspace");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists("workspace_tags");
}
