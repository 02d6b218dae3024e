import { suite } from "uvu";
import * as assert from "uvu/assert";
import { approveRun, getRun } from "../../../client/src/index.ts";
import { getCurrentStateVersion } from "../../../generated/tfe/client/sdk.gen.ts";
import { expectStatus } from "../support/factories.ts";
import { readLog, waitForStatus } from "../support/runs.ts";
import { plannedRun } from "../support/scenarios.ts";
import { testEachServer } from "../support/test-server.ts";

const cycle = suite("run lifecycle with real tofu");

testEachServer(
  cycle,
  "plan → awaiting_approval → approve → applied, publishing state serial 1 linked to the run",
  async (server) => {
    const { token, workspace, run, planned } = await plannedRun(server, "app");
    assert.equal(planned.attributes.plan_counts, { create: 1, change: 0, destroy: 0 });
    assert.is(planned.attributes.has_changes, true);
    assert.is(planned.attributes.plan_status, "finished");
    assert.is(planned.attributes.policy_outcome, "skipped");
    assert.match(planned.attributes.plan_digest ?? "", /^[0-9a-f]{64}$/);
    assert.match(planned.attributes.dependency_bundle_digest ?? "", /^[0-9a-f]{64}$/);
    assert.is(planned.attributes.predecessor_state_digest, null);
    assert.match(await readLog(server, token, run.id, "plan"), "Plan: 1 to add, 0 to change, 0 to destroy.");

    const approved = await approveRun({
      client: server.v1(token),
      path: { run_id: run.id },
      body: { data: { type: "approvals", attributes: { plan_digest: planned.attributes.plan_digest! } } },
    });
    assert.is(expectStatus(approved, 202).data.attributes.status, "applying");

    const applied = await waitForStatus(server, token, run.id, ["applied", "errored", "needs_recovery"]);
    assert.is(applied.attributes.status, "applied", await readLog(server, token, run.id, "apply"));
    assert.is(applied.attributes.status_reason, "applied");
    assert.is(applied.attributes.apply_status, "finished");
    assert.match(await readLog(server, token, run.id, "apply"), "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.");

    const current = await getCurrentStateVersion({ client: server.tfe(token), path: { workspace_id: workspace.id } });
    assert.is(current.response.status, 200, JSON.stringify(current.error));
    const state = (current.data as any).data;
    assert.is(state.attributes.serial, 1);
    assert.is(state.relationships.run.data.id, run.id);

    // The workspace is free again: the lock went with the run.
    const after = expectStatus(await getRun({ client: server.v1(token), path: { run_id: run.id } }), 200).data;
    assert.ok(after.attributes.finished_at);
  },
  { runner: true },
);

cycle.run();
