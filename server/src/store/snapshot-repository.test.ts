import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { canonicalize, sha256Hex } from "../domain/canonical-json.ts";
import { isId, newId } from "../domain/ids.ts";
import { buildInputSnapshot } from "../domain/input-snapshot.ts";
import { createStores } from "./index.ts";
import { assertDomainError, assertRejects, countRows, seedTenancy } from "../../test/support/store-fixtures.ts";

const snapshots = suite("SnapshotRepository");

function build(workspaceId: string) {
  const secrets: Array<{ handle: string; ciphertext: string }> = [];
  const { document, inputDigest } = buildInputSnapshot(
    {
      workspaceId,
      speculative: false,
      opentofuVersion: "1.8.5",
      executionRegion: "eu-west-1",
      platform: "linux_amd64",
      credentialsProfile: "aws-prod",
      variables: [
        { key: "region", category: "terraform", hcl: false, sensitive: false, value: "eu-west-1" },
        { key: "DB_PASSWORD", category: "env", hcl: false, sensitive: true, value: "plaintext-hunter2" },
      ],
    },
    (plaintext) => {
      const handle = newId("snapshotSecret");
      secrets.push({ handle, ciphertext: `sealed(${plaintext.length})` });
      return handle;
    },
  );
  return { document, inputDigest, secrets };
}

testEachDatabase(snapshots, "stores the canonical document and its secrets, and reads them back", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const { workspace } = await seedTenancy(stores);
  const { document, inputDigest, secrets } = build(workspace.id);
  const created = await stores.snapshots.create({
    workspaceId: workspace.id,
    inputDigest,
    document,
    secrets,
    createdAt: "2026-12-02T10:11:12.345Z",
  });
  assert.ok(isId("inputSnapshot", created.id));
  assert.equal(created, {
    id: created.id,
    workspaceId: workspace.id,
    inputDigest,
    document,
    createdAt: "2026-12-02T10:11:12.345Z",
  });
  assert.equal(await stores.snapshots.getById(created.id), created);
  assert.is(await stores.snapshots.getById("snap-0000000000000000"), undefined);
  assert.is(await stores.snapshots.getSecret(secrets[0].handle), "sealed(17)");
  assert.is(await stores.snapshots.getSecret("sec-0000000000000000"), undefined);

  const [row] = await db
    .knex("input_snapshots")
    .where({ id: created.id })
    .select<Array<{ document: string }>>("document");
  assert.is(row.document, canonicalize(document));
  assert.is(sha256Hex(row.document), inputDigest);
  assert.not.ok(row.document.includes("hunter2"));
});

testEachDatabase(snapshots, "writes nothing when a secret fails to insert", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const { workspace } = await seedTenancy(stores);
  const first = build(workspace.id);
  await stores.snapshots.create({
    workspaceId: workspace.id,
    inputDigest: first.inputDigest,
    document: first.document,
    secrets: first.secrets,
    createdAt: "2026-12-02T10:11:12.345Z",
  });
  const second = build(workspace.id);
  // Reusing a handle collides on the snapshot_secrets primary key after the snapshot row is inserted.
  await assertDomainError(
    stores.snapshots.create({
      workspaceId: workspace.id,
      inputDigest: second.inputDigest,
      document: second.document,
      secrets: first.secrets,
      createdAt: "2026-12-02T10:11:12.345Z",
    }),
    "CONSTRAINT_VIOLATION",
  );
  assert.is(await countRows(db.knex, "input_snapshots"), 1);
  assert.is(await countRows(db.knex, "snapshot_secrets"), 1);
});

testEachDatabase(snapshots, "refuses a digest that is not the digest of the document, and bad handles", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const { workspace } = await seedTenancy(stores);
  const { document, inputDigest, secrets } = build(workspace.id);
  await assertRejects(
    stores.snapshots.create({
      workspaceId: workspace.id,
      inputDigest: "0".repeat(64),
      document,
      secrets,
      createdAt: "2026-12-02T10:11:12.345Z",
    }),
    TypeError,
  );
  await assertRejects(
    stores.snapshots.create({
      workspaceId: workspace.id,
      inputDigest,
      document,
      secrets: [{ handle: "not-a-handle", ciphertext: "x" }],
      createdAt: "2026-12-02T10:11:12.345Z",
    }),
    TypeError,
  );
  assert.is(await countRows(db.knex, "input_snapshots"), 0);
});

snapshots.run();
