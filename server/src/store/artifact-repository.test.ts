import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { ARTIFACT_FORMAT, type ArtifactRef } from "../domain/artifacts.ts";
import { createStores } from "./index.ts";
import { assertRejects, at, countRows, runInput, seedRunPrerequisites } from "../../test/support/store-fixtures.ts";

const artifacts = suite("ArtifactRepository");

const ref = (kind: "plan" | "plan_json" | "plan_diff", runId: string, sha: string, sizeBytes = 10): ArtifactRef & { kind: typeof kind } => ({
  kind,
  key: `runs/${runId}/${kind}`,
  sizeBytes,
  sha256: sha.repeat(64),
  format: ARTIFACT_FORMAT,
});

testEachDatabase(artifacts, "a run has at most one artifact of each kind; a rewrite replaces it; refs round-trip exactly", async (db) => {
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
  assert.is(await countRows(db.knex, "artifacts"), 2);
});

testEachDatabase(artifacts, "the table refuses another format, an unknown kind, a negative size and a second row of a kind under another key", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const run = await stores.runs.create(runInput(await seedRunPrerequisites(stores)));
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
  assert.is(await countRows(db.knex, "artifacts"), 1);
});

artifacts.run();
