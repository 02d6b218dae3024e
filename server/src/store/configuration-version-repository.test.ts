import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import type { DomainError } from "../domain/errors.ts";
import { isId } from "../domain/ids.ts";
import type { Database } from "./db.ts";
import { createStores } from "./index.ts";
import { assertDomainError, at, seedTenancy } from "../../test/support/store-fixtures.ts";

const configurationVersions = suite("ConfigurationVersionRepository");

const UPLOAD = { configDigest: "c".repeat(64), sizeBytes: 5_000_000_123, artifactKey: "config/abc.tar.gz", uploadedAt: "2026-12-02T10:11:13.456Z" };

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

testEachDatabase(configurationVersions, "create starts pending; markUploaded records the upload exactly", async (db) => {
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
});

testEachDatabase(configurationVersions, "a second upload is CONFIGURATION_VERSION_ALREADY_UPLOADED and changes nothing", async (db) => {
  const { stores, created } = await seedPendingVersion(db);
  const first = await stores.configurationVersions.markUploaded(created.id, UPLOAD);
  await assertDomainError(
    stores.configurationVersions.markUploaded(created.id, { ...UPLOAD, configDigest: "d".repeat(64), uploadedAt: at(9) }),
    "CONFIGURATION_VERSION_ALREADY_UPLOADED",
  );
  assert.equal(await stores.configurationVersions.getById(created.id), first);
});

testEachDatabase(configurationVersions, "an errored version cannot be uploaded either", async (db) => {
  const { stores, created } = await seedPendingVersion(db);
  await db.knex("configuration_versions").where({ id: created.id }).update({ status: "errored" });
  await assertDomainError(stores.configurationVersions.markUploaded(created.id, UPLOAD), "CONFIGURATION_VERSION_ALREADY_UPLOADED");
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

testEachDatabase(configurationVersions, "latestUploaded picks the newest upload, skipping pending and (by default) speculative ones", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const { organization, workspace } = await seedTenancy(stores);
  const create = (speculative: boolean, seconds: number) =>
    stores.configurationVersions.create({ organizationId: organization.id, workspaceId: workspace.id, speculative, source: "tfe-api", createdAt: at(seconds) });
  assert.is(await stores.configurationVersions.latestUploaded(workspace.id), undefined);
  const older = await create(false, 10);
  const newer = await create(false, 11);
  const speculative = await create(true, 12);
  await create(false, 13); // never uploaded
  await stores.configurationVersions.markUploaded(newer.id, { ...UPLOAD, uploadedAt: at(20) });
  await stores.configurationVersions.markUploaded(older.id, { ...UPLOAD, uploadedAt: at(21) });
  await stores.configurationVersions.markUploaded(speculative.id, { ...UPLOAD, uploadedAt: at(22) });
  assert.is((await stores.configurationVersions.latestUploaded(workspace.id))?.id, older.id);
  assert.is((await stores.configurationVersions.latestUploaded(workspace.id, { includeSpeculative: true }))?.id, speculative.id);
});

testEachDatabase(configurationVersions, "an unknown status is refused by the database", async (db) => {
  const { created } = await seedPendingVersion(db);
  try {
    await db.knex("configuration_versions").where({ id: created.id }).update({ status: "archived" });
    assert.unreachable();
  } catch (error) {
    assert.ok(db.dialect === "sqlite" ? (error as { code: string }).code === "SQLITE_CONSTRAINT_CHECK" : (error as { code: string }).code === "23514");
  }
});

configurationVersions.run();
