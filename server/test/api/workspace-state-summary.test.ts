// GET /v1/workspaces/{id}/state-summary: published state versions (metadata only, newest first,
// at most 100 then truncated), the current one, and the workspace lock.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getWorkspaceStateSummary } from "../../../client/src/index.ts";
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import { createToken } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { seededOrganization, seedRunIn, storeState } from "../support/seeded-runs.ts";
import { testEachServer } from "../support/test-server.ts";
import type { StateVersionRow } from "../../src/store/rows.ts";

const test = suite("workspace state summary");

testEachServer(
  test,
  "published versions newest first with serial, time, digest and run; pending ones left out; 100 listed, the 101st truncates; the lock holder",
  async (server) => {
    const { org, workspace } = await seededOrganization(server);
    const viewer = await createToken(server, org.token, "acme", "viewer");
    const summary = async () => {
      const result = await getWorkspaceStateSummary({
        client: server.v1(viewer.token),
        path: { workspace_id: workspace.id },
      });
      const document = expectStatus(result, 200);
      assert.ok(
        v1Validators.WorkspaceStateSummaryDocument(document),
        JSON.stringify(v1Validators.WorkspaceStateSummaryDocument.errors),
      );
      return document.data.attributes;
    };

    const empty = await summary();
    assert.equal(empty, { current_state_version_id: null, state_versions: [], truncated: false, lock: null });

    // seedRunIn publishes serial 1 and leaves serial 2 pending.
    const { run } = await seedRunIn(server, org.token, workspace.id);
    const one = await summary();
    assert.is(one.state_versions.length, 1, "the pending upload is not state");
    const [first] = one.state_versions;
    const row = await server.db
      .knex("state_versions")
      .where({ workspace_id: workspace.id, serial: 1 })
      .first<StateVersionRow>();
    assert.equal(first, {
      id: row.id,
      serial: 1,
      run_id: run.id,
      published_at: new Date(row.published_at!).toISOString(),
      digest: row.sha256,
      size_bytes: Number(row.size_bytes),
    });
    assert.is(one.current_state_version_id, row.id);
    assert.not.ok(JSON.stringify(one).includes("lineage"), "metadata only");

    for (let serial = 3; serial <= 101; serial += 1)
      await storeState(
        server,
        workspace.id,
        run.id,
        serial,
        "finalized",
        Buffer.from(`{"version":4,"serial":${serial}}`),
      );
    const hundred = await summary();
    assert.is(hundred.state_versions.length, 100);
    assert.is(hundred.truncated, false, "exactly 100 published: nothing left out");
    assert.is(hundred.state_versions[0].serial, 101);
    assert.is(hundred.current_state_version_id, hundred.state_versions[0].id);

    await storeState(server, workspace.id, run.id, 102, "finalized", Buffer.from('{"version":4,"serial":102}'));
    const more = await summary();
    assert.is(more.state_versions.length, 100);
    assert.is(more.truncated, true, "101 published: the oldest is left out and that is said");
    assert.equal(more.state_versions.map((v) => v.serial).slice(0, 2), [102, 101]);
    assert.is(more.state_versions.at(-1)!.serial, 3);

    await server.services.stores.workspaceLocks.acquire(
      workspace.id,
      { kind: "run", id: run.id },
      "applying",
      new Date("2026-12-03T10:00:00.000Z"),
    );
    assert.equal((await summary()).lock, {
      holder_kind: "run",
      holder_id: run.id,
      reason: "applying",
      locked_at: "2026-12-03T10:00:00.000Z",
    });
  },
);

test.run();
