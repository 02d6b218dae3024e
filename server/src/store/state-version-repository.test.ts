import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { createStores, type CreateStateVersionInput, type Stores } from "./index.ts";
import { assertDomainError, at, countRows, runInput, seedRunPrerequisites } from "../../test/support/store-fixtures.ts";
import { translateError } from "./translate-error.ts";
import { ARTIFACT_FORMAT, artifactRefOf } from "../domain/artifacts.ts";
import type { StateVersion } from "./state-version-repository.ts";

/** The ref a reader opens the version's object with (commands/state-versions.ts stateArtifact). */
const stateArtifact = (version: StateVersion) =>
  artifactRefOf("state", { key: version.artifactKey, sizeBytes: version.sizeBytes, sha256: version.sha256 });

const versions = suite("StateVersionRepository");

async function seed(db: Parameters<Parameters<typeof testEachDatabase>[2]>[0]) {
  const stores = createStores(db.knex, db.dialect);
  const prerequisites = await seedRunPrerequisites(stores);
  const run = await stores.runs.create(runInput(prerequisites));
  const input = (overrides: Partial<CreateStateVersionInput> = {}): CreateStateVersionInput => ({
    workspaceId: prerequisites.workspace.id,
    runId: run.id,
    serial: 1,
    lineage: "lineage-1",
    md5: "A".repeat(32),
    fence: 1,
    outputs: null,
    createdAt: at(1),
    ...overrides,
  });
  return { stores, run, workspace: prerequisites.workspace, input };
}

async function publish(stores: Stores, id: string, seconds: number) {
  await stores.stateVersions.markUploaded(id, {
    sha256: "c".repeat(64),
    sizeBytes: 10,
    artifactKey: `state-versions/${id}/x.tfstate`,
    uploadedAt: at(seconds),
  });
  return stores.stateVersions.finalize(id, at(seconds + 1));
}

testEachDatabase(
  versions,
  "create makes a pending version without bytes (md5 lower-cased); getById round-trips",
  async (db) => {
    const { stores, run, workspace, input } = await seed(db);
    const created = await stores.stateVersions.create(input());
    assert.match(created.id, /^sv-[0-9a-z]{16}$/);
    assert.equal(created, {
      id: created.id,
      workspaceId: workspace.id,
      runId: run.id,
      serial: 1,
      lineage: "lineage-1",
      md5: "a".repeat(32),
      sha256: null,
      sizeBytes: null,
      status: "pending",
      fence: 1,
      artifactKey: null,
      outputs: null,
      createdAt: at(1),
      uploadedAt: null,
      publishedAt: null,
    });
    assert.equal(await stores.stateVersions.getById(created.id), created);
    assert.is(await stores.stateVersions.getById("sv-0000000000000000"), undefined);
  },
);

testEachDatabase(
  versions,
  "outputs are stored sorted by name and a sensitive value is never stored, whatever the caller passes",
  async (db) => {
    const { stores, input } = await seed(db);
    const created = await stores.stateVersions.create(
      input({
        outputs: [
          { name: "z", sensitive: false, type: ["list", "string"], value: ["a"] },
          { name: "password", sensitive: true, type: "string", value: "hunter2-secret" },
        ],
      }),
    );
    assert.equal(created.outputs, [
      { name: "password", sensitive: true, type: "string", value: null },
      { name: "z", sensitive: false, type: ["list", "string"], value: ["a"] },
    ]);
    const rows = await db.knex("state_versions").select("json_outputs");
    assert.not.ok(JSON.stringify(rows).includes("hunter2-secret"));
  },
);

