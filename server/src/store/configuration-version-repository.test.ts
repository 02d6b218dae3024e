import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import type { DomainError } from "../domain/errors.ts";
import { isId } from "../domain/ids.ts";
import type { Database } from "./db.ts";
import { createStores } from "./index.ts";
import { assertDomainError, assertRejects, at, seedTenancy } from "../../test/support/store-fixtures.ts";
import { ARTIFACT_FORMAT, artifactRefOf } from "../domain/artifacts.ts";
import type { ConfigurationVersion } from "../domain/records.ts";

const configurationVersions = suite("ConfigurationVersionRepository");

const UPLOAD = {
  configDigest: "c".repeat(64),
  sizeBytes: 5_000_000_123,
  artifactKey: "config/abc.tar.gz",
  uploadedAt: "2026-12-02T10:11:13.456Z",
};

/** The ref a reader opens the version's object with (commands/configuration-versions.ts configurationArtifact). */
const configurationArtifact = (version: ConfigurationVersion) =>
  artifactRefOf("configuration", {
    key: version.artifactKey,
    sizeBytes: version.sizeBytes,
    sha256: version.configDigest,
  });

/** Stores over `db`, a tenancy and one pending, non-speculative configuration version created at at(3). */
async function seedPendingVersion(db: Database) {
  const stores = createStores(db.knex, db.dialect);
  const { organization, workspace } = await seedTenancy(stores);
  const created = await stores.configurationVersions.create({
    organizationId: organization.id,
    workspaceId: workspace.id,
    speculative: false,
    source: "tfe-api",
    createdAt: at(3),
  });
  return { stores, created };
}

testEachDatabase(
  configurationVersions,
  "create starts pending; markUploaded records the upload exactly",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const { organization, workspace } = await seedTenancy(stores);
    const created = await stores.configurationVersions.create({
      organizationId: organization.id,
      workspaceId: workspace.id,
      speculative: true,
      source: "tfe-api",
      createdAt: "2026-12-02T10:11:12.345Z",
    });
    assert.ok(isId("configurationVersion", created.id));
    assert.equal(created, {
      id: created.id,
      organizationId: organization.id,
      workspaceId: workspace.id,
      status: "pending",
      speculative: true,
      source: "tfe-api",
      configDigest: null,
      sizeBytes: null,
      artifactKey: null,
      createdAt: "2026-12-02T10:11:12.345Z",
      uploadedAt: null,
    });
    assert.equal(await stores.configurationVersions.getById(created.id), created);

    const uploaded = await stores.configurationVersions.markUploaded(created.id, UPLOAD);
    // sizeBytes is a bigint column: beyond 32 bits it must still come back as the same number.
    assert.equal(uploaded, {
      ...created,
      status: "uploaded",
      configDigest: UPLOAD.configDigest,
      sizeBytes: 5_000_000_123,
      artifactKey: UPLOAD.artifactKey,
      uploadedAt: UPLOAD.uploadedAt,
    });
    assert.equal(await stores.configurationVersions.getById(created.id), uploaded);
    assert.is(await stores.configurationVersions.getById("cv-0000000000000000"), undefined);
  },
);

testEachDatabase(
  configurationVersions,
  "a second upload is CONFIGURATION_VERSION_ALREADY_UPLOADED and changes nothing",
  async (db) => {
    const { stores, created } = await seedPendingVersion(db);
    const first = await stores.configurationVersions.markUploaded(created.id, UPLOAD);
    await assertDomainError(
      stores.configurationVersions.markUploaded(created.id, {
        ...UPLOAD,
        configDigest: "d".repeat(64),
        uploadedAt: at(9),
      }),
      "CONFIGURATION_VERSION_ALREADY_UPLOADED",
    );
    assert.equal(await stores.configurationVersions.getById(created.id), first);
  },
);

testEachDatabase(configurationVersions, "an errored version cannot be uploaded either", async (db) => {
  const { stores, created } = await seedPendingVersion(db);
  await db.knex("configuration_versions").where({ id: created.id }).update({ status: "errored" });
  await assertDomainError(
    stores.configurationVersions.markUploaded(created.id, UPLOAD),
    "CONFIGURATION_VERSION_ALREADY_UPLOADED",
  );
});

testEachDatabase(configurationVersions, "an unknown id is NOT_FOUND", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  await assertDomainError(stores.configurationVersions.markUploaded("cv-0000000000000000", UPLOAD), "NOT_FOUND");
});

testEachDatabase(configurationVersions, "of two concurrent uploads exactly one wins", async (db) => {
  const { stores, created } = await seedPendingVersion(db);
  const results = await Promise.allSettled([
    stores.configurationVersions.markUploaded(created.id, { ...UPLOAD, configDigest: "1".repeat(64) }),
    stores.configurationVersions.markUploaded(created.id, { ...UPLOAD, configDigest: "2".repeat(64) }),
  ]);
  const fulfilled = results.filter((result) => result.status === "fulfilled");
  const rejected = results.filter((result): result is PromiseRejectedResult => result.status === "rejected");
  assert.is(fulfilled.length, 1);
  assert.is(rejected.length, 1);
  assert.is((rejected[0].reason as DomainError).code, "CONFIGURATION_VERSION_ALREADY_UPLOADED");
  assert.is((await stores.configurationVersions.getById(created.id))?.configDigest, fulfilled[0].value.configDigest);
});

