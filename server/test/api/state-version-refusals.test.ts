// State and locks through /api/v2, part 3: the refusals of invariant 4, signed uploads.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  createStateVersion,
  forceUnlockWorkspace,
  getCurrentStateVersion,
  lockWorkspace,
  unlockWorkspace,
} from "../../../generated/tfe/client/index.ts";
import { mintRunToken } from "../../src/commands/run-tokens.ts";
import {
  confirmStatePublication,
  listPendingStateVersions,
  type StatePublication,
} from "../../src/commands/state-versions.ts";
import { lockWorkspaceForRun, unlockWorkspaceForRun } from "../../src/commands/workspace-locks.ts";
import { isDomainError } from "../../src/domain/errors.ts";
import { createOrganizationWithToken, putUpload, withTamperedMac } from "../support/factories.ts";
import { expectStatus, expectTfeError, rejection } from "../support/responses.ts";
import { testEachServer } from "../support/test-server.ts";
import {
  MINUTE,
  applyingRun,
  createdWith,
  setUp,
  newRun,
  startApply,
  stateFile,
  hex,
  createBody,
  createWith,
  writeState,
  publication,
  publishState,
  expectConflict,
  expectUnchanged,
  validWorkspaceDocument,
} from "./state-support.ts";

// ---------------------------------------------------------------------------------------------
const refusals = suite("state version refusals (invariant 4)");

testEachServer(
  refusals,
  "a plan-phase token, a user API token, and a relationships.run of another run: each 409, nothing written",
  async (server) => {
    const { f, run, secret } = await applyingRun(server);
    const { secret: plan } = await mintRunToken(server.services, run, "plan", MINUTE);
    const other = await newRun(server, f);
    const bytes = stateFile(1, "lineage-a");
    await expectUnchanged(server, f.workspaceId, async () => {
      const phase = expectConflict(
        await createWith(server, plan, f.workspaceId, bytes, 1, "lineage-a", { runId: run.id }),
        "STATE_VERSION_PHASE_FORBIDDEN",
        "Only the apply phase may write state",
      );
      assert.match(phase.detail!, /plan phase/);
      const user = expectConflict(
        await createWith(server, f.token, f.workspaceId, bytes, 1, "lineage-a"),
        "STATE_VERSION_RUN_REQUIRED",
        "State is published only by an apply",
      );
      assert.match(user.detail!, /state push/);
      expectConflict(
        await createWith(server, server.bootstrapToken, f.workspaceId, bytes, 1, "lineage-a"),
        "STATE_VERSION_RUN_REQUIRED",
        "State is published only by an apply",
      );
      expectConflict(
        await createWith(server, secret, f.workspaceId, bytes, 1, "lineage-a", { runId: other.id }),
        "STATE_VERSION_RUN_MISMATCH",
        "State version names another run",
      );
    });
    // A viewer who cannot see the workspace at all gets 404, as for anything hidden.
    const stranger = await createOrganizationWithToken(server, "stranger", "admin");
    await expectUnchanged(server, f.workspaceId, async () => {
      expectTfeError(await createWith(server, stranger.token, f.workspaceId, bytes, 1, "lineage-a"), 404, "not found");
    });
  },
);

