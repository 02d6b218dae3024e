// State and locks through /api/v2, part 2: publishing state versions. The refusals of invariant 4 and
// signed uploads are state-version-refusals.test.ts.
import { storedArtifactKeys, storedObject } from "../support/artifacts.ts";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  getCurrentStateVersion,
  getStateVersion,
  getStateVersionOutput,
  listCurrentStateVersionOutputs,
} from "../../../generated/tfe/client/index.ts";
import * as tfeValidators from "../../../generated/tfe/validators.gen.js";
import { mintRunToken } from "../../src/commands/run-tokens.ts";
import { confirmStatePublication, listPendingStateVersions } from "../../src/commands/state-versions.ts";
import { isDomainError } from "../../src/domain/errors.ts";
import { databaseText } from "../support/database.ts";
import { createToken, putUpload } from "../support/factories.ts";
import { expectStatus, expectTfeError, rejection } from "../support/responses.ts";
import { testEachServer } from "../support/test-server.ts";
import {
  MINUTE,
  applyingRun,
  setUp,
  newRun,
  stateFile,
  hex,
  createWith,
  publication,
  publishState,
  downloadBytes,
  expectConflict,
  expectUnchanged,
} from "./state-support.ts";

const publishing = suite("state publication through /api/v2");

testEachServer(
  publishing,
  "no state yet: current-state-version is 404 and current-state-version-outputs is {data: []}",
  async (server) => {
    const f = await setUp(server);
    const run = await newRun(server, f);
    const { secret } = await mintRunToken(server.services, run, "plan", MINUTE);
    for (const token of [f.token, secret]) {
      expectTfeError(
        await getCurrentStateVersion({ client: server.tfe(token), path: { workspace_id: f.workspaceId } }),
        404,
        "not found",
      );
      const outputs = expectStatus(
        await listCurrentStateVersionOutputs({ client: server.tfe(token), path: { workspace_id: f.workspaceId } }),
        200,
      );
      assert.ok(
        tfeValidators.listCurrentStateVersionOutputsResponse200(outputs),
        JSON.stringify(tfeValidators.listCurrentStateVersionOutputsResponse200.errors),
      );
      assert.equal(outputs.data, []);
    }
  },
);

