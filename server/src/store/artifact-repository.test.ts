import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { ARTIFACT_FORMAT, type ArtifactRef } from "../domain/artifacts.ts";
import { createStores } from "./index.ts";
import {
  assertDomainError,
  assertRejects,
  at,
  countRows,
  runInput,
  seedRunPrerequisites,
  storesWithRun,
} from "../../test/support/store-fixtures.ts";

const artifacts = suite("ArtifactRepository");

const ref = (
  kind: "plan" | "plan_json" | "plan_diff",
  runId: string,
  sha: string,
  sizeBytes = 10,
): ArtifactRef & { kind: typeof kind } => ({
  kind,
  key: `runs/${runId}/${kind}`,
  sizeBytes,
  sha256: sha.repeat(64),
  format: ARTIFACT_FORMAT,
});

testEachDatabase(
  artifacts,
  "a run has at most one artifact of each kind; a rewrite replaces it; refs round-trip exactly",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const prerequisites = await seedRunPrerequisites(stores);
    const run = await stores.runs.create(runInput(prerequisites));
    const owner = { workspaceId: run.workspaceId, runId: run.id };
    assert.is(await stores.artifacts.forRun(run.id, "plan"), undefined);
    assert.equal(await stores.artifacts.listForRun(run.id), []);
    const big = 5 * 1024 * 1024 * 1024;
    await stores.artifacts.recordForRun(ref("plan", run.id, "a", big), owner, at(10));
    await stores.artifacts.recordForRun(ref("plan_json", run.id, "b"), owner, at(11));
    assert.equal(await stores.artifacts.forRun(run.id, "plan"), { ref: ref("plan", run.id, "a", big), ...owner });
    assert.is(await stores.artifacts.forRun(run.id, "plan_diff"), undefined);
    // A second plan attempt writes the same keys again: the row is replaced, not doubled.
    await stores.artifacts.recordForRun(ref("plan", run.id, "c", 7), owner, at(12));
    assert.equal((await stores.artifacts.forRun(run.id, "plan"))!.ref, ref("plan", run.id, "c", 7));
    assert.equal(
      (await stores.artifacts.listForRun(run.id)).map((r) => r.ref.kind),
      ["plan", "plan_json"],
    );
    assert.is(await countRows(db.knex, "artifacts"), 3, "the run's two and its configuration's");
  },
);

testEachDatabase(
  artifacts,
  "the table refuses another format, an unknown kind, a negative size and a second row of a kind under another key",
  async (db) => {
    const { stores, run } = await storesWithRun(db);
    const owner = { workspaceId: run.workspaceId, runId: run.id };
    await stores.artifacts.recordForRun(ref("plan", run.id, "a"), owner, at(10));
    const row = {
      artifact_key: "runs/x/other",
      workspace_id: run.workspaceId,
      run_id: run.id,
      kind: "plan_json",
      format: ARTIFACT_FORMAT,
      size_bytes: 1,
      sha256: "d".repeat(64),
      created_at: at(11),
    };
    await assertRejects(db.knex("artifacts").insert({ ...row, format: "sealed-aes256gcm" }), Error);
    await assertRejects(db.knex("artifacts").insert({ ...row, kind: "logs" }), Error);
    await assertRejects(db.knex("artifacts").insert({ ...row, size_bytes: -1 }), Error);
    await assertRejects(db.knex("artifacts").insert({ ...row, kind: "plan" }), Error);
    assert.is(await countRows(db.knex, "artifacts"), 2, "the plan and the configuration");
  },
);

testEachDatabase(
  artifacts,
  "configuration and state objects are recorded by key: several states per run, none with a run, a key once",
  async (db) => {
    const { stores, run } = await storesWithRun(db);
    const state = (key: string, sha: string): ArtifactRef & { kind: "state" } => ({
      kind: "state",
      key,
      sizeBytes: 12,
      sha256: sha.repeat(64),
      format: ARTIFACT_FORMAT,
    });
    const owner = { workspaceId: run.workspaceId, runId: run.id };
    await stores.artifacts.recordForWorkspace(state("state-versions/a.tfstate", "a"), owner, at(10));
    await stores.artifacts.recordForWorkspace(state("state-versions/b.tfstate", "b"), owner, at(11));
    await stores.artifacts.recordForWorkspace(
      state("state-versions/c.tfstate", "c"),
      { ...owner, runId: null },
      at(12),
    );
    await stores.artifacts.recordForRun(ref("plan", run.id, "d"), owner, at(13));
    assert.equal(await stores.artifacts.byKey("state-versions/b.tfstate"), {
      ref: state("state-versions/b.tfstate", "b"),
      ...owner,
    });
    assert.is(await stores.artifacts.byKey("state-versions/none.tfstate"), undefined);
    const found = await stores.artifacts.byKeys([
      "state-versions/a.tfstate",
      "state-versions/c.tfstate",
      "state-versions/a.tfstate",
      "nope",
    ]);
    assert.equal([...found.keys()].sort(), ["state-versions/a.tfstate", "state-versions/c.tfstate"]);
    assert.is(found.get("state-versions/c.tfstate")?.runId, null);
    assert.equal(
      (await stores.artifacts.listForRun(run.id)).map((r) => r.ref.kind),
      ["plan"],
    );
    await assertDomainError(
      stores.artifacts.recordForWorkspace(state("state-versions/a.tfstate", "e"), owner, at(14)),
      "CONSTRAINT_VIOLATION",
    );
    assert.is((await stores.artifacts.byKey("state-versions/a.tfstate"))?.ref.sha256, "a".repeat(64));
    // The one-per-run rule still holds for the run kinds.
    await assertRejects(
      db.knex("artifacts").insert({
        artifact_key: "runs/x/plan2",
        workspace_id: run.workspaceId,
        run_id: run.id,
        kind: "plan",
        format: ARTIFACT_FORMAT,
        size_bytes: 1,
        sha256: "f".repeat(64),
        created_at: at(15),
      }),
      Error,
    );
    // byKeys asks in batches; more keys than one batch all come back.
    const many = Array.from({ length: 1201 }, (_, i) => `k/${i}`);
    await db.knex.batchInsert(
      "artifacts",
      many.map((key) => ({
        artifact_key: key,
        workspace_id: run.workspaceId,
        run_id: null,
        kind: "configuration",
        format: ARTIFACT_FORMAT,
        size_bytes: 1,
        sha256: "0".repeat(64),
        created_at: at(16),
      })),
      200,
    );
    assert.is((await stores.artifacts.byKeys(many)).size, 1201);
  },
);

artifacts.run();
