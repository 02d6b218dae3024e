import { gzipSync } from "node:zlib";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { storedArtifactKeys } from "../support/artifacts.ts";
import {
  createPendingConfiguration,
  makeConfigurationTarball,
  putUpload,
  sha256,
  withCharacterChanged,
} from "../support/factories.ts";
import { expectV1Error } from "../support/responses.ts";
import { labelled, refusedUpload, setUpAcme, shownConfiguration, tokenOf } from "../support/api-requests.ts";
import { testEachServer } from "../support/test-server.ts";

const UPLOAD_LIMIT = 64 * 1024 * 1024;

const upload = suite("uploadConfiguration");

testEachServer(
  upload,
  "stores the upload: status uploaded, config_digest is the SHA-256 of the bytes, size recorded, upload_url gone",
  async (server) => {
    const { token, workspace } = await setUpAcme(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const url = new URL(pending.attributes.upload_url!);
    assert.is(url.origin, server.baseUrl, "upload_url is not absolute on this server");
    const bytes = makeConfigurationTarball({
      "main.tf": 'resource "terraform_data" "x" {}\n',
      "modules/a/main.tf": "# a\n",
    });
    const response = await putUpload(pending.attributes.upload_url!, bytes);
    assert.is(response.status, 200);
    const shown = await shownConfiguration(server, token, pending.id);
    assert.is(shown.attributes.status, "uploaded");
    assert.is(shown.attributes.config_digest, sha256(bytes));
    assert.is(shown.attributes.size_bytes, bytes.length);
    assert.is(shown.attributes.upload_url, null);
    assert.type(shown.attributes.uploaded_at, "string");
    // Stored encrypted: no artifact file holds the plaintext archive.
    const files = await storedArtifactKeys(server);
    assert.is(files.length, 1);
  },
);

testEachServer(
  upload,
  "fails 409 CONFIGURATION_VERSION_ALREADY_UPLOADED on a second PUT, keeping the first digest",
  async (server) => {
    const { token, workspace } = await setUpAcme(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const first = makeConfigurationTarball();
    assert.is((await putUpload(pending.attributes.upload_url!, first)).status, 200);
    const artifactsBefore = await storedArtifactKeys(server);
    const second = makeConfigurationTarball({ "main.tf": 'resource "terraform_data" "other" {}\n' });
    for (const bytes of [second, first]) {
      const result = await refusedUpload(server, tokenOf(pending.attributes.upload_url!), bytes);
      expectV1Error(result, 409, "CONFIGURATION_VERSION_ALREADY_UPLOADED");
    }
    const shown = await shownConfiguration(server, token, pending.id);
    assert.is(shown.attributes.config_digest, sha256(first));
    assert.equal(await storedArtifactKeys(server), artifactsBefore);
  },
);

testEachServer(upload, "fails 404 NOT_FOUND for a tampered upload token, and writes nothing", async (server) => {
  const { token, workspace } = await setUpAcme(server);
  const pending = await createPendingConfiguration(server, token, workspace.id);
  const good = tokenOf(pending.attributes.upload_url!);
  const [payload, mac] = good.split(".");
  const other = await createPendingConfiguration(server, token, workspace.id);
  const tampered = [
    withCharacterChanged(good, 0),
    withCharacterChanged(good, payload.length - 2),
    withCharacterChanged(good, payload.length + 1),
    withCharacterChanged(good, good.length - 1),
    `${payload}.${tokenOf(other.attributes.upload_url!).split(".")[1]}`,
    `${Buffer.from(JSON.stringify({ cv: other.id, exp: 4102444800 })).toString("base64url")}.${mac}`,
    `${Buffer.from(JSON.stringify({ cv: pending.id, exp: 4102444800 })).toString("base64url")}.${mac}`,
  ];
  for (const t of tampered) {
    const result = await refusedUpload(server, t, makeConfigurationTarball());
    labelled(t, () => expectV1Error(result, 404, "NOT_FOUND"));
  }
  const still = await shownConfiguration(server, token, pending.id);
  assert.is(still.attributes.status, "pending");
  assert.equal(await storedArtifactKeys(server), []);
});

testEachServer(
  upload,
  "fails 422 CONFIGURATION_UPLOAD_INVALID for data that is not a gzip tar archive, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUpAcme(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const real = makeConfigurationTarball();
    const bodies: Array<[string, Buffer]> = [
      ["plain text", Buffer.from('resource "terraform_data" "x" {}\n')],
      ["an empty body", Buffer.alloc(0)],
      ["gzip of text (not a tar)", gzipSync(Buffer.from("hello, this is not a tar archive\n"))],
      ["gzip of 512 non-tar bytes", gzipSync(Buffer.alloc(1024, 0x41))],
      ["a truncated .tar.gz", real.subarray(0, Math.floor(real.length / 2))],
      ["gzip magic only", Buffer.from([0x1f, 0x8b])],
      ["a zip archive header", Buffer.from("PK\u0003\u0004not really a zip")],
    ];
    for (const [label, bytes] of bodies) {
      const result = await refusedUpload(server, tokenOf(pending.attributes.upload_url!), bytes);
      labelled(label, () => expectV1Error(result, 422, "CONFIGURATION_UPLOAD_INVALID"));
    }
    const still = await shownConfiguration(server, token, pending.id);
    assert.is(still.attributes.status, "pending");
    assert.is(still.attributes.config_digest, null);
    assert.equal(await storedArtifactKeys(server), []);
    // The same URL still takes a good upload afterwards.
    assert.is((await putUpload(pending.attributes.upload_url!, real)).status, 200);
  },
);

testEachServer(
  upload,
  "accepts exactly 64 MiB past the size check (422 CONFIGURATION_UPLOAD_INVALID) and fails 413 CONFIGURATION_UPLOAD_TOO_LARGE at 64 MiB + 1 byte",
  async (server) => {
    const { token, workspace } = await setUpAcme(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const uploadToken = tokenOf(pending.attributes.upload_url!);
    const atLimit = Buffer.alloc(UPLOAD_LIMIT, 0x61);
    const fits = await refusedUpload(server, uploadToken, atLimit);
    expectV1Error(fits, 422, "CONFIGURATION_UPLOAD_INVALID");
    const overLimit = Buffer.alloc(UPLOAD_LIMIT + 1, 0x61);
    const tooLarge = await refusedUpload(server, uploadToken, overLimit);
    expectV1Error(tooLarge, 413, "CONFIGURATION_UPLOAD_TOO_LARGE");
    assert.equal(await storedArtifactKeys(server), []);
  },
);

const uploadClock = { now: Date.parse("2026-12-02T10:00:00.000Z") };
testEachServer(
  upload,
  "fails 404 NOT_FOUND for an upload URL used after its hour, and writes nothing",
  async (server) => {
    uploadClock.now = Date.parse("2026-12-02T10:00:00.000Z");
    const { token, workspace } = await setUpAcme(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    uploadClock.now += 3600 * 1000 + 1000;
    const result = await refusedUpload(server, tokenOf(pending.attributes.upload_url!), makeConfigurationTarball());
    expectV1Error(result, 404, "NOT_FOUND");
    // Within the hour it works.
    const fresh = await createPendingConfiguration(server, token, workspace.id);
    uploadClock.now += 3599 * 1000;
    assert.is((await putUpload(fresh.attributes.upload_url!, makeConfigurationTarball())).status, 200);
  },
  { clock: () => new Date(uploadClock.now) },
);

upload.run();