testEachServer(
  publishing,
  "create → 201 with absolute signed upload URLs; PUT; pending and not current until confirmed; then current, with the exact bytes and the outputs",
  async (server) => {
    const { f, run, fence, secret } = await applyingRun(server);
    const lineage = "3b4e1d5c-0000-4000-8000-000000000001";
    const outputs = {
      endpoint: { sensitive: false, type: "string", value: "https://example.test" },
      ports: { sensitive: false, type: ["list", "number"], value: [80, 443] },
      password: { sensitive: true, type: "string", value: "s3cr3t-out-put" },
    };
    const bytes = stateFile(1, lineage, outputs);
    const path = { workspace_id: f.workspaceId };

    const created = await createWith(server, secret, f.workspaceId, bytes, 1, lineage, { runId: run.id, outputs });
    const document = expectStatus(created, 201);
    assert.ok(
      tfeValidators.createStateVersionResponse201(document),
      JSON.stringify(tfeValidators.createStateVersionResponse201.errors),
    );
    const sv = document.data;
    assert.match(sv.id, /^sv-[0-9a-z]{16}$/);
    assert.is(sv.attributes.status, "pending");
    assert.is(sv.attributes.serial, 1);
    assert.is(sv.attributes.fence, fence);
    assert.equal(sv.relationships.run.data, { type: "runs", id: run.id });
    for (const url of [sv.attributes["hosted-state-upload-url"]!, sv.attributes["hosted-json-state-upload-url"]!]) {
      assert.ok(url.startsWith(`${server.baseUrl}/api/v2/uploads/`), url);
    }
    assert.is.not(sv.attributes["hosted-state-upload-url"], sv.attributes["hosted-json-state-upload-url"]);
    assert.match(sv.attributes["created-at"], /Z$/);

    // The two PUTs, concurrently and without Authorization, as the CLI does them.
    const [state, json] = await Promise.all([
      putUpload(sv.attributes["hosted-state-upload-url"]!, bytes),
      putUpload(sv.attributes["hosted-json-state-upload-url"]!, Buffer.from('{"format_version":"1.0","values":{}}')),
    ]);
    assert.is(state.status, 204);
    assert.is(json.status, 204);
    const shown = expectStatus(
      await getStateVersion({ client: server.tfe(secret), path: { state_version_id: sv.id } }),
      200,
    );
    assert.ok(tfeValidators.getStateVersionResponse200(shown));
    assert.is(shown.data.attributes.status, "pending");
    assert.is(shown.data.attributes.sha256, hex("sha256", bytes));
    assert.is(shown.data.attributes["hosted-state-upload-url"], undefined);

    // Stored encrypted: no artifact file holds the plaintext.
    const files = await storedArtifactKeys(server, "state-versions/");
    assert.is(files.length, 1);
    const sealed = await storedObject(server, files[0]);
    assert.not.ok(sealed.includes(Buffer.from(lineage)), "state must be stored encrypted");
    assert.not.ok(sealed.includes(Buffer.from("s3cr3t-out-put")));

    // Pending: not current, no outputs; only the run itself may read its pending bytes.
    expectTfeError(await getCurrentStateVersion({ client: server.tfe(f.token), path }), 404, "not found");
    assert.equal(
      expectStatus(await listCurrentStateVersionOutputs({ client: server.tfe(f.token), path }), 200).data,
      [],
    );
    const own = await downloadBytes(server, secret, sv.id);
    assert.is(own.result.response.status, 200);
    assert.ok(own.bytes?.equals(bytes));
    const { secret: otherRunSecret } = await mintRunToken(server.services, await newRun(server, f), "plan", MINUTE);
    expectTfeError((await downloadBytes(server, otherRunSecret, sv.id)).result, 403, "Permission denied");
    // A person never reads an unpublished upload through this route, even with state:read.
    const unpublished = expectTfeError((await downloadBytes(server, f.token, sv.id)).result, 403, "Permission denied");
    assert.match(unpublished.detail!, /emergency-state/);
    assert.equal(
      (await listPendingStateVersions(server.services, run.id)).map((v) => v.id),
      [sv.id],
    );

    // The runner confirms after a successful apply.
    const published = await confirmStatePublication(server.services, publication(run, sv.id, bytes, 1, lineage, fence));
    assert.is(published.status, "finalized");
    assert.ok(published.publishedAt);
    assert.equal(await listPendingStateVersions(server.services, run.id), []);

    for (const token of [secret, f.token]) {
      const current = expectStatus(await getCurrentStateVersion({ client: server.tfe(token), path }), 200);
      assert.ok(
        tfeValidators.getCurrentStateVersionResponse200(current),
        JSON.stringify(tfeValidators.getCurrentStateVersionResponse200.errors),
      );
      assert.is(current.data.id, sv.id);
      assert.is(current.data.attributes.status, "finalized");
      assert.is(current.data.attributes["hosted-state-download-url"], `/api/v2/state-versions/${sv.id}/download`);
      assert.is(current.data.attributes["published-at"], published.publishedAt);
    }
    // The download URL is relative to the server; the CLI sends its token there. Byte for byte.
    const download = await fetch(`${server.baseUrl}/api/v2/state-versions/${sv.id}/download`, {
      headers: { Authorization: `Bearer ${otherRunSecret}`, Accept: "application/json" },
    });
    assert.is(download.status, 200);
    assert.ok(Buffer.from(await download.arrayBuffer()).equals(bytes), "the exact uploaded bytes");
    // People read published state (`tofu state pull`) with state:read, audited; a viewer has no state:read.
    const person = await downloadBytes(server, f.token, sv.id);
    assert.is(person.result.response.status, 200);
    assert.ok(person.bytes?.equals(bytes));
    const audit = await server.db.knex("audit_events").where({ action: "state_version.downloaded", target_id: sv.id });
    assert.is(audit.length, 1);
    const viewer = await createToken(server, f.token, f.organizationName, "viewer");
    const refused = expectTfeError((await downloadBytes(server, viewer.token, sv.id)).result, 403, "Permission denied");
    assert.match(refused.detail!, /state:read/);
    expectTfeError((await downloadBytes(server, undefined, sv.id)).result, 401, "unauthorized");

    const listed = expectStatus(await listCurrentStateVersionOutputs({ client: server.tfe(f.token), path }), 200);
    assert.ok(
      tfeValidators.listCurrentStateVersionOutputsResponse200(listed),
      JSON.stringify(tfeValidators.listCurrentStateVersionOutputsResponse200.errors),
    );
    assert.equal(
      listed.data.map((o) => o.attributes),
      [
        {
          name: "endpoint",
          sensitive: false,
          type: "string",
          value: "https://example.test",
          "detailed-type": "string",
        },
        { name: "password", sensitive: true, type: "string", value: null, "detailed-type": "string" },
        { name: "ports", sensitive: false, type: "list", value: [80, 443], "detailed-type": ["list", "number"] },
      ],
    );
    const password = listed.data[1];
    const single = expectStatus(
      await getStateVersionOutput({ client: server.tfe(f.token), path: { state_version_output_id: password.id } }),
      200,
    );
    assert.ok(tfeValidators.getStateVersionOutputResponse200(single));
    assert.equal(single.data, password);
    expectTfeError(
      await getStateVersionOutput({
        client: server.tfe(f.token),
        path: { state_version_output_id: `svo-${"0".repeat(16)}-0` },
      }),
      404,
      "not found",
    );
    assert.not.ok((await databaseText(server)).includes("s3cr3t-out-put"), "a sensitive output value is never stored");

    const events = (await server.services.stores.audit.listByOrganization(f.organizationId))
      .map((e) => e.action)
      .filter((a) => a.startsWith("state_version."));
    assert.equal(events, [
      "state_version.created",
      "state_version.uploaded",
      "state_version.published",
      "state_version.downloaded",
    ]);
    const again = await rejection(
      confirmStatePublication(server.services, publication(run, sv.id, bytes, 1, lineage, fence)),
    );
    assert.ok(isDomainError(again, "STATE_VERSION_NOT_PENDING"), String(again));
  },
);