testEachDatabase(
  versions,
  "markUploaded records the bytes once; outputs from the upload fill only undeclared ones",
  async (db) => {
    const { stores, input } = await seed(db);
    const undeclared = await stores.stateVersions.create(input());
    const upload = {
      sha256: "b".repeat(64),
      sizeBytes: 42,
      artifactKey: "state-versions/a/b.tfstate",
      uploadedAt: at(5),
      outputs: [{ name: "o", sensitive: false, type: "string", value: "v" }],
    };
    const uploaded = await stores.stateVersions.markUploaded(undeclared.id, upload);
    assert.equal(
      { ...uploaded, outputs: uploaded?.outputs },
      {
        ...undeclared,
        sha256: "b".repeat(64),
        sizeBytes: 42,
        artifactKey: "state-versions/a/b.tfstate",
        uploadedAt: at(5),
        outputs: upload.outputs,
      },
    );
    assert.is(
      await stores.stateVersions.markUploaded(undeclared.id, { ...upload, sha256: "e".repeat(64) }),
      undefined,
      "a second upload changes nothing",
    );
    assert.is((await stores.stateVersions.getById(undeclared.id))?.sha256, "b".repeat(64));

    const declared = await stores.stateVersions.create(input({ serial: 2, outputs: [] }));
    assert.equal(
      (await stores.stateVersions.markUploaded(declared.id, { ...upload, artifactKey: "state-versions/c/d.tfstate" }))
        ?.outputs,
      [],
    );
  },
);

testEachDatabase(
  versions,
  "finalize needs bytes and a pending version; current is the finalized version with the highest serial",
  async (db) => {
    const { stores, workspace, input } = await seed(db);
    const first = await stores.stateVersions.create(input({ serial: 1 }));
    assert.is(await stores.stateVersions.finalize(first.id, at(2)), undefined, "no bytes yet");
    assert.is(await stores.stateVersions.current(workspace.id), undefined);
    const finalized = await publish(stores, first.id, 3);
    assert.equal(finalized?.status, "finalized");
    assert.is(finalized?.publishedAt, at(4));
    assert.is(await stores.stateVersions.finalize(first.id, at(9)), undefined, "finalized once");
    const pending = await stores.stateVersions.create(input({ serial: 5 }));
    assert.equal(
      (await stores.stateVersions.current(workspace.id))?.id,
      first.id,
      "a pending version is never current",
    );
    const second = await stores.stateVersions.create(input({ serial: 2 }));
    await publish(stores, second.id, 10);
    assert.equal((await stores.stateVersions.current(workspace.id))?.id, second.id);
    assert.equal(
      (await stores.stateVersions.listPendingByRun(first.runId!)).map((v) => v.id),
      [pending.id],
    );
    assert.equal(
      (await stores.stateVersions.listByWorkspace(workspace.id)).map((v) => v.serial),
      [5, 2, 1],
    );
  },
);

testEachDatabase(
  versions,
  "two finalized versions of a workspace never share a serial; pending ones may",
  async (db) => {
    const { stores, input } = await seed(db);
    const a = await stores.stateVersions.create(input({ serial: 3 }));
    const b = await stores.stateVersions.create(input({ serial: 3 }));
    await publish(stores, a.id, 2);
    await stores.stateVersions.markUploaded(b.id, {
      sha256: "d".repeat(64),
      sizeBytes: 1,
      artifactKey: "k",
      uploadedAt: at(5),
    });
    await assertDomainError(stores.stateVersions.finalize(b.id, at(6)), "CONSTRAINT_VIOLATION");
    assert.is((await stores.stateVersions.getById(b.id))?.status, "pending");
  },
);

