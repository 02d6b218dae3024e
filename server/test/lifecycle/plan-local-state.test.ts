// The plan phase without the cloud backend (runner/plan-state.ts): tofu plans with the local
// backend against the run's recorded state version, handed over read-only and verified.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { discardRun } from "../../../client/src/index.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { killRunner, startSurvivorRunner } from "../support/scenarios.ts";
import { planApproveApply, readLog, startRunnerProcess, startRun, waitForStatus } from "../support/runs.ts";
import { poll, until } from "../support/poll.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import { readStateBytes } from "../../src/commands/state-versions.ts";

const planState = suite("plan phase with the local backend and read-only state");

const ONE = 'resource "terraform_data" "a" {\n  input = "one"\n}\n';
// What a plan would write into its state if it could: a move, a new output.
const MOVED =
  'resource "terraform_data" "b" {\n  input = "one"\n}\nmoved {\n  from = terraform_data.a\n  to   = terraform_data.b\n}\noutput "o" {\n  value = "new"\n}\n';
// The configuration may bring a cloud block of its own (the CLI's); the plan still uses the handed-over state.
const WITH_CLOUD =
  'terraform {\n  cloud {\n    hostname     = "app.example.invalid"\n    organization = "elsewhere"\n    workspaces {\n      name = "other"\n    }\n  }\n}\n' +
  ONE;

async function appliedWorkspace(server: TestServer) {
  const { token, organizationName } = await createOrganizationWithToken(server, "acme");
  const workspace = await createWorkspace(server, token, organizationName, { name: "stateful" });
  const run = await startRun(server, token, workspace.id, { "main.tf": ONE });
  await planApproveApply(server, token, run.id);
  const state = await server.services.stores.stateVersions.current(workspace.id);
  assert.ok(state?.sha256);
  return { token, workspace, state: state };
}

/** Every state version of the workspace with its stored bytes. */
async function storedState(server: TestServer, workspaceId: string) {
  const versions = await server.services.stores.stateVersions.listByWorkspace(workspaceId);
  return Promise.all(
    versions.map(async (v) => ({
      id: v.id,
      serial: v.serial,
      sha256: v.sha256,
      status: v.status,
      bytes: v.artifactKey ? (await readStateBytes(server.services, v)).toString("base64") : null,
    })),
  );
}

/** Waits until nobody holds the workspace lock (the runner releases it right after the run's move). */
async function lockReleased(server: TestServer, workspaceId: string): Promise<void> {
  await until(
    async () => (await server.services.stores.workspaceLocks.current(workspaceId)) === undefined,
    "the workspace lock to be released",
  );
}

/** A person's lock through the compatibility API, as `tofu` takes it. */
function cliLock(server: TestServer, token: string, workspaceId: string, action: "lock" | "unlock") {
  return fetch(`${server.baseUrl}/api/v2/workspaces/${workspaceId}/actions/${action}`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/vnd.api+json",
      Accept: "application/vnd.api+json",
    },
    body:
      action === "lock"
        ? JSON.stringify({ data: { type: "", attributes: { reason: "Locked by OpenTofu" } } })
        : undefined,
  });
}

testEachServer(
  planState,
  "a plan of a workspace with state is a no-op for unchanged resources (also with the configuration's own cloud block), bound to that state's digest",
  async (server) => {
    const { token, workspace, state } = await appliedWorkspace(server);
    for (const main of [ONE, WITH_CLOUD]) {
      const run = await startRun(server, token, workspace.id, { "main.tf": main }, "speculative");
      const planned = await waitForStatus(server, token, run.id, ["planned_and_finished", "errored"]);
      const log = await readLog(server, token, run.id, "plan");
      assert.is(planned.attributes.status, "planned_and_finished", log);
      assert.is(planned.attributes.has_changes, false, log);
      assert.equal(planned.attributes.plan_counts, { create: 0, change: 0, destroy: 0 });
      assert.match(log, "No changes.");
      assert.is(planned.attributes.predecessor_state_digest, state.sha256);
    }
  },
  { runner: true },
);