testEachServer(
  refusals,
  "json-state-outputs that are not base64 of an outputs object: 422 invalid_document, nothing written",
  async (server) => {
    const { f, run, secret } = await applyingRun(server);
    const bytes = stateFile(1, "lineage-a");
    for (const encoded of [
      "%%%",
      Buffer.from("[1,2]").toString("base64"),
      Buffer.from('{"o": 5}').toString("base64"),
      Buffer.from("{").toString("base64"),
    ]) {
      const body = createBody(bytes, 1, "lineage-a", { runId: run.id });
      body.data.attributes["json-state-outputs"] = encoded;
      await expectUnchanged(server, f.workspaceId, async () => {
        const error = expectTfeError(
          await createStateVersion({ client: server.tfe(secret), path: { workspace_id: f.workspaceId }, body }),
          422,
          "invalid_document",
        );
        assert.is(error.source?.pointer, "/data/attributes/json-state-outputs", encoded);
      });
    }
    // base64 of null declares no outputs; they are then read from the uploaded state.
    const body = createBody(stateFile(1, "lineage-a", { o: { value: "v", type: "string" } }), 1, "lineage-a", {
      runId: run.id,
    });
    body.data.attributes["json-state-outputs"] = Buffer.from("null").toString("base64");
    const sv = expectStatus(
      await createStateVersion({ client: server.tfe(secret), path: { workspace_id: f.workspaceId }, body }),
      201,
    ).data;
    assert.is(
      (
        await putUpload(
          sv.attributes["hosted-state-upload-url"]!,
          stateFile(1, "lineage-a", { o: { value: "v", type: "string" } }),
        )
      ).status,
      204,
    );
    assert.equal((await server.services.stores.stateVersions.getById(sv.id))?.outputs, [
      { name: "o", sensitive: false, type: "string", value: "v" },
    ]);
  },
);

testEachServer(
  refusals,
  "an apply token of a run that no longer holds the lock: 409 STATE_VERSION_LOCK_REQUIRED, nothing written",
  async (server) => {
    const { f, run, secret } = await applyingRun(server);
    assert.ok(await unlockWorkspaceForRun(server.services, f.workspaceId, run.id));
    await expectUnchanged(server, f.workspaceId, async () => {
      const error = expectConflict(
        await createWith(server, secret, f.workspaceId, stateFile(1, "l"), 1, "l", { runId: run.id }),
        "STATE_VERSION_LOCK_REQUIRED",
        "Run does not hold the workspace lock",
      );
      assert.match(error.detail!, /not locked/);
    });
  },
);

testEachServer(
  refusals,
  "a stale fence: the lock released and taken again (by another run, by a person, by the same run) refuses the old token; a new token works",
  async (server) => {
    const f = await setUp(server);
    const a = await newRun(server, f);
    const b = await newRun(server, f);
    const { fence: first, secret: stale } = await startApply(server, a);
    const path = { workspace_id: f.workspaceId };
    const bytes = stateFile(1, "lineage-a");

    // An administrator force-unlocks; run b takes the lock.
    validWorkspaceDocument(await forceUnlockWorkspace({ client: server.tfe(f.token), path }));
    const second = await lockWorkspaceForRun(server.services, f.workspaceId, b.id);
    assert.is(second, first + 1);
    await expectUnchanged(server, f.workspaceId, async () => {
      const error = expectConflict(
        await createWith(server, stale, f.workspaceId, bytes, 1, "lineage-a", { runId: a.id }),
        "STATE_VERSION_FENCE_STALE",
        "Stale workspace lock fence",
      );
      assert.match(error.detail!, new RegExp(`fence ${first}.*fence ${second}, held by Run ${b.id}`));
    });
    // A person holds it.
    await unlockWorkspaceForRun(server.services, f.workspaceId, b.id);
    validWorkspaceDocument(await lockWorkspace({ client: server.tfe(f.token), path }));
    await expectUnchanged(server, f.workspaceId, async () => {
      expectConflict(
        await createWith(server, stale, f.workspaceId, bytes, 1, "lineage-a"),
        "STATE_VERSION_FENCE_STALE",
        "Stale workspace lock fence",
      );
    });
    // The same run re-acquires: the old token's fence is still stale.
    validWorkspaceDocument(await unlockWorkspace({ client: server.tfe(f.token), path }));
    const third = await lockWorkspaceForRun(server.services, f.workspaceId, a.id);
    await expectUnchanged(server, f.workspaceId, async () => {
      expectConflict(
        await createWith(server, stale, f.workspaceId, bytes, 1, "lineage-a", { runId: a.id }),
        "STATE_VERSION_FENCE_STALE",
        "Stale workspace lock fence",
      );
    });
    const { secret: fresh } = await mintRunToken(server.services, a, "apply", MINUTE);
    const published = await publishState(server, a, fresh, third, bytes, 1, "lineage-a");
    assert.is(published.fence, third);
  },
);

