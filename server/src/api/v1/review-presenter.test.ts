import { suite } from "uvu";
import * as assert from "uvu/assert";
import * as validators from "../../../../generated/v1/validators.gen.js";
import {
  ADMIN,
  attempt,
  awaiting,
  caller,
  DIGEST,
  evaluation,
  NOW,
  OPERATOR,
  POLICY_DIGEST,
  records,
  run,
  STATE_DIGEST,
  VIEWER,
} from "../../../test/support/review-records.ts";
import type { RunReview } from "../../domain/records.ts";
import { failedPhase, type ReviewRecords } from "../../domain/review.ts";
import { deriveRunReview } from "./review-presenter.ts";

function valid(document: unknown): void {
  assert.ok(validators.RunReviewDocument({ data: document }), JSON.stringify(validators.RunReviewDocument.errors));
}

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

const policy = suite("policy stage");

policy("the override control only for policy:override_soft, with the digest and expiries", () => {
  const soft = run("policy_soft_failed", { ...awaiting().execution, policyOutcome: "soft_failed" });
  const r = records(soft, {
    evaluation: evaluation("soft_failed"),
    findings: [
      {
        title: "Needs tags",
        message: "terraform_data.x is flagged",
        address: "terraform_data.x",
        enforcementLevel: "soft_mandatory",
      },
    ],
  });
  const admin = deriveRunReview(r, caller(ADMIN), NOW).attributes.stages.policy;
  assert.is(admin.status, "waiting");
  assert.equal(admin.override_control, {
    result_digest: POLICY_DIGEST,
    href: "/v1/runs/run-0000000000000001/policy-overrides",
    default_duration_seconds: 3600,
    max_duration_seconds: 86400,
    active_override_expires_at: null,
    expires_at: "2026-12-03T11:00:06.000Z",
  });
  assert.equal(admin.findings, [
    {
      title: "Needs tags",
      message: "terraform_data.x is flagged",
      address: "terraform_data.x",
      enforcement_level: "soft_mandatory",
    },
  ]);
  const operator = deriveRunReview(r, caller(OPERATOR), NOW);
  valid(operator);
  assert.is(operator.attributes.stages.policy.override_control, null);
  assert.ok(
    !JSON.stringify(operator).includes(POLICY_DIGEST),
    "no result digest for a caller without policy:override_soft",
  );
});

policy("override records carry display names and the truncation flag", () => {
  const overridden = run("awaiting_approval", { ...awaiting().execution, policyOutcome: "soft_failed" });
  const review = deriveRunReview(
    records(overridden, {
      overrides: [
        {
          id: "po-1",
          resultDigest: POLICY_DIGEST,
          reason: "ship",
          actorId: "user-1",
          createdAt: "2026-12-02T11:50:00.000Z",
          expiresAt: "2026-12-02T12:50:00.000Z",
        },
      ],
      overridesTruncated: true,
      displayNames: new Map([["user-1", "Ola Admin"]]),
    }),
    caller(VIEWER),
    NOW,
  );
  valid(review);
  const p = review.attributes.stages.policy;
  assert.is(p.status, "succeeded");
  assert.equal(p.overrides, [
    {
      id: "po-1",
      actor_id: "user-1",
      actor_display_name: "Ola Admin",
      reason: "ship",
      created_at: "2026-12-02T11:50:00.000Z",
      expires_at: "2026-12-02T12:50:00.000Z",
    },
  ]);
  assert.is(p.overrides_truncated, true);
});

const downloads = suite("downloads");

