// A runner that was only slow, not lost: its plan attempt ends on its own while another runner's
// sweep is declaring it lost. Whichever records first wins, and the other changes nothing: the
// sweep never requeues a plan whose attempt its runner ended (that runner records the outcome),
// and such a runner never records a plan whose attempt was declared lost (plan-phase.ts).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { moveRun } from "../../src/commands/run-transitions.ts";
import { RunnerEngine } from "../../src/runner/engine.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { startRun } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const test = suite("a slow runner's plan attempt and another runner's sweep");

/** A run in `planning` whose plan job and attempt belong to a runner that stopped heartbeating a minute ago. */
async function stalledPlan(server: TestServer) {
  const { token, organizationName } = await createOrganizationWithToken(server, "race");
  const workspace = await createWorkspace(server, token, organizationName, { name: "race" });
  const run = await startRun(server, token, workspace.id, { "main.tf": 'resource "terraform_data" "x" {}\n' });
  const { stores } = server.services;
  const past = new Date(Date.now() - 60_000);
  const job = await stores.jobs.claim("slow-runner", new Date());
  assert.is(job?.runId, run.id);
  // Its last heartbeat was a minute ago.
  await stores.jobs.heartbeat("slow-runner", past);
  assert.ok(await moveRun(server.services, run.id, { type: "plan_started" }, { now: past }));
  const attempt = await stores.attempts.start({
    runId: run.id,
    phase: "plan",
    runnerId: "slow-runner",
    region: "local",
    baseProfile: "plan",
    now: past,
  });
  return { run, job: job!, attempt };
}

function survivor(server: TestServer): RunnerEngine {
  return new RunnerEngine(
    {
      services: server.services,
      api: { host: "127.0.0.1", port: Number(new URL(server.baseUrl).port) },
      phaseTimeoutMs: 60_000,
    },
    { staleAfterMs: 1_000, heartbeatIntervalMs: 200, pollIntervalMs: 50 },
  );
}

testEachServer(
  test,
  "the attempt ends on its own after the sweep listed it: the run is neither requeued nor failed",
  async (server) => {
    const { run, attempt } = await stalledPlan(server);
    const { attempts } = server.services.stores;
    const listByRun = attempts.listByRun.bind(attempts);
    // The slow runner records its attempt's end right after the sweep read the attempts.
    attempts.listByRun = async (runId) => {
      const listed = await listByRun(runId);
      assert.ok(await attempts.finish(attempt.id, "succeeded", "ok", new Date()));
      return listed;
    };
    try {
      await survivor(server).sweep();
    } finally {
      attempts.listByRun = listByRun;
    }
    const after = await server.services.stores.runs.getById(run.id);
    assert.is(after?.status, "planning", "the slow runner records the plan's outcome itself");
    assert.equal(
      (await attempts.listByRun(run.id)).map((a) => a.status),
      ["succeeded"],
    );
    assert.is(
      (await server.services.stores.jobs.claim("another-runner", new Date())) ?? null,
      null,
      "no plan job was queued again",
    );
  },
);

testEachServer(
  test,
  "the sweep declares the attempt lost first: the run is planned again and the attempt can no longer succeed",
  async (server) => {
    const { run, attempt } = await stalledPlan(server);
    await survivor(server).sweep();
    const after = await server.services.stores.runs.getById(run.id);
    assert.is(after?.status, "pending");
    // What plan-phase.ts checks before it records plan_finished: the lost attempt stays lost.
    assert.not.ok(await server.services.stores.attempts.finish(attempt.id, "succeeded", "ok", new Date()));
    assert.equal(
      (await server.services.stores.attempts.listByRun(run.id)).map((a) => [a.status, a.terminalClassification]),
      [["lost", "runner_lost"]],
    );
    const next = await server.services.stores.jobs.claim("another-runner", new Date());
    assert.is(next?.runId, run.id, "the plan is queued again for any runner");
  },
);

test.run();
