import { suite } from "uvu";
import * as assert from "uvu/assert";
import { approveRun, type Run } from "../../../client/src/index.ts";
import { getCurrentStateVersion } from "../../../generated/tfe/client/sdk.gen.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { readLog, startRun, waitToSettle } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const changes = suite("plan counts and applies across a workspace's life");

function config(resources: string): Record<string, string> {
  return { "main.tf": resources };
}

const data = (name: string, input: string, trigger = "1") =>
  `resource "terraform_data" "${name}" {\n  input = "${input}"\n  triggers_replace = "${trigger}"\n}\n`;

async function planAndApply(
  server: TestServer,
  token: string,
  workspaceId: string,
  files: Record<string, string>,
): Promise<{ planned: Run; applied: Run }> {
  const run = await startRun(server, token, workspaceId, files);
  const planned = await waitToSettle(server, token, run.id, "awaiting_approval");
  const approved = await approveRun({
    client: server.v1(token),
    path: { run_id: run.id },
    body: { data: { type: "approvals", attributes: { plan_digest: planned.attributes.plan_digest! } } },
  });
  expectStatus(approved, 202);
  const applied = await waitToSettle(server, token, run.id, "applied");
  return { planned, applied };
}

async function currentSerial(server: TestServer, token: string, workspaceId: string): Promise<number> {
  const current = await getCurrentStateVersion({ client: server.tfe(token), path: { workspace_id: workspaceId } });
  return current.data!.data.attributes.serial;
}

testEachServer(
  changes,
  "create, update, replace, destroy through approval; a no-change plan finishes without approval; state serial advances",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "life" });

    const created = await planAndApply(server, token, workspace.id, config(data("a", "one") + data("b", "x")));
    assert.equal(created.planned.attributes.plan_counts, { create: 2, change: 0, destroy: 0 });
    assert.is(await currentSerial(server, token, workspace.id), 1);
    assert.is(created.planned.attributes.predecessor_state_digest, null);

    const updated = await planAndApply(server, token, workspace.id, config(data("a", "two") + data("b", "x")));
    assert.equal(updated.planned.attributes.plan_counts, { create: 0, change: 1, destroy: 0 });
    assert.match(updated.planned.attributes.predecessor_state_digest ?? "", /^[0-9a-f]{64}$/);
    const serialAfterUpdate = await currentSerial(server, token, workspace.id);
    assert.ok(serialAfterUpdate > 1);

    const replaced = await planAndApply(server, token, workspace.id, config(data("a", "two", "2") + data("b", "x")));
    assert.equal(
      replaced.planned.attributes.plan_counts,
      { create: 1, change: 0, destroy: 1 },
      "a replace counts as create and destroy",
    );

    const destroyed = await planAndApply(server, token, workspace.id, config(data("a", "two", "2")));
    assert.equal(
      destroyed.planned.attributes.plan_counts,
      { create: 0, change: 0, destroy: 1 },
      "a destroy discovered by an ordinary plan is applied through approval",
    );
    assert.match(
      await readLog(server, token, destroyed.applied.id, "apply"),
      "Resources: 0 added, 0 changed, 1 destroyed.",
    );

    const serialBefore = await currentSerial(server, token, workspace.id);
    const same = await startRun(server, token, workspace.id, config(data("a", "two", "2")));
    const finished = await waitToSettle(server, token, same.id, "planned_and_finished", { reason: "no_changes" });
    assert.is(finished.attributes.has_changes, false);
    assert.is(finished.attributes.apply_status, "pending", "no apply ever started");
    assert.is(await currentSerial(server, token, workspace.id), serialBefore, "no state was published");
  },
  { runner: true },
);

testEachServer(
  changes,
  "a speculative run finishes after its plan and can never be approved",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "spec" });
    const run = await startRun(server, token, workspace.id, config(data("a", "one")), "speculative");
    const finished = await waitToSettle(server, token, run.id, "planned_and_finished", { reason: "speculative" });
    assert.equal(finished.attributes.plan_counts, { create: 1, change: 0, destroy: 0 });
    const approval = await approveRun({
      client: server.v1(token),
      path: { run_id: run.id },
      body: { data: { type: "approvals", attributes: { plan_digest: finished.attributes.plan_digest! } } },
    });
    expectV1Error(approval, 409, "RUN_TRANSITION_INVALID");
    const current = await getCurrentStateVersion({ client: server.tfe(token), path: { workspace_id: workspace.id } });
    assert.is(current.response.status, 404, "a speculative run publishes no state");
  },
  { runner: true },
);

testEachServer(
  changes,
  "a failing plan ends errored with reason plan_failed and its error in the plan log",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "broken" });
    const run = await startRun(
      server,
      token,
      workspace.id,
      config('resource "terraform_data" "a" {\n  input = var.missing\n}\n'),
    );
    const failed = await waitToSettle(server, token, run.id, "errored", { reason: "plan_failed" });
    assert.is(failed.attributes.plan_status, "errored");
    assert.match(await readLog(server, token, run.id, "plan"), "Reference to undeclared input variable");
  },
  { runner: true },
);

changes.run();
