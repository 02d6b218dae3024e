import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createToken } from "../support/factories.ts";
import { assertNoLeaks, review, sessionReview } from "../support/review.ts";
import { fixture, startRun, waitForPlanned, waitForStatus } from "../support/runs.ts";
import { addMembership, createUser, signIn } from "../support/sessions.ts";
import { acmeWorkspace, plannedRun, shiftedClock } from "../support/scenarios.ts";
import { testEachServer } from "../support/test-server.ts";

const decisions = suite("run review of decided runs");

testEachServer(
  decisions,
  "discarded by a named user: the review names who discarded, when and why",
  async (server) => {
    const { token, organizationName, run, planned } = await plannedRun(server, "app");

    const user = await createUser(server, { displayName: "Dana Reviewer" });
    await addMembership(server, organizationName, user.email, "operator");
    const session = await signIn(server, user.email, user.password);
    const before = await sessionReview(session, run.id);
    assert.equal(before.attributes.available_actions, ["approve", "discard", "cancel"]);
    const response = await session.request("POST", `/v1/runs/${run.id}/actions/discard`, {
      body: { data: { type: "decisions", attributes: { reason: "wrong region" } } },
    });
    assert.is(response.status, 202, await response.text());

    // Any run:read caller sees the decision with the name recorded for the actor.
    const viewer = await createToken(server, token, organizationName, "viewer");
    const data = await review(server.v1(viewer.token), run.id);
    const a = data.attributes.stages.approval;
    assert.is(a.state, "discarded");
    assert.is(a.status, "failed");
    assert.equal(a.decided_by, { actor_id: user.userId, display_name: "Dana Reviewer" });
    assert.is(a.reason, "wrong region");
    assert.type(a.decided_at, "string");
    assert.is(a.finished_at, a.decided_at);
    assert.is(a.plan_digest, planned.attributes.plan_digest, "the decision is bound to the plan that was reviewed");
    assert.is(data.attributes.header.status, "discarded");
    assert.is(data.attributes.header.finished_at, a.decided_at);
    const reason = data.attributes.terminal_reason;
    assert.ok(reason?.state === "recorded");
    assert.equal(
      [reason.code, reason.sentence, reason.guidance, reason.log_tail],
      ["discarded", "A reviewer discarded the plan; nothing was applied.", null, null],
    );
    assert.equal(
      [data.attributes.stages.apply.status, data.attributes.stages.apply.phase_status],
      ["skipped", "pending"],
    );
    assert.equal(data.attributes.stages.apply.state_version, { state: "not_recorded" });
    assert.equal(data.attributes.available_actions, []);
    assert.equal((await sessionReview(session, run.id)).attributes.available_actions, [], "nothing is left to decide");
    await assertNoLeaks(server, data, run.id);
  },
  { runner: true },
);

const expiry = suite("run review of an expired run");

const clock = shiftedClock();

testEachServer(
  expiry,
  "expired: the approval expired with no actor, the expired guidance, no actions left",
  async (server) => {
    clock.set(0);
    const { token, workspace } = await acmeWorkspace(server, "slowpoke", { approval_ttl_seconds: 60 });
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    const waiting = await waitForPlanned(server, token, run.id);
    const open = await review(server.v1(token), run.id);
    assert.is(open.attributes.stages.approval.approval_expires_at, waiting.attributes.approval_expires_at);
    assert.equal(open.attributes.available_actions, ["approve", "discard", "cancel"]);

    // Past the window the expiry sweep records the expiry (an actorless decision).
    clock.set(61_000);
    const expired = await waitForStatus(server, token, run.id, ["expired"], 20_000);
    assert.is(expired.attributes.status_reason, "approval_expired");
    const data = await review(server.v1(token), run.id);
    const a = data.attributes.stages.approval;
    assert.is(a.state, "expired");
    assert.is(a.status, "failed");
    assert.is(a.decided_by, null, "an expiry has no actor");
    assert.type(a.decided_at, "string");
    assert.is(a.approval_expires_at, waiting.attributes.approval_expires_at);
    const reason = data.attributes.terminal_reason;
    assert.ok(reason?.state === "recorded");
    assert.is(reason.code, "approval_expired");
    assert.is(
      reason.sentence,
      "No decision was made before the approval window closed, so the run expired without applying.",
    );
    assert.equal(reason.guidance, {
      code: "expired",
      sentence: "A new run starts from a push to the tracked branch or from the CLI.",
      target: "workspace_source_settings",
      workspace_id: workspace.id,
    });
    assert.is(reason.log_tail, null);
    assert.equal(data.attributes.available_actions, []);
    assert.is(data.attributes.stages.apply.status, "skipped");
    await assertNoLeaks(server, data, run.id);
  },
  { runner: true, clock: clock.now },
);

decisions.run();
expiry.run();