testEachServer(
  publishing,
  "without relationships.run (no TFE_RUN_ID) the version is still linked to the token's run",
  async (server) => {
    const { f, run, secret } = await applyingRun(server);
    const bytes = stateFile(4, "lineage-x");
    const created = expectStatus(await createWith(server, secret, f.workspaceId, bytes, 4, "lineage-x"), 201);
    assert.equal(created.data.relationships.run.data, { type: "runs", id: run.id });
  },
);

testEachServer(
  publishing,
  "serial must increase and the lineage must stay (force or not); each refusal is 409 and changes nothing",
  async (server) => {
    const { f, run, fence, secret } = await applyingRun(server);
    await publishState(server, run, secret, fence, stateFile(3, "lineage-a"), 3, "lineage-a");
    await expectUnchanged(server, f.workspaceId, async () => {
      for (const serial of [3, 2, 0]) {
        const error = expectConflict(
          await createWith(server, secret, f.workspaceId, stateFile(serial, "lineage-a"), serial, "lineage-a", {
            runId: run.id,
          }),
          "STATE_VERSION_SERIAL_NOT_INCREASING",
          "State serial must increase",
        );
        assert.match(error.detail!, /greater than the current state's serial 3/);
      }
      for (const force of [false, true]) {
        expectConflict(
          await createWith(server, secret, f.workspaceId, stateFile(9, "lineage-b"), 9, "lineage-b", {
            runId: run.id,
            force,
          }),
          "STATE_VERSION_LINEAGE_MISMATCH",
          "State lineage differs from the current state",
        );
      }
    });
    const next = await publishState(server, run, secret, fence, stateFile(4, "lineage-a"), 4, "lineage-a");
    assert.is((await server.services.stores.stateVersions.current(f.workspaceId))?.id, next.id);
  },
);

publishing.run();
