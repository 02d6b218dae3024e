import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getRun } from "../../../client/src/index.ts";
import { getCurrentStateVersion } from "../../../generated/tfe/client/sdk.gen.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { approvePlan, fixture, readLog, startRun, waitForPlanned, waitToSettle } from "../support/runs.ts";
import { testEachServer } from "../support/test-server.ts";
import { openRunChangeFeed, type RunStateNotice } from "../../src/store/index.ts";
import { until } from "../support/poll.ts";

const cycle = suite("run lifecycle with real tofu");

testEachServer(
  cycle,
  "plan → awaiting_approval → approve → applied, publishing state serial 1 linked to the run",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    // Every change of the run is announced with the lifecycle event that made it.
    const changes: RunStateNotice[] = [];
    const feed = openRunChangeFeed(server.db);
    await feed.subscribe({ notice: (n) => n.kind === "run" && changes.push(n), resync: () => undefined });
    try {
      const run = await startRun(server, token, workspace.id, fixture("basic"));

      const planned = await waitForPlanned(server, token, run.id);
      assert.equal(planned.attributes.plan_counts, { create: 1, change: 0, destroy: 0 });
      assert.is(planned.attributes.has_changes, true);
      assert.is(planned.attributes.plan_status, "finished");
      assert.is(planned.attributes.policy_outcome, "skipped");
      assert.match(planned.attributes.plan_digest ?? "", /^[0-9a-f]{64}$/);
      assert.match(planned.attributes.dependency_bundle_digest ?? "", /^[0-9a-f]{64}$/);
      assert.is(planned.attributes.predecessor_state_digest, null);
      assert.match(await readLog(server, token, run.id, "plan"), "Plan: 1 to add, 0 to change, 0 to destroy.");

      const approved = await approvePlan(server, token, run.id, planned.attributes.plan_digest!);
      assert.is(approved.attributes.status, "applying");

      const applied = await waitToSettle(server, token, run.id, "applied", { reason: "applied" });
      assert.is(applied.attributes.apply_status, "finished");
      assert.match(
        await readLog(server, token, run.id, "apply"),
        "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.",
      );

      const current = await getCurrentStateVersion({ client: server.tfe(token), path: { workspace_id: workspace.id } });
      assert.is(current.response.status, 200, JSON.stringify(current.error));
      const state = current.data!.data;
      assert.is(state.attributes.serial, 1);
      assert.is(state.relationships.run.data!.id, run.id);

      // The workspace is free again: the lock went with the run.
      const after = expectStatus(await getRun({ client: server.v1(token), path: { run_id: run.id } }), 200).data;
      assert.ok(after.attributes.finished_at);

      await until(
        () => changes.some((n) => n.runId === run.id && n.event === "apply_finished"),
        "the apply_finished notice",
      );
      const ofRun = changes.filter((n) => n.runId === run.id);
      assert.equal(
        ofRun.map((n) => n.event),
        ["plan_started", "plan_finished", "policy_evaluated", "approved", "apply_started", "apply_finished"],
      );
      const applyStarted = ofRun.find((n) => n.event === "apply_started")!;
      assert.is(applyStarted.status, "applying");
      assert.is(applyStarted.applyStatus, "running");
    } finally {
      await feed.close();
    }
  },
  { runner: true },
);

cycle.run();