testEachDatabase(
  configurationVersions,
  "latestUploaded picks the newest upload, skipping pending and (by default) speculative ones",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const { organization, workspace } = await seedTenancy(stores);
    const create = (speculative: boolean, seconds: number) =>
      stores.configurationVersions.create({
        organizationId: organization.id,
        workspaceId: workspace.id,
        speculative,
        source: "tfe-api",
        createdAt: at(seconds),
      });
    assert.is(await stores.configurationVersions.latestUploaded(workspace.id), undefined);
    const older = await create(false, 10);
    const newer = await create(false, 11);
    const speculative = await create(true, 12);
    await create(false, 13); // never uploaded
    // Each upload is its own object (its key names the version), recorded once in `artifacts`.
    const upload = (id: string, seconds: number) =>
      stores.configurationVersions.markUploaded(id, {
        ...UPLOAD,
        artifactKey: `config/${id}.tar.gz`,
        uploadedAt: at(seconds),
      });
    await upload(newer.id, 20);
    await upload(older.id, 21);
    await upload(speculative.id, 22);
    assert.is((await stores.configurationVersions.latestUploaded(workspace.id))?.id, older.id);
    assert.is(
      (await stores.configurationVersions.latestUploaded(workspace.id, { includeSpeculative: true }))?.id,
      speculative.id,
    );
  },
);

testEachDatabase(
  configurationVersions,
  "markUploaded records the object's artifacts row in the same transaction; the record's size is that row's",
  async (db) => {
    const { stores, created } = await seedPendingVersion(db);
    const uploaded = await stores.configurationVersions.markUploaded(created.id, UPLOAD);
    const ref = {
      kind: "configuration",
      key: UPLOAD.artifactKey,
      sizeBytes: UPLOAD.sizeBytes,
      sha256: UPLOAD.configDigest,
      format: ARTIFACT_FORMAT,
    };
    assert.equal(await stores.artifacts.byKey(UPLOAD.artifactKey), {
      ref,
      workspaceId: created.workspaceId,
      runId: null,
    });
    assert.equal(configurationArtifact(uploaded), ref, "the reader's ref is the artifacts row");
    // A rejected second upload (and a rolled-back caller) leaves no row behind.
    await assertDomainError(
      stores.configurationVersions.markUploaded(created.id, { ...UPLOAD, artifactKey: "config/other.tar.gz" }),
      "CONFIGURATION_VERSION_ALREADY_UPLOADED",
    );
    const second = await stores.configurationVersions.create({
      organizationId: created.organizationId,
      workspaceId: created.workspaceId,
      speculative: false,
      source: "tfe-api",
      createdAt: at(5),
    });
    await assertRejects(
      db.knex.transaction(async (trx) => {
        await createStores(trx, db.dialect).configurationVersions.markUploaded(second.id, {
          ...UPLOAD,
          artifactKey: "config/rolled-back.tar.gz",
        });
        throw new Error("the caller fails after the upload");
      }),
      Error,
    );
    assert.is((await stores.configurationVersions.getById(second.id))?.status, "pending");
    assert.equal(
      (await db.knex("artifacts").select("artifact_key")).map((row: { artifact_key: string }) => row.artifact_key),
      [UPLOAD.artifactKey],
    );
    // An object already recorded under the key is not recorded again, and the upload does not happen.
    await assertDomainError(stores.configurationVersions.markUploaded(second.id, UPLOAD), "CONSTRAINT_VIOLATION");
    assert.is((await stores.configurationVersions.getById(second.id))?.status, "pending");
  },
);

testEachDatabase(
  configurationVersions,
  "a version whose artifacts row is missing or describes another object has no readable object",
  async (db) => {
    const { stores, created } = await seedPendingVersion(db);
    await stores.configurationVersions.markUploaded(created.id, UPLOAD);
    const read = async () => (await stores.configurationVersions.getById(created.id))!;
    await db
      .knex("artifacts")
      .where({ artifact_key: UPLOAD.artifactKey })
      .update({ sha256: "d".repeat(64) });
    assert.is((await read()).sizeBytes, null);
    assert.is(configurationArtifact(await read()), null);
    await db
      .knex("artifacts")
      .where({ artifact_key: UPLOAD.artifactKey })
      .update({ sha256: UPLOAD.configDigest, kind: "state" });
    assert.is(configurationArtifact(await read()), null);
    await db.knex("artifacts").where({ artifact_key: UPLOAD.artifactKey }).update({ kind: "configuration" });
    assert.is((await read()).sizeBytes, UPLOAD.sizeBytes);
    assert.is((await stores.configurationVersions.listByWorkspace(created.workspaceId))[0].sizeBytes, UPLOAD.sizeBytes);
    await db.knex("artifacts").where({ artifact_key: UPLOAD.artifactKey }).delete();
    assert.is(configurationArtifact(await read()), null);
    assert.is((await read()).configDigest, UPLOAD.configDigest, "the digest runs bind to stays the version's");
  },
);

testEachDatabase(configurationVersions, "an unknown status is refused by the database", async (db) => {
  const { created } = await seedPendingVersion(db);
  try {
    await db.knex("configuration_versions").where({ id: created.id }).update({ status: "archived" });
    assert.unreachable();
  } catch (error) {
    assert.ok(
      db.dialect === "sqlite"
        ? (error as { code: string }).code === "SQLITE_CONSTRAINT_CHECK"
        : (error as { code: string }).code === "23514",
    );
  }
});

configurationVersions.run();
