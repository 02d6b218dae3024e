import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  ADMIN,
  attempt,
  awaiting,
  caller,
  DIGEST,
  evaluation,
  NOW,
  POLICY_DIGEST,
  records,
  run,
  STATE_DIGEST,
  VIEWER,
} from "../../../test/support/review-records.ts";
import type { RunReview } from "../../domain/records.ts";
import { failedPhase } from "../../domain/review.ts";
import { deriveRunReview } from "./review-presenter.ts";
import { valid } from "../../../test/support/unit-review.ts";

const table = suite("terminal reasons");

table("an expired run carries the expired guidance; plan_credentials_required its own", () => {
  const expired = deriveRunReview(
    records(run("expired", { statusReason: "approval_expired", planStatus: "finished" })),
    caller(VIEWER),
    NOW,
  );
  valid(expired);
  const reason = expired.attributes.terminal_reason;
  assert.ok(reason && reason.state === "recorded");
  assert.is(reason.code, "approval_expired");
  assert.equal(reason.guidance, {
    code: "expired",
    sentence: "A new run starts from a push to the tracked branch or from the CLI.",
    target: "workspace_source_settings",
    workspace_id: "ws-0000000000000001",
  });
  const blocked = deriveRunReview(records(run("plan_credentials_required")), caller(VIEWER), NOW);
  valid(blocked);
  const blockedReason = blocked.attributes.terminal_reason;
  assert.ok(blockedReason && blockedReason.state === "recorded");
  assert.is(blockedReason.code, "plan_credentials_required");
  assert.is(blockedReason.guidance?.target, "workspace_cloud_access");
});

table("a terminal run without a recorded reason says so instead of guessing one", () => {
  const review = deriveRunReview(records(run("errored")), caller(VIEWER), NOW);
  valid(review);
  assert.equal(review.attributes.terminal_reason, { state: "not_recorded" });
  assert.is(
    deriveRunReview(records(run("planning", { planStatus: "running" })), caller(VIEWER), NOW).attributes
      .terminal_reason,
    null,
  );
});

table("the log tail keeps at most eight lines and is dropped when empty", () => {
  const r = run("errored", { planStatus: "errored", statusReason: "plan_failed" });
  const lines = Array.from({ length: 12 }, (_, i) => `line ${i}`);
  const review = deriveRunReview(records(r, { logTail: { phase: "plan", lines } }), caller(VIEWER), NOW);
  valid(review);
  const reason = review.attributes.terminal_reason;
  assert.ok(reason?.state === "recorded");
  assert.equal(reason.log_tail?.lines, lines.slice(-8));
  const empty = deriveRunReview(records(r, { logTail: { phase: "plan", lines: [] } }), caller(VIEWER), NOW).attributes
    .terminal_reason;
  assert.ok(empty?.state === "recorded");
  assert.is(empty.log_tail, null);
});

const header = suite("header");

header("commit facts that were not recorded are explicit, never invented", () => {
  const review = deriveRunReview(records(awaiting(), { attempts: [attempt("plan")] }), caller(VIEWER), NOW);
  valid(review);
  const h = review.attributes.header;
  for (const fact of [h.commit_sha, h.commit_url, h.commit_message, h.source_ref, h.commit_author])
    assert.equal(fact, { state: "not_recorded", value: null });
  assert.equal(h.working_directory, { state: "recorded", value: "infra" });
  assert.is(h.started_at, "2026-12-02T11:00:01.000Z");
  assert.is(h.finished_at, null);
});

const stages = suite("stage timeline");

stages("a running plan: no counts, not finished, later stages pending", () => {
  const review = deriveRunReview(
    records(run("planning", { planStatus: "running" }), {
      attempts: [attempt("plan", { status: "running", finishedAt: null, terminalClassification: null })],
    }),
    caller(VIEWER),
    NOW,
  );
  valid(review);
  const s = review.attributes.stages;
  assert.is(s.plan.status, "running");
  assert.equal(s.plan.summary, { state: "not_finished" });
  assert.is(s.policy.status, "pending");
  assert.is(s.approval.status, "pending");
  assert.is(s.approval.state, "not_reached");
  assert.is(s.apply.status, "pending");
  assert.equal(s.apply.state_version, { state: "not_recorded" });
});