testEachDatabase(
  versions,
  "markUploaded records each object's artifacts row with its run (several per run, or none); a lost race records nothing",
  async (db) => {
    const { stores, run, workspace, input } = await seed(db);
    const first = await stores.stateVersions.create(input({ serial: 1 }));
    const second = await stores.stateVersions.create(input({ serial: 2 }));
    const runless = await stores.stateVersions.create(input({ serial: 3, runId: null }));
    const upload = (id: string, sha: string) => ({
      sha256: sha.repeat(64),
      sizeBytes: 5_000_000_123,
      artifactKey: `state-versions/${id}/x.tfstate`,
      uploadedAt: at(7),
    });
    for (const [version, sha] of [
      [first, "a"],
      [second, "b"],
      [runless, "c"],
    ] as const) {
      const uploaded = (await stores.stateVersions.markUploaded(version.id, upload(version.id, sha)))!;
      const ref = {
        kind: "state" as const,
        key: upload(version.id, sha).artifactKey,
        sizeBytes: 5_000_000_123,
        sha256: sha.repeat(64),
        format: ARTIFACT_FORMAT,
      };
      assert.equal(await stores.artifacts.byKey(ref.key), { ref, workspaceId: workspace.id, runId: version.runId });
      assert.equal(stateArtifact(uploaded), ref, "the reader's ref is the artifacts row");
    }
    const states = async () => (await db.knex("artifacts").where({ kind: "state" }).select("artifact_key")).length;
    assert.is(await states(), 3);
    assert.equal(
      await stores.artifacts.listForRun(run.id),
      [],
      "a run's uploaded states are not among the artifacts it produced",
    );
    assert.is(await stores.stateVersions.markUploaded(first.id, upload(first.id, "e")), undefined);
    const rolledBack = await stores.stateVersions.create(input({ serial: 4 }));
    await db.knex
      .transaction(async (trx) => {
        await createStores(trx, db.dialect).stateVersions.markUploaded(rolledBack.id, upload(rolledBack.id, "f"));
        throw new Error("the caller fails after the upload");
      })
      .catch(() => undefined);
    assert.is((await stores.stateVersions.getById(rolledBack.id))?.sha256, null);
    assert.is(await states(), 3);
  },
);

testEachDatabase(
  versions,
  "a version whose artifacts row is missing or describes another object has no readable object",
  async (db) => {
    const { stores, workspace, input } = await seed(db);
    const version = await stores.stateVersions.create(input());
    const finalized = await publish(stores, version.id, 3);
    assert.is(finalized?.sizeBytes, 10);
    const key = `state-versions/${version.id}/x.tfstate`;
    await db.knex("artifacts").where({ artifact_key: key }).update({ size_bytes: 11 });
    assert.is((await stores.stateVersions.current(workspace.id))?.sizeBytes, 11, "the size is the artifacts row's");
    await db
      .knex("artifacts")
      .where({ artifact_key: key })
      .update({ sha256: "d".repeat(64) });
    assert.is(stateArtifact((await stores.stateVersions.getById(version.id))!), null);
    assert.is((await stores.stateVersions.listByWorkspace(workspace.id))[0].sizeBytes, null);
    await db.knex("artifacts").where({ artifact_key: key }).delete();
    const read = (await stores.stateVersions.getById(version.id))!;
    assert.is(stateArtifact(read), null);
    assert.is(read.sha256, "c".repeat(64), "the digest publication binds to stays the version's");
  },
);

testEachDatabase(
  versions,
  "the database refuses an unknown status, a negative serial, and a finalized row without bytes",
  async (db) => {
    const { stores, workspace, input } = await seed(db);
    const before = await countRows(db.knex, "state_versions");
    const row = {
      id: "sv-0000000000000000",
      workspace_id: workspace.id,
      run_id: null,
      serial: 1,
      lineage: "l",
      md5: "a".repeat(32),
      status: "pending",
      fence: 1,
      created_at: at(1),
    };
    const insert = (overrides: Record<string, unknown>) =>
      db
        .knex("state_versions")
        .insert({ ...row, ...overrides })
        .catch((error: unknown) => Promise.reject(translateError(db.dialect, error)));
    await assertDomainError(insert({ status: "current" }), "CONSTRAINT_VIOLATION");
    await assertDomainError(insert({ serial: -1 }), "CONSTRAINT_VIOLATION");
    await assertDomainError(insert({ status: "finalized", published_at: at(2) }), "CONSTRAINT_VIOLATION");
    await assertDomainError(
      stores.stateVersions.create(input({ workspaceId: "ws-0000000000000000" })),
      "CONSTRAINT_VIOLATION",
    );
    assert.is(await countRows(db.knex, "state_versions"), before);
  },
);

versions.run();