downloads("an admin session gets all three, the sensitive ones guarded by reason and step-up", () => {
  const r = records(awaiting(), { stateVersions: [] });
  const review = deriveRunReview(r, caller(ADMIN), NOW);
  valid(review);
  assert.equal(review.attributes.downloads, {
    state: "permitted",
    items: [
      {
        kind: "redacted_plan",
        method: "GET",
        href: "/v1/runs/run-0000000000000001/downloads/redacted-plan",
        requires_reason: false,
        requires_step_up: false,
        available: true,
      },
      {
        kind: "raw_plan",
        method: "POST",
        href: "/v1/runs/run-0000000000000001/downloads/raw-plan",
        requires_reason: true,
        requires_step_up: true,
        available: true,
      },
      {
        kind: "emergency_state",
        method: "POST",
        href: "/v1/runs/run-0000000000000001/downloads/emergency-state",
        requires_reason: true,
        requires_step_up: true,
        available: false,
      },
    ],
  });
});

downloads("a plan is downloadable only when the run published it", () => {
  const downloadsOf = (artifacts: ReviewRecords["artifacts"]) => {
    const d = deriveRunReview(records(awaiting(), { artifacts }), caller(ADMIN), NOW).attributes.downloads;
    return d?.state === "permitted" && d.items.map((i) => [i.kind, i.available]);
  };
  assert.equal(downloadsOf(["plan", "plan_json"]), [
    ["redacted_plan", false],
    ["raw_plan", true],
    ["emergency_state", false],
  ]);
  assert.equal(downloadsOf(["plan", "plan_diff"]), [
    ["redacted_plan", true],
    ["raw_plan", false],
    ["emergency_state", false],
  ]);
  assert.equal(downloadsOf([]), [
    ["redacted_plan", false],
    ["raw_plan", false],
    ["emergency_state", false],
  ]);
});

downloads(
  "emergency state is available once the run uploaded a state version, pending or committed; run:recover alone gives none",
  () => {
    const r = records(run("needs_recovery", { ...awaiting().execution, applyStatus: "interrupted" }), {
      stateVersions: [
        { id: "sv-1", serial: 2, sha256: STATE_DIGEST, status: "pending", publishedAt: null, uploaded: true },
      ],
    });
    const withState = deriveRunReview(r, caller(["run:read", "state:recover"]), NOW).attributes.downloads;
    assert.equal(
      withState?.state === "permitted" && withState.items.map((i) => [i.kind, i.available, i.requires_step_up]),
      [["emergency_state", true, true]],
    );
    assert.is(deriveRunReview(r, caller(["run:read", "run:recover"]), NOW).attributes.downloads, null);
    const announcedOnly = records(r.run, {
      stateVersions: [{ id: "sv-1", serial: 2, sha256: null, status: "pending", publishedAt: null, uploaded: false }],
    });
    const none = deriveRunReview(announcedOnly, caller(["run:read", "state:recover"]), NOW).attributes.downloads;
    assert.equal(
      none?.state === "permitted" && none.items.map((i) => i.available),
      [false],
      "a version whose bytes never arrived serves nothing",
    );
  },
);

downloads(
  "a viewer gets only the redacted plan; some permission elsewhere gives one note; none at all gives nothing",
  () => {
    const r = records(awaiting());
    const viewer = deriveRunReview(r, caller(VIEWER), NOW).attributes.downloads;
    assert.equal(viewer?.state === "permitted" && viewer.items.map((i) => i.kind), ["redacted_plan"]);
    const elsewhere = deriveRunReview(r, caller(["run:read"], { somewhere: true }), NOW);
    valid(elsewhere);
    assert.equal(elsewhere.attributes.downloads, {
      state: "not_permitted",
      note: "You don't have permission to download this run's plan or state.",
    });
    assert.is(deriveRunReview(r, caller(["run:read"]), NOW).attributes.downloads, null);
  },
);

const evidence = suite("evidence");