stages('"change result not recorded" only for a finished plan without counts', () => {
  const finished = deriveRunReview(records(run("policy_checking", { planStatus: "finished" })), caller(VIEWER), NOW)
    .attributes.stages;
  assert.equal(finished.plan.summary, { state: "change_result_not_recorded" });
  assert.is(finished.policy.status, "running");
  const failed = deriveRunReview(
    records(run("errored", { planStatus: "errored", statusReason: "plan_failed" })),
    caller(VIEWER),
    NOW,
  ).attributes.stages;
  assert.equal(failed.plan.summary, { state: "not_produced" });
  assert.is(failed.plan.status, "failed");
  assert.is(failed.policy.status, "skipped");
  assert.is(failed.approval.status, "skipped");
  assert.is(failed.apply.status, "skipped");
});

stages("awaiting approval: counts, bound plan digest, destroy confirmation, waiting", () => {
  const review = deriveRunReview(
    records(awaiting(), { evaluation: evaluation(), attempts: [attempt("plan")] }),
    caller(VIEWER),
    NOW,
  );
  valid(review);
  const s = review.attributes.stages;
  assert.equal(s.plan.summary, { state: "recorded", counts: { create: 1, change: 0, destroy: 2 }, has_changes: true });
  assert.is(s.policy.status, "succeeded");
  assert.is(s.approval.status, "waiting");
  assert.is(s.approval.state, "awaiting");
  assert.is(s.approval.plan_digest, DIGEST);
  assert.is(s.approval.destroy_confirmation_required, true);
  assert.is(s.approval.started_at, "2026-12-02T11:00:06.000Z");
  assert.is(s.apply.status, "pending");
});

stages("a discard names who decided; without a display name only the actor id", () => {
  const decision: RunReview = {
    id: "review-1",
    runId: "run-0000000000000001",
    decision: "discarded",
    actorId: "user-1",
    reason: "not today",
    planDigest: DIGEST,
    planJsonDigest: null,
    planDiffDigest: null,
    policyResultDigest: POLICY_DIGEST,
    predecessorStateDigest: null,
    dependencyBundleDigest: DIGEST,
    decidedAt: "2026-12-02T11:30:00.000Z",
  };
  const r = run("discarded", {
    ...awaiting().execution,
    statusReason: "discarded",
    finishedAt: "2026-12-02T11:30:00.000Z",
  });
  const named = deriveRunReview(
    records(r, { decision, displayNames: new Map([["user-1", "Dana Reviewer"]]) }),
    caller(VIEWER),
    NOW,
  );
  valid(named);
  const a = named.attributes.stages.approval;
  assert.is(a.state, "discarded");
  assert.is(a.status, "failed");
  assert.equal(a.decided_by, { actor_id: "user-1", display_name: "Dana Reviewer" });
  assert.is(a.decided_at, "2026-12-02T11:30:00.000Z");
  assert.is(a.reason, "not today");
  assert.is(named.attributes.stages.apply.status, "skipped");
  const anonymous = deriveRunReview(records(r, { decision }), caller(VIEWER), NOW).attributes.stages.approval;
  assert.equal(anonymous.decided_by, { actor_id: "user-1", display_name: null });
});

stages("a decision status without its review record is not_recorded, not invented", () => {
  const review = deriveRunReview(
    records(run("discarded", { ...awaiting().execution, statusReason: "discarded" })),
    caller(VIEWER),
    NOW,
  );
  assert.is(review.attributes.stages.approval.state, "not_recorded");
  assert.is(review.attributes.stages.approval.decided_by, null);
});

