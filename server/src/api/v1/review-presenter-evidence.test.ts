import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  ADMIN,
  attempt,
  awaiting,
  caller,
  evaluation,
  NOW,
  OPERATOR,
  POLICY_DIGEST,
  records,
  run,
  STATE_DIGEST,
  VIEWER,
} from "../../../test/support/review-records.ts";
import type { ReviewRecords } from "../../domain/review.ts";
import { deriveRunReview } from "./review-presenter.ts";
import { valid } from "../../../test/support/unit-review.ts";

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

for (const s of [policy, downloads, evidence]) s.run();