testEachServer(
  planState,
  "a plan cannot alter the stored state; the run's lock is held from the plan on (a CLI lock is refused) and released when the run ends",
  async (server) => {
    const { token, workspace, state } = await appliedWorkspace(server);
    const before = await storedState(server, workspace.id);
    const run = await startRun(server, token, workspace.id, { "main.tf": MOVED });
    // From the plan's start (status planning) the run holds the workspace lock.
    for (;;) {
      const lock = await server.services.stores.workspaceLocks.current(workspace.id);
      if (lock?.holder.kind === "run" && lock.holder.id === run.id) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const refused = await cliLock(server, token, workspace.id, "lock");
    assert.is(refused.status, 409);
    assert.match(await refused.text(), `locked by Run ${run.id}`);
    const planned = await waitForStatus(server, token, run.id, ["awaiting_approval", "errored"]);
    const log = await readLog(server, token, run.id, "plan");
    assert.is(planned.attributes.status, "awaiting_approval", log);
    assert.match(log, "terraform_data.a has moved to terraform_data.b");
    assert.is(planned.attributes.predecessor_state_digest, state.sha256);
    assert.equal(await storedState(server, workspace.id), before);
    assert.is((await cliLock(server, token, workspace.id, "lock")).status, 409);

    expectStatus(
      await discardRun({
        client: server.v1(token),
        path: { run_id: run.id },
        body: { data: { type: "decisions", attributes: { reason: "no" } } },
      }),
      202,
    );
    await lockReleased(server, workspace.id);
    assert.is((await cliLock(server, token, workspace.id, "lock")).status, 200);
    assert.is((await cliLock(server, token, workspace.id, "unlock")).status, 200);

    // A plan_and_apply plan without changes ends and releases the lock; the state is still untouched.
    const noop = await startRun(server, token, workspace.id, { "main.tf": ONE });
    assert.is(
      (await waitForStatus(server, token, noop.id, ["planned_and_finished", "errored"])).attributes.status,
      "planned_and_finished",
      await readLog(server, token, noop.id, "plan"),
    );
    await lockReleased(server, workspace.id);
    assert.equal(await storedState(server, workspace.id), before);
  },
  { runner: true },
);

testEachServer(
  planState,
  "a state version that does not match its recorded digest fails the plan closed, with the reason in the log and no sandbox",
  async (server) => {
    const { token, workspace, state } = await appliedWorkspace(server);
    await server.db
      .knex("state_versions")
      .where({ id: state.id })
      .update({ sha256: "f".repeat(64) });
    const run = await startRun(server, token, workspace.id, { "main.tf": ONE }, "speculative");
    const ended = await waitForStatus(server, token, run.id, ["planned_and_finished", "errored"]);
    const log = await readLog(server, token, run.id, "plan");
    assert.is(ended.attributes.status, "errored", log);
    assert.match(
      log,
      `StackShip could not verify the workspace's current state (state version ${state.id} could not be read intact`,
    );
    assert.match(log, "the plan did not run");
    assert.is((await server.services.stores.attempts.listByRun(run.id)).length, 0);
  },
  { runner: true },
);

testEachServer(
  planState,
  "a plan made against a state the configuration brings (its own later override) is refused, not stored",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "fresh" });
    const fake = JSON.stringify({
      version: 4,
      terraform_version: "1.12.6",
      serial: 7,
      lineage: "fake-lineage",
      outputs: {},
      resources: [],
    });
    const files = {
      "main.tf": ONE,
      "zzzzz_override.tf": 'terraform {\n  backend "local" {\n    path = "fake.tfstate"\n  }\n}\n',
      "fake.tfstate": fake,
    };
    const run = await startRun(server, token, workspace.id, files, "speculative");
    const ended = await waitForStatus(server, token, run.id, ["planned_and_finished", "errored"]);
    const log = await readLog(server, token, run.id, "plan");
    assert.is(ended.attributes.status, "errored", log);
    assert.match(log, "the plan was not made against the workspace's current state version");
    assert.is(ended.attributes.plan_digest, null);
  },
  { runner: true },
);

testEachServer(
  planState,
  "kill -9 of the runner mid-plan: another runner plans the run again under the same lock; the state is untouched",
  async (server) => {
    const runner = startRunnerProcess(server);
    let runId = "";
    let workspaceId = "";
    let before: Awaited<ReturnType<typeof storedState>> = [];
    try {
      const { token, workspace } = await appliedWorkspace(server);
      workspaceId = workspace.id;
      before = await storedState(server, workspace.id);
      // Many instances: a plan long enough to be killed in the middle.
      const many =
        'resource "terraform_data" "a" {\n  input = "one"\n}\nresource "terraform_data" "many" {\n  count = 1500\n  input = count.index\n}\n';
      const run = await startRun(server, token, workspace.id, { "main.tf": many });
      runId = run.id;
      for (;;) {
        const current = await server.services.stores.runs.getById(run.id);
        if (current?.status === "planning") break;
        assert.ok(current?.status === "pending", `the run is ${current?.status}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.is((await server.services.stores.workspaceLocks.current(workspace.id))?.holder.id, run.id);
      await killRunner(runner);
    } finally {
      if (runner.exitCode === null && runner.signalCode === null) runner.kill("SIGKILL");
    }
    const survivor = await startSurvivorRunner(server);
    try {
      // The lost plan goes back to the queue (plan_requeued) and the survivor plans it again from the start.
      // policy_checking is the short step between the survivor's plan and the review.
      const stillPlanning = new Set(["pending", "planning", "policy_checking"]);
      const run = await poll(
        "the survivor to plan the run again",
        async () => {
          const current = await server.services.stores.runs.getById(runId);
          return current && !stillPlanning.has(current.status) ? current : undefined;
        },
        120_000,
        100,
      );
      assert.is(run.status, "awaiting_approval");
      // The killed runner may have died before it recorded an attempt; any it recorded is lost.
      const statuses = (await server.services.stores.attempts.listByRun(runId))
        .filter((attempt) => attempt.phase === "plan")
        .map((attempt) => attempt.status);
      assert.is(statuses.at(-1), "succeeded");
      assert.ok(
        statuses.slice(0, -1).every((status) => status === "lost"),
        statuses.join(", "),
      );
      assert.is((await server.services.stores.workspaceLocks.current(workspaceId))?.holder.id, runId);
      assert.equal(await storedState(server, workspaceId), before);
    } finally {
      await survivor.stop({ interrupt: true });
    }
  },
);

planState.run();
