import type { Knex } from "knex";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ARTIFACT_FORMAT } from "../../src/domain/artifacts.ts";
import type { Database } from "../../src/store/db.ts";
import { createStores } from "../../src/store/index.ts";
import { migrations, type NamedMigration } from "../../src/store/migrations/index.ts";
import { testEachDatabase } from "../support/databases.ts";
import { assertRejects, at, runInput, seedRunPrerequisites } from "../support/store-fixtures.ts";

// The migration that makes `artifacts` the descriptor store of configuration and state versions
// too (issue 32, part 6), on a database holding versions uploaded before it.
const migration = suite("migration 20261206100000_add_version_artifacts");

const NAME = "20261206100000_add_version_artifacts";
const UP_TO = migrations.slice(0, migrations.findIndex((m) => m.name === NAME) + 1);
const BEFORE = UP_TO.slice(0, -1);

function source(list: readonly NamedMigration[]): Knex.MigrationSource<NamedMigration> {
  return { getMigrations: async () => [...list], getMigrationName: (m) => m.name, getMigration: async (m) => m };
}

interface Row {
  artifact_key: string;
  workspace_id: string;
  run_id: string | null;
  kind: string;
  format: string;
  size_bytes: number | string;
  sha256: string;
  created_at: string | Date;
}

async function rows(db: Database, kinds: string[]): Promise<Row[]> {
  const found = await db.knex<Row>("artifacts").whereIn("kind", kinds).orderBy("artifact_key");
  return found.map((row) => ({
    ...row,
    size_bytes: Number(row.size_bytes),
    created_at: new Date(row.created_at).toISOString(),
  }));
}

/** A database migrated up to just before the migration, holding uploads as the code before it recorded them (no `artifacts` rows). */
async function seedBefore(db: Database) {
  assert.equal(BEFORE.length + 1, UP_TO.length);
  await db.knex.migrate.latest({ migrationSource: source(BEFORE) });
  const stores = createStores(db.knex, db.dialect);
  const prerequisites = await seedRunPrerequisites(stores);
  const run = await stores.runs.create(runInput(prerequisites));
  const workspaceId = prerequisites.workspace.id;
  await stores.artifacts.recordForRun(
    { kind: "plan", key: `runs/${run.id}/plan.tfplan`, sizeBytes: 3, sha256: "9".repeat(64), format: ARTIFACT_FORMAT },
    { workspaceId, runId: run.id },
    at(30),
  );
  // Before the migration, a version's descriptor was only its own columns.
  await db.knex("artifacts").whereIn("kind", ["configuration", "state"]).delete();
  const cv = prerequisites.configurationVersion;
  await db
    .knex("configuration_versions")
    .where({ id: cv.id })
    .update({ config_digest: "c".repeat(64), size_bytes: 5_000_000_123, uploaded_at: at(6) });
  const pendingCv = await stores.configurationVersions.create({
    organizationId: cv.organizationId,
    workspaceId,
    speculative: false,
    source: "tfe-api",
    createdAt: at(7),
  });
  const state = async (serial: number, runId: string | null, sha: string | null) => {
    const version = await stores.stateVersions.create({
      workspaceId,
      runId,
      serial,
      lineage: "l",
      md5: "0".repeat(32),
      fence: 1,
      outputs: null,
      createdAt: at(serial * 10),
    });
    if (sha !== null) {
      await db
        .knex("state_versions")
        .where({ id: version.id })
        .update({
          sha256: sha.repeat(64),
          size_bytes: serial * 100,
          artifact_key: `state-versions/${version.id}/${sha}.tfstate`,
          uploaded_at: at(serial * 10 + 1),
        });
    }
    return version;
  };
  // Two uploaded states of one run (an apply that retried), one without a run, one never uploaded.
  const states = [
    await state(1, run.id, "a"),
    await state(2, run.id, "b"),
    await state(3, null, "d"),
    await state(4, run.id, null),
  ];
  return { stores, run, workspaceId, cv, pendingCv, states };
}

testEachDatabase(
  migration,
  "records every uploaded configuration and state version in artifacts; down removes them and restores one-of-each-kind per run",
  async (db) => {
    const { stores, run, workspaceId, cv, pendingCv, states } = await seedBefore(db);
    await db.knex.migrate.latest({ migrationSource: source(UP_TO) });

    const state = (index: number, sha: string, runId: string | null) => ({
      artifact_key: `state-versions/${states[index].id}/${sha}.tfstate`,
      workspace_id: workspaceId,
      run_id: runId,
      kind: "state",
      format: ARTIFACT_FORMAT,
      size_bytes: (index + 1) * 100,
      sha256: sha.repeat(64),
      created_at: at((index + 1) * 10 + 1),
    });
    assert.equal(await rows(db, ["configuration"]), [
      {
        artifact_key: cv.artifactKey!,
        workspace_id: workspaceId,
        run_id: null,
        kind: "configuration",
        format: ARTIFACT_FORMAT,
        size_bytes: 5_000_000_123,
        sha256: "c".repeat(64),
        created_at: at(6),
      },
    ]);
    assert.equal(
      await rows(db, ["state"]),
      [state(0, "a", run.id), state(1, "b", run.id), state(2, "d", null)].sort((x, y) =>
        x.artifact_key < y.artifact_key ? -1 : 1,
      ),
    );
    assert.equal(
      await rows(db, ["plan"]).then((found) => found.map((row) => row.artifact_key)),
      [`runs/${run.id}/plan.tfplan`],
      "the run's artifacts stay",
    );

    // The repositories read the migrated descriptors: every uploaded version has its object.
    assert.is((await stores.configurationVersions.getById(cv.id))?.sizeBytes, 5_000_000_123);
    assert.is((await stores.configurationVersions.getById(pendingCv.id))?.sizeBytes, null);
    assert.equal(
      (await stores.stateVersions.listByRun(run.id)).map((v) => v.sizeBytes),
      [100, 200, null],
    );
    assert.is((await stores.stateVersions.getById(states[2].id))?.sizeBytes, 300);

    // The one-of-each-kind rule now covers the run kinds only.
    const extra = {
      workspace_id: workspaceId,
      run_id: run.id,
      format: ARTIFACT_FORMAT,
      size_bytes: 1,
      sha256: "e".repeat(64),
      created_at: at(50),
    };
    await assertRejects(db.knex("artifacts").insert({ ...extra, artifact_key: "runs/x/plan2", kind: "plan" }), Error);
    await db.knex("artifacts").insert({ ...extra, artifact_key: "state-versions/x/third.tfstate", kind: "state" });
    await db.knex("artifacts").where({ artifact_key: "state-versions/x/third.tfstate" }).delete();

    await db.knex.migrate.down({ migrationSource: source(UP_TO) });
    assert.equal(await rows(db, ["configuration", "state"]), []);
    assert.is((await rows(db, ["plan"])).length, 1);
    await db.knex("artifacts").insert({ ...extra, artifact_key: "state-versions/x/one.tfstate", kind: "state" });
    await assertRejects(
      db.knex("artifacts").insert({ ...extra, artifact_key: "state-versions/x/two.tfstate", kind: "state" }),
      Error,
    );
    await db.knex("artifacts").where({ artifact_key: "state-versions/x/one.tfstate" }).delete();

    // And up again records them again.
    await db.knex.migrate.latest({ migrationSource: source(UP_TO) });
    assert.is((await rows(db, ["configuration", "state"])).length, 4);
  },
  { migrate: false },
);

migration.run();