testEachServer(
  refusals,
  "confirmStatePublication refuses any mismatch, a stale fence and a version without bytes, and changes nothing",
  async (server) => {
    const f = await setUp(server);
    const run = await newRun(server, f);
    const other = await newRun(server, f);
    const { fence, secret } = await startApply(server, run);
    const bytes = stateFile(1, "lineage-a");
    const sv = await writeState(server, secret, run, bytes, 1, "lineage-a");
    const good = publication(run, sv.id, bytes, 1, "lineage-a", fence);
    const mismatches: Array<[string, StatePublication]> = [
      ["sha256", { ...good, sha256: hex("sha256", stateFile(1, "lineage-a", { x: { value: 1, type: "number" } })) }],
      ["serial", { ...good, serial: 2 }],
      ["lineage", { ...good, lineage: "lineage-b" }],
      ["run_id", { ...good, runId: other.id }],
      ["fence", { ...good, fence: fence + 1 }],
    ];
    await expectUnchanged(server, f.workspaceId, async () => {
      for (const [field, wrong] of mismatches) {
        const error = await rejection(confirmStatePublication(server.services, wrong));
        assert.ok(isDomainError(error, "STATE_PUBLICATION_MISMATCH"), `${field}: ${String(error)}`);
        assert.match((error as Error).message, new RegExp(`${field} is `));
      }
      const missing = await rejection(
        confirmStatePublication(server.services, { ...good, stateVersionId: "sv-0000000000000000" }),
      );
      assert.ok(isDomainError(missing, "NOT_FOUND"), String(missing));
    });
    assert.is((await server.services.stores.stateVersions.getById(sv.id))?.status, "pending");

    // Created but never uploaded.
    const empty = await createdWith(server, secret, f.workspaceId, run.id, stateFile(2, "lineage-a"), 2, "lineage-a");
    await expectUnchanged(server, f.workspaceId, async () => {
      const error = await rejection(
        confirmStatePublication(
          server.services,
          publication(run, empty.id, stateFile(2, "lineage-a"), 2, "lineage-a", fence),
        ),
      );
      assert.ok(isDomainError(error, "STATE_VERSION_NOT_UPLOADED"), String(error));
    });

    // The lock went away after the upload: the fence is no longer current.
    validWorkspaceDocument(
      await forceUnlockWorkspace({ client: server.tfe(f.token), path: { workspace_id: f.workspaceId } }),
    );
    await expectUnchanged(server, f.workspaceId, async () => {
      const gone = await rejection(confirmStatePublication(server.services, good));
      assert.ok(isDomainError(gone, "STATE_VERSION_LOCK_REQUIRED"), String(gone));
    });
    await lockWorkspaceForRun(server.services, f.workspaceId, other.id);
    await expectUnchanged(server, f.workspaceId, async () => {
      const stale = await rejection(confirmStatePublication(server.services, good));
      assert.ok(isDomainError(stale, "STATE_VERSION_FENCE_STALE"), String(stale));
    });
    expectTfeError(
      await getCurrentStateVersion({ client: server.tfe(f.token), path: { workspace_id: f.workspaceId } }),
      404,
      "not found",
    );
    assert.equal(
      (await listPendingStateVersions(server.services, run.id)).map((v) => v.id),
      [sv.id, empty.id],
    );
  },
);

// ---------------------------------------------------------------------------------------------
const uploads = suite("signed state uploads");

