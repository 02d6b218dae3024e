import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cancelRun, getRun } from "../../../client/src/index.ts";
import { expectStatus } from "../support/responses.ts";
import { approvePlan, fixture, readLog, startRun, waitForLog, waitForStatus } from "../support/runs.ts";
import { acmeWorkspace, planningRun, shiftedClock } from "../support/scenarios.ts";
import { testEachServer } from "../support/test-server.ts";

const expiry = suite("approval expiry");

const clock = shiftedClock();

testEachServer(
  expiry,
  "an unanswered plan expires after the workspace's approval window and frees the workspace",
  async (server) => {
    clock.set(0);
    const { token, workspace } = await acmeWorkspace(server, "slowpoke", { approval_ttl_seconds: 60 });
    assert.is((workspace.attributes as { approval_ttl_seconds: number }).approval_ttl_seconds, 60);
    const first = await startRun(server, token, workspace.id, fixture("basic"));
    const second = await startRun(server, token, workspace.id, fixture("basic"));
    const waiting = await waitForStatus(server, token, first.id, ["awaiting_approval"]);
    const opened =
      new Date(waiting.attributes.approval_expires_at!).getTime() - new Date(waiting.attributes.updated_at).getTime();
    assert.ok(Math.abs(opened - 60_000) < 2_000, `the window is the workspace's 60 s (got ${opened} ms)`);

    clock.set(50_000);
    // A sweep at 50 s (the runner's own, run here so the check does not wait on its timer) expires nothing.
    assert.ok(server.runner, "the test server runs a runner");
    await server.runner.sweep();
    assert.is(
      expectStatus(await getRun({ client: server.v1(token), path: { run_id: first.id } }), 200).data.attributes.status,
      "awaiting_approval",
      "not before the window closes",
    );

    clock.set(61_000);
    const expired = await waitForStatus(server, token, first.id, ["expired"], 20_000);
    assert.is(expired.attributes.status_reason, "approval_expired");
    const review = await server.db
      .knex("run_reviews")
      .where({ run_id: first.id })
      .first<{ decision: string | null; actor_id: string | null }>();
    assert.is(review.decision, "expired");
    assert.is(review.actor_id, null);
    // The lock went with it: the queued run plans now.
    await waitForStatus(server, token, second.id, ["awaiting_approval"]);
  },
  { runner: true, clock: clock.now },
);

const cancel = suite("cancel interrupts tofu");

testEachServer(
  cancel,
  "cancel while planning interrupts tofu; the run ends canceled and frees the workspace",
  async (server) => {
    const { token, workspace, run } = await planningRun(server, "busy");
    const canceled = expectStatus(
      await cancelRun({
        client: server.v1(token),
        path: { run_id: run.id },
        body: { data: { type: "decisions", attributes: { reason: "wrong branch" } } },
      }),
      202,
    ).data;
    assert.is(canceled.attributes.status, "canceled");
    assert.is(canceled.attributes.status_reason, "plan_canceled");
    // The attempt stops: it ends interrupted, not succeeded, and no plan is recorded.
    const deadline = Date.now() + 30_000;
    let attempt: { status: string } | undefined;
    while (Date.now() < deadline) {
      attempt = await server.db
        .knex("run_attempts")
        .where({ run_id: run.id, phase: "plan" })
        .first<{ status: string } | undefined>();
      if (attempt && attempt.status !== "running") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.is(attempt?.status, "interrupted");
    const after = expectStatus(await getRun({ client: server.v1(token), path: { run_id: run.id } }), 200).data;
    assert.is(after.attributes.status, "canceled");
    assert.is(after.attributes.plan_digest, null);
    const next = await startRun(server, token, workspace.id, fixture("basic"));
    await waitForStatus(server, token, next.id, ["awaiting_approval"]);
  },
  { runner: true },
);

testEachServer(
  cancel,
  "cancel while applying interrupts tofu and the run ends as what happened, never as applied by guess",
  async (server) => {
    const { token, workspace } = await acmeWorkspace(server, "halt");
    const slow = {
      "main.tf":
        'resource "terraform_data" "slow" {\n  provisioner "local-exec" {\n    command = "echo provisioning-started; sleep 60"\n  }\n}\n',
    };
    const run = await startRun(server, token, workspace.id, slow);
    const planned = await waitForStatus(server, token, run.id, ["awaiting_approval"]);
    await approvePlan(server, token, run.id, planned.attributes.plan_digest!);
    await waitForLog(server, token, run.id, "apply", "provisioning-started");
    const asked = expectStatus(await cancelRun({ client: server.v1(token), path: { run_id: run.id } }), 202).data;
    assert.is(asked.attributes.status, "applying", "cancel during apply is an interrupt, not a status");
    const ended = await waitForStatus(server, token, run.id, ["needs_recovery", "errored", "applied"], 60_000);
    assert.is.not(ended.attributes.status, "applied");
    if (ended.attributes.status === "needs_recovery") {
      assert.ok(["apply_interrupted", "apply_uncertain"].includes(ended.attributes.status_reason ?? ""));
      assert.equal(ended.attributes.recovery?.lock?.holder_id, run.id, "the workspace stays locked for the operator");
    } else {
      assert.is(ended.attributes.status_reason, "apply_failed");
      assert.is(ended.attributes.recovery, null);
    }
    assert.match(await readLog(server, token, run.id, "apply"), /Interrupt received|interrupt/i);
  },
  { runner: true },
);

expiry.run();
cancel.run();
