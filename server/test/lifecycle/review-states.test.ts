import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cancelRun, createPolicyOverride, type RunReview } from "../../../client/src/index.ts";
import { createOrganizationWithToken, createToken, createVariable, createWorkspace } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { assertNoLeaks, review, sessionReview } from "../support/review.ts";
import {
  approvePlan,
  fixture,
  readLog,
  startRun,
  waitForPlanned,
  waitForStatus,
  waitToSettle,
} from "../support/runs.ts";
import { createUser, addMembership, signIn } from "../support/sessions.ts";
import { planningRun } from "../support/scenarios.ts";
import { FLAG_EVERY_DATA, newPolicySet, policy } from "../support/policies.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { StateVersionRow } from "../../src/store/rows.ts";

const SECRET = "hunter2-review-secret-9f1c";
const sensitiveVariable = (server: TestServer, token: string, workspaceId: string, key = "db_password") =>
  createVariable(server, token, workspaceId, { key, value: SECRET, sensitive: true });

/** Polls the review until `ready` holds (the runner records some facts a moment after the status moves). */
async function reviewWhen(
  server: TestServer,
  token: string,
  runId: string,
  ready: (review: RunReview) => boolean,
  timeoutMs = 30_000,
): Promise<RunReview> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await review(server.v1(token), runId);
    if (ready(current)) return current;
    assert.ok(Date.now() < deadline, `the review never got there: ${JSON.stringify(current.attributes.stages)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const states = suite("run review of real runs");

testEachServer(
  states,
  "plan running: attempt evidence, no counts yet; once canceled, the reason, who canceled and the interrupted attempt",
  async (server) => {
    const { token, run } = await planningRun(server, "busy");
    const running = await reviewWhen(
      server,
      token,
      run.id,
      (r) => r.attributes.evidence.attempts[0]?.sandbox_id != null,
    );
    const s = running.attributes.stages;
    assert.is(running.attributes.header.status, "planning");
    assert.is(s.plan.status, "running");
    assert.is(s.plan.phase_status, "running");
    assert.equal(s.plan.summary, { state: "not_finished" }, "no zeroed counts while the plan runs");
    assert.type(s.plan.started_at, "string");
    assert.is(s.plan.finished_at, null);
    assert.equal([s.policy.status, s.approval.status, s.apply.status], ["pending", "pending", "pending"]);
    assert.is(running.attributes.terminal_reason, null);
    assert.is(running.attributes.header.started_at, s.plan.started_at);
    const [attempt] = running.attributes.evidence.attempts;
    assert.equal(
      [attempt.phase, attempt.attempt_number, attempt.status, attempt.terminal_classification],
      ["plan", 1, "running", null],
    );
    assert.match(attempt.sandbox_id!, /^sbx-/);
    // The runner plans in a pre-started (warm) sandbox, whose name (its hostname, fixed when bwrap
    // started, before the run was known) is its id; a sandbox started for the attempt is named `<run>-plan-<n>`.
    assert.is(attempt.sandbox_name, attempt.sandbox_id);
    assert.is(attempt.region, run.attributes.execution_region);
    assert.equal(running.attributes.evidence.sandbox_base_profile.state, "recorded");
    assert.equal(running.attributes.available_actions, ["cancel"]);

    expectStatus(
      await cancelRun({
        client: server.v1(token),
        path: { run_id: run.id },
        body: { data: { type: "decisions", attributes: { reason: "wrong branch" } } },
      }),
      202,
    );
    const canceled = await reviewWhen(
      server,
      token,
      run.id,
      (r) => r.attributes.evidence.attempts[0]?.status !== "running",
    );
    const reason = canceled.attributes.terminal_reason;
    assert.ok(reason?.state === "recorded");
    assert.is(reason.code, "plan_canceled");
    assert.is(reason.sentence, "The run was canceled while it was planning.");
    assert.is(reason.log_tail, null, "no log tail for a run that did not fail");
    const a = canceled.attributes.stages.approval;
    assert.is(a.state, "canceled");
    assert.is(a.status, "skipped", "the approval stage was never reached");
    assert.is(a.reason, "wrong branch");
    assert.match(a.decided_by?.actor_id ?? "", /^pr/);
    assert.is(a.decided_by?.display_name, null, "a token has no display name: the actor id stands in");
    assert.is(canceled.attributes.stages.plan.phase_status, "canceled");
    assert.is(canceled.attributes.stages.plan.status, "failed");
    assert.is(canceled.attributes.evidence.attempts[0].status, "interrupted");
    assert.equal(canceled.attributes.available_actions, []);
  },
  { runner: true },
);

testEachServer(
  states,
  "awaiting approval, then applied: actions by role, the bound plan digest, downloads, the committed state version, approved by a named user",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    await sensitiveVariable(server, token, workspace.id);
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    const planned = await waitForPlanned(server, token, run.id);

    const viewer = await createToken(server, token, organizationName, "viewer");
    const operator = await createToken(server, token, organizationName, "operator");
    const waiting = await review(server.v1(token), run.id);
    const s = waiting.attributes.stages;
    assert.equal(s.plan.summary, {
      state: "recorded",
      counts: { create: 1, change: 0, destroy: 0 },
      has_changes: true,
    });
    assert.is(s.plan.status, "succeeded");
    assert.is(s.policy.status, "skipped", "no policy set applies");
    assert.is(s.policy.outcome, "skipped");
    assert.type(s.policy.finished_at, "string");
    assert.is(s.approval.status, "waiting");
    assert.is(s.approval.state, "awaiting");
    assert.is(s.approval.plan_digest, planned.attributes.plan_digest);
    assert.is(s.approval.approval_expires_at, planned.attributes.approval_expires_at);
    assert.is(s.approval.destroy_confirmation_required, false);
    assert.is(s.apply.status, "pending");
    assert.equal(waiting.attributes.available_actions, ["approve", "discard", "cancel"]);
    assert.equal((await review(server.v1(operator.token), run.id)).attributes.available_actions, [
      "approve",
      "discard",
      "cancel",
    ]);
    assert.equal((await review(server.v1(viewer.token), run.id)).attributes.available_actions, []);
    const downloads = waiting.attributes.downloads;
    assert.ok(downloads?.state === "permitted");
    assert.equal(
      downloads.items.map((i) => [i.kind, i.available]),
      [
        ["redacted_plan", true],
        ["raw_plan", true],
        ["emergency_state", false],
      ],
    );
    await assertNoLeaks(server, waiting, run.id, [SECRET]);

    // A signed-in operator with a display name approves through the API.
    const user = await createUser(server, { displayName: "Avery Approver" });
    await addMembership(server, organizationName, user.email, "operator");
    const session = await signIn(server, user.email, user.password);
    const approved = await session.request("POST", `/v1/runs/${run.id}/actions/approve`, {
      body: { data: { type: "approvals", attributes: { plan_digest: planned.attributes.plan_digest } } },
    });
    assert.is(approved.status, 202, await approved.text());
    const applied = await waitToSettle(server, token, run.id, "applied");

    const done = await sessionReview(session, run.id);
    const a = done.attributes.stages.approval;
    assert.is(a.state, "approved");
    assert.is(a.status, "succeeded");
    assert.equal(a.decided_by, { actor_id: user.userId, display_name: "Avery Approver" });
    assert.type(a.decided_at, "string");
    assert.is(a.plan_digest, planned.attributes.plan_digest);
    const apply = done.attributes.stages.apply;
    assert.is(apply.status, "succeeded");
    assert.is(apply.phase_status, "finished");
    const version = await server.db
      .knex("state_versions")
      .where({ run_id: run.id, status: "finalized" })
      .first<StateVersionRow | undefined>();
    assert.ok(version, "the apply committed a state version");
    assert.equal(apply.state_version, {
      state: "committed",
      id: version.id,
      serial: Number(version.serial),
      published_at: new Date(version.published_at!).toISOString(),
      digest: version.sha256,
    });
    const reason = done.attributes.terminal_reason;
    assert.ok(reason?.state === "recorded");
    assert.equal([reason.code, reason.guidance, reason.log_tail], ["applied", null, null]);
    assert.is(done.attributes.header.finished_at, applied.attributes.finished_at);
    assert.equal(
      done.attributes.evidence.attempts.map((x) => [x.phase, x.attempt_number, x.status, x.terminal_classification]),
      [
        ["plan", 1, "succeeded", "exit_zero"],
        ["apply", 1, "succeeded", "exit_zero"],
      ],
    );
    assert.equal(
      done.attributes.evidence.jobs.map((j) => j.phase),
      ["plan", "apply"],
    );
    assert.equal(done.attributes.available_actions, []);
    // An operator session may download only the redacted plan (no sensitive permission).
    assert.equal(done.attributes.downloads, {
      state: "permitted",
      items: [
        {
          kind: "redacted_plan",
          method: "GET",
          href: `/v1/runs/${run.id}/downloads/redacted-plan`,
          requires_reason: false,
          requires_step_up: false,
          available: true,
        },
      ],
    });
    const admin = await review(server.v1(token), run.id);
    assert.ok(admin.attributes.downloads?.state === "permitted");
    assert.equal(
      admin.attributes.downloads.items.find((i) => i.kind === "emergency_state")?.available,
      true,
      "the run uploaded a state version",
    );
    await assertNoLeaks(server, admin, run.id, [SECRET]);

    // Each download the review offers is exactly the guarded endpoint (method and href), and serves
    // bytes to an admin's dashboard session (freshly signed in, so stepped up); the sensitive ones
    // say so, and refuse the admin's API token.
    const adminUser = await createUser(server);
    await addMembership(server, organizationName, adminUser.email, "admin");
    const adminSession = await signIn(server, adminUser.email, adminUser.password);
    const offered = (await sessionReview(adminSession, run.id)).attributes.downloads;
    assert.ok(offered?.state === "permitted");
    assert.equal(
      offered.items.map((i) => [i.kind, i.requires_step_up]),
      [
        ["redacted_plan", false],
        ["raw_plan", true],
        ["emergency_state", true],
      ],
    );
    for (const item of offered.items) {
      const body = item.requires_reason
        ? { data: { type: "download-requests", attributes: { reason: "review test" } } }
        : undefined;
      const response = await adminSession.request(item.method, item.href, { body });
      const text = await response.text();
      assert.is(response.status, 200, `${item.kind}: ${response.status} ${text}`);
      assert.ok(text.length > 0);
      const viaToken = await fetch(`${server.baseUrl}${item.href}`, {
        method: item.method,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      assert.is(viaToken.status, item.requires_step_up ? 403 : 200, item.kind);
    }
  },
  { runner: true },
);

const FAILING = {
  "main.tf": [
    'variable "token" {\n  type = string\n}\n',
    ...["first", "second", "third"].map(
      (name) => `resource "terraform_data" "${name}" {\n  input = tonumber("${name}-\${var.token}")\n}\n`,
    ),
  ].join("\n"),
};

testEachServer(
  states,
  "plan failed: the reason sentence and exactly the last eight sanitized lines of the plan log",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "broken" });
    await sensitiveVariable(server, token, workspace.id, "token");
    const run = await startRun(server, token, workspace.id, FAILING);
    const failed = await waitForStatus(server, token, run.id, ["errored", "awaiting_approval"]);
    assert.is(failed.attributes.status_reason, "plan_failed");
    const log = await readLog(server, token, run.id, "plan");
    const logLines = log.split("\n").filter((line) => line.length > 0);
    assert.ok(logLines.length > 8, `the failing configuration writes more than eight lines (${logLines.length})`);
    assert.ok(log.includes("[sensitive value]"), "tofu printed the value and the runner redacted it");

    const data = await review(server.v1(token), run.id);
    const reason = data.attributes.terminal_reason;
    assert.ok(reason?.state === "recorded");
    assert.is(reason.code, "plan_failed");
    assert.is(reason.sentence, "The plan failed, so there is nothing to review or apply.");
    assert.ok(reason.log_tail);
    assert.is(reason.log_tail.phase, "plan");
    assert.is(reason.log_tail.caption, "The last lines of the plan log");
    assert.equal(reason.log_tail.lines, logLines.slice(-8));
    assert.ok(
      reason.log_tail.lines.some((line) => line.includes("[sensitive value]")),
      JSON.stringify(reason.log_tail.lines),
    );
    const s = data.attributes.stages;
    assert.equal([s.plan.status, s.plan.phase_status], ["failed", "errored"]);
    assert.equal(s.plan.summary, { state: "not_produced" });
    assert.equal([s.policy.status, s.approval.status, s.apply.status], ["skipped", "skipped", "skipped"]);
    assert.equal(
      data.attributes.evidence.attempts.map((x) => [x.status, x.terminal_classification]),
      [["failed", "exit_nonzero"]],
    );
    assert.ok(data.attributes.downloads?.state === "permitted");
    assert.ok(
      data.attributes.downloads.items.every((i) => i.available === false),
      "a failed plan has nothing to download",
    );
    await assertNoLeaks(server, data, run.id, [SECRET]);
  },
  { runner: true },
);

testEachServer(
  states,
  "policy soft-failed: findings as text; the override control only for policy:override_soft; after an override, approve",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "tagged" });
    await sensitiveVariable(server, token, workspace.id);
    const tagged = policy("tagged", "soft_mandatory", FLAG_EVERY_DATA("soft", "Needs tags"));
    expectStatus(
      await newPolicySet(server, token, organizationName, "tags", [tagged], { workspace_ids: [workspace.id] }),
      201,
    );
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    const failed = await waitToSettle(server, token, run.id, "policy_soft_failed", { phase: "policy" });
    const digest = failed.attributes.policy_result_digest!;

    const admin = await review(server.v1(token), run.id);
    const p = admin.attributes.stages.policy;
    assert.is(p.status, "waiting");
    assert.is(p.outcome, "soft_failed");
    assert.equal(p.findings, [
      {
        title: "Needs tags",
        message: "terraform_data.greeting is flagged",
        address: "terraform_data.greeting",
        enforcement_level: "soft_mandatory",
      },
    ]);
    assert.ok(p.override_control);
    assert.is(p.override_control.result_digest, digest);
    assert.is(p.override_control.href, `/v1/runs/${run.id}/policy-overrides`);
    assert.is(p.override_control.active_override_expires_at, null);
    assert.is(p.override_control.expires_at, failed.attributes.approval_expires_at);
    assert.equal(p.overrides, []);
    assert.is(p.overrides_truncated, false);
    assert.equal(admin.attributes.available_actions, ["discard", "cancel", "override"]);
    assert.is(admin.attributes.stages.approval.state, "awaiting");
    assert.is(admin.attributes.stages.approval.status, "pending", "approval waits for the override first");
    const evidence = admin.attributes.evidence;
    assert.is(evidence.opa_version.state, "recorded");
    await assertNoLeaks(server, admin, run.id, [SECRET]);

    const operator = await createToken(server, token, organizationName, "operator");
    const operatorReview = await review(server.v1(operator.token), run.id);
    assert.is(operatorReview.attributes.stages.policy.override_control, null);
    assert.equal(operatorReview.attributes.available_actions, ["discard", "cancel"]);
    assert.not.ok(
      JSON.stringify(operatorReview).includes(digest),
      "no override control data without policy:override_soft",
    );

    const created = expectStatus(
      await createPolicyOverride({
        client: server.v1(token),
        path: { run_id: run.id },
        body: {
          data: {
            type: "policy-overrides",
            attributes: { result_digest: digest, reason: "tags follow in the next change" },
          },
        },
      }),
      201,
    ).data;
    const overridden = await review(server.v1(token), run.id);
    const q = overridden.attributes.stages.policy;
    assert.is(q.status, "succeeded");
    assert.is(q.override_control?.active_override_expires_at, created.attributes.expires_at);
    assert.equal(
      q.overrides.map((o) => [o.id, o.reason, o.actor_display_name, o.expires_at]),
      [[created.id, "tags follow in the next change", null, created.attributes.expires_at]],
    );
    assert.equal(overridden.attributes.available_actions, ["approve", "discard", "cancel", "override"]);
    assert.is(overridden.attributes.stages.approval.status, "waiting");
    await approvePlan(server, operator.token, run.id, failed.attributes.plan_digest!);
    await waitForStatus(server, token, run.id, ["applied", "errored", "needs_recovery"]);
  },
  { runner: true },
);

states.run();