testEachServer(
  uploads,
  "refuses bytes that are not the declared state (MD5, serial, lineage, not JSON) with 422; same bytes again 204, other bytes 409",
  async (server) => {
    const { f, run, secret } = await applyingRun(server);
    const bytes = stateFile(1, "lineage-a");
    const sv = await createdWith(server, secret, f.workspaceId, run.id, bytes, 1, "lineage-a");
    const url = sv.attributes["hosted-state-upload-url"]!;
    const expect422 = async (target: string, body: Buffer, detail: RegExp) => {
      const response = await putUpload(target, body);
      const document = (await response.json()) as { errors: Array<{ status: string; code: string; detail: string }> };
      assert.is(response.status, 422);
      assert.is(document.errors[0].code, "STATE_VERSION_UPLOAD_INVALID");
      assert.match(document.errors[0].detail, detail);
    };
    // Bytes whose MD5 is the declared one but which are not that state (another serial or lineage, or no state at all).
    const notJson = Buffer.from("not a state file");
    const svNotJson = await createdWith(server, secret, f.workspaceId, run.id, notJson, 5, "lineage-a");
    const wrongSerial = stateFile(7, "lineage-a");
    const svWrongSerial = await createdWith(server, secret, f.workspaceId, run.id, wrongSerial, 6, "lineage-a");
    const wrongLineage = stateFile(8, "lineage-z");
    const svWrongLineage = await createdWith(server, secret, f.workspaceId, run.id, wrongLineage, 8, "lineage-a");
    await expectUnchanged(server, f.workspaceId, async () => {
      await expect422(url, stateFile(1, "lineage-a", { extra: { value: 1, type: "number" } }), /MD5/);
      await expect422(svNotJson.attributes["hosted-state-upload-url"]!, notJson, /not a JSON state file/);
      await expect422(svWrongSerial.attributes["hosted-state-upload-url"]!, wrongSerial, /serial 7/);
      await expect422(svWrongLineage.attributes["hosted-state-upload-url"]!, wrongLineage, /lineage "lineage-z"/);
    });

    assert.is((await putUpload(url, bytes)).status, 204);
    assert.is((await putUpload(url, bytes)).status, 204, "the same bytes again are accepted");
    const other = await putUpload(url, stateFile(1, "lineage-a", { x: { value: 1, type: "number" } }));
    assert.is(other.status, 409);
    assert.is(
      ((await other.json()) as { errors: Array<{ code: string }> }).errors[0].code,
      "STATE_VERSION_ALREADY_UPLOADED",
    );
    assert.is((await server.services.stores.stateVersions.getById(sv.id))?.sha256, hex("sha256", bytes));
  },
);

/** The time the signed upload URLs see, moved by the test below. */
const clock = { now: Date.parse("2026-12-02T12:00:00.000Z") };

testEachServer(
  uploads,
  "a tampered, expired or wrong-kind upload token is 404 and stores nothing",
  async (server) => {
    clock.now = Date.parse("2026-12-02T12:00:00.000Z");
    const { f, run, secret } = await applyingRun(server);
    const bytes = stateFile(1, "lineage-a");
    const sv = await createdWith(server, secret, f.workspaceId, run.id, bytes, 1, "lineage-a");
    const stateUrl = sv.attributes["hosted-state-upload-url"]!;
    const jsonUrl = sv.attributes["hosted-json-state-upload-url"]!;
    const stateToken = stateUrl.slice(stateUrl.lastIndexOf("/") + 1);
    const jsonToken = jsonUrl.slice(jsonUrl.lastIndexOf("/") + 1);
    const tampered = withTamperedMac(stateToken);
    assert.is((await putUpload(`${server.baseUrl}/api/v2/uploads/state-versions/${tampered}`, bytes)).status, 404);
    assert.is(
      (await putUpload(`${server.baseUrl}/api/v2/uploads/state-versions/${jsonToken}`, bytes)).status,
      404,
      "a JSON-state token does not upload state",
    );
    assert.is(
      (await putUpload(`${server.baseUrl}/api/v2/uploads/state-versions-json/${stateToken}`, bytes)).status,
      404,
    );
    clock.now += 16 * MINUTE;
    assert.is((await putUpload(stateUrl, bytes)).status, 404, "expired");
    assert.is((await putUpload(jsonUrl, bytes)).status, 404, "expired");
    assert.is((await server.services.stores.stateVersions.getById(sv.id))?.sha256, null);
  },
  { clock: () => new Date(clock.now) },
);
refusals.run();
uploads.run();