stages("applied: the committed state version; an applied run whose version cannot be resolved is unavailable", () => {
  const r = run("applied", {
    ...awaiting().execution,
    applyStatus: "finished",
    statusReason: "applied",
    finishedAt: "2026-12-02T11:10:10.000Z",
  });
  const committed = {
    id: "sv-1",
    serial: 3,
    sha256: STATE_DIGEST,
    status: "finalized" as const,
    publishedAt: "2026-12-02T11:10:09.500Z",
    uploaded: true,
  };
  const review = deriveRunReview(
    records(r, { attempts: [attempt("plan"), attempt("apply")], stateVersions: [committed] }),
    caller(VIEWER),
    NOW,
  );
  valid(review);
  assert.equal(review.attributes.stages.apply.state_version, {
    state: "committed",
    id: "sv-1",
    serial: 3,
    published_at: "2026-12-02T11:10:09.500Z",
    digest: STATE_DIGEST,
  });
  assert.is(review.attributes.stages.apply.status, "succeeded");
  assert.is(review.attributes.stages.apply.started_at, "2026-12-02T11:10:00.000Z");
  const missing = deriveRunReview(records(r), caller(VIEWER), NOW);
  assert.equal(missing.attributes.stages.apply.state_version, { state: "unavailable" });
  const pendingOnly = deriveRunReview(
    records(
      run("needs_recovery", { ...awaiting().execution, applyStatus: "interrupted", statusReason: "apply_interrupted" }),
      {
        stateVersions: [{ ...committed, status: "pending", publishedAt: null }],
      },
    ),
    caller(VIEWER),
    NOW,
  );
  assert.equal(pendingOnly.attributes.stages.apply.state_version, { state: "not_recorded" });
});

stages("a speculative run skips approval and apply", () => {
  const r = run(
    "planned_and_finished",
    {
      planStatus: "finished",
      hasChanges: true,
      planCounts: { create: 1, change: 0, destroy: 0 },
      policyOutcome: "skipped",
      statusReason: "speculative",
    },
    { kind: "speculative" },
  );
  const s = deriveRunReview(records(r, { evaluation: evaluation("skipped") }), caller(VIEWER), NOW).attributes.stages;
  assert.is(s.policy.status, "skipped");
  assert.is(s.approval.state, "not_required");
  assert.is(s.approval.status, "skipped");
  assert.is(s.apply.status, "skipped");
});

stages(
  "a hard policy failure fails the policy stage and skips approval and apply; no override control even for an admin",
  () => {
    const r = run("errored", {
      ...awaiting().execution,
      policyOutcome: "hard_failed",
      approvalExpiresAt: null,
      statusReason: "policy_hard_failed",
      finishedAt: "2026-12-02T11:00:06.000Z",
    });
    const review = deriveRunReview(
      records(r, { evaluation: { ...evaluation(), outcome: "hard_failed" } }),
      caller(ADMIN),
      NOW,
    );
    valid(review);
    const s = review.attributes.stages;
    assert.equal(
      [s.plan.status, s.policy.status, s.approval.status, s.apply.status],
      ["succeeded", "failed", "skipped", "skipped"],
    );
    assert.is(s.approval.state, "not_reached");
    assert.is(s.policy.override_control, null);
    assert.equal(review.attributes.available_actions, []);
    const reason = review.attributes.terminal_reason;
    assert.ok(reason?.state === "recorded");
    assert.equal([reason.code, reason.log_tail, reason.guidance], ["policy_hard_failed", null, null]);
  },
);

stages("canceled before the plan started: the plan stage is skipped, not failed", () => {
  const r = run("canceled", {
    planStatus: "canceled",
    statusReason: "canceled",
    finishedAt: "2026-12-02T11:00:00.500Z",
  });
  const review = deriveRunReview(records(r), caller(VIEWER), NOW);
  valid(review);
  assert.equal(
    [review.attributes.stages.plan.status, review.attributes.stages.plan.summary.state],
    ["skipped", "not_produced"],
  );
});

stages("a recovered run that kept the current state shows the apply log tail", () => {
  const r = run("errored", { ...awaiting().execution, applyStatus: "interrupted", statusReason: "recovered" });
  assert.is(failedPhase(r), "apply");
  const review = deriveRunReview(
    records(r, { logTail: { phase: "apply", lines: ["provisioning-started"] } }),
    caller(VIEWER),
    NOW,
  );
  const reason = review.attributes.terminal_reason;
  assert.ok(reason?.state === "recorded");
  assert.equal(
    [reason.code, reason.log_tail?.phase, reason.log_tail?.lines],
    ["recovered", "apply", ["provisioning-started"]],
  );
  assert.is(review.attributes.recovery, null, "recovery evidence only while unresolved");
});

for (const s of [table, header, stages]) s.run();