evidence("attempts and recorded identities; everything unrecorded is explicit", () => {
  const review = deriveRunReview(
    records(awaiting(), {
      evaluation: evaluation(),
      attempts: [attempt("plan")],
      jobs: [
        {
          id: "job-1",
          runId: "run-0000000000000001",
          workspaceId: "ws-0000000000000001",
          phase: "plan",
          serial: true,
          status: "done",
          runnerId: "runner-1",
          attempts: 1,
          availableAt: "",
          heartbeatAt: null,
          createdAt: "",
          finishedAt: null,
        },
      ],
    }),
    caller(VIEWER),
    NOW,
  );
  valid(review);
  const e = review.attributes.evidence;
  assert.equal(e.jobs, [{ id: "job-1", phase: "plan" }]);
  assert.equal(e.opentofu_version, { state: "recorded", value: "1.10.7" });
  assert.equal(e.sandbox_base_profile, { state: "recorded", value: "stackship-standard/v1" });
  assert.equal(e.opa_version, { state: "recorded", value: "1.4.2" });
  for (const fact of [e.definition_sha, e.build_sha, e.runner_release, e.protocol, e.job_engine_build])
    assert.equal(fact, { state: "not_recorded", value: null });
  assert.equal(e.attempts, [
    {
      id: "attempt-plan",
      workflow_id: null,
      phase: "plan",
      attempt_number: 1,
      sandbox_id: "sbx-plan",
      sandbox_name: "run-0000000000000001-plan-1",
      region: "local",
      status: "succeeded",
      terminal_classification: "exit_zero",
      started_at: "2026-12-02T11:00:01.000Z",
      finished_at: "2026-12-02T11:00:05.000Z",
    },
  ]);
  const none = deriveRunReview(records(run("pending")), caller(VIEWER), NOW).attributes.evidence;
  assert.equal(none.sandbox_base_profile, { state: "not_recorded", value: null });
  assert.equal(none.opa_build_commit, { state: "not_recorded", value: null });
});

evidence(
  "identities each attempt recorded when it started; the latest attempt's stand; definition and protocol stay not recorded",
  () => {
    const provenance = (buildSha: string, jobId: string) => ({
      jobId,
      buildSha,
      runnerRelease: `v1-${buildSha.slice(0, 7)}`,
      sandboxProfileDigest: "d".repeat(64),
      opentofuBinaryDigest: "b".repeat(64),
      jobEngineBuild: "graphile-worker@0.17.3",
    });
    const review = deriveRunReview(
      records(awaiting(), {
        attempts: [
          attempt("plan", { provenance: provenance("1".repeat(40), "job-1") }),
          attempt("apply", { id: "attempt-apply", provenance: provenance("2".repeat(40), "job-2") }),
        ],
      }),
      caller(VIEWER),
      NOW,
    );
    valid(review);
    const e = review.attributes.evidence;
    assert.equal(e.build_sha, { state: "recorded", value: "2".repeat(40) });
    assert.equal(e.runner_release, { state: "recorded", value: "v1-2222222" });
    assert.equal(e.sandbox_profile_digest, { state: "recorded", value: "d".repeat(64) });
    assert.equal(e.opentofu_build, { state: "recorded", value: "b".repeat(64) });
    assert.equal(e.job_engine_build, { state: "recorded", value: "graphile-worker@0.17.3" });
    assert.equal(
      [e.definition_sha, e.protocol],
      [
        { state: "not_recorded", value: null },
        { state: "not_recorded", value: null },
      ],
    );
    assert.equal(
      e.attempts.map((a) => a.workflow_id),
      ["job-1", "job-2"],
    );
  },
);

evidence("artifact object keys never reach the document", () => {
  const r = run("applied", { ...awaiting().execution, applyStatus: "finished", dependencyLockFile: 'provider "x" {}' });
  const text = JSON.stringify(deriveRunReview(records(r), caller(ADMIN), NOW));
  for (const key of ["plan.tfplan", "plan.json", "plan-diff.json"])
    assert.not.ok(text.includes(`runs/run-0000000000000001/${key}`), key);
  assert.not.match(text, /provider "x"/);
});

for (const s of [table, header, stages, policy, downloads, evidence]) s.run();
