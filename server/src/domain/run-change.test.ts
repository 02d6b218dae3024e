import { suite } from "uvu";
import * as assert from "uvu/assert";
import { isDomainError } from "./errors.ts";
import type { ApplyPhaseStatus, PlanPhaseStatus, RunKind, RunStatus } from "./run.ts";
import { DEFAULT_APPROVAL_TTL_SECONDS, runChange, type LifecyclePatch, type LifecycleRunState, type RunEvent } from "./run-lifecycle.ts";

// runChange: the whole lifecycle patch of every transition (run-lifecycle.test.ts covers the statuses alone).
const change = suite("runChange");

const NOW = new Date("2026-12-03T12:00:00.000Z");
const T = NOW.toISOString();
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000).toISOString();

function run(
  status: RunStatus,
  planStatus: PlanPhaseStatus = "pending",
  applyStatus: ApplyPhaseStatus = "pending",
  kind: RunKind = "plan_and_apply",
  hasChanges: boolean | null = true,
): LifecycleRunState {
  return { status, kind, hasChanges, planStatus, applyStatus };
}

const cases: Array<[string, LifecycleRunState, RunEvent, LifecyclePatch, number?]> = [
  ["plan starts", run("pending"), { type: "plan_started" }, { status: "planning", planStatus: "running" }],
  [
    "no plan credential",
    run("pending"),
    { type: "plan_credentials_unavailable" },
    { status: "plan_credentials_required", statusReason: "plan_credentials_required", planStatus: "canceled", finishedAt: T },
  ],
  [
    "pending run canceled",
    run("pending"),
    { type: "cancel_requested" },
    { status: "canceled", statusReason: "canceled", planStatus: "canceled", cancelRequestedAt: T, finishedAt: T },
  ],
  ["plan finishes", run("planning", "running"), { type: "plan_finished", hasChanges: true }, { status: "policy_checking", planStatus: "finished" }],
  ["plan fails", run("planning", "running"), { type: "plan_failed" }, { status: "errored", statusReason: "plan_failed", planStatus: "errored", finishedAt: T }],
  [
    "plan stopped by a sandbox limit",
    run("planning", "running"),
    { type: "plan_failed", limit: "sandbox_cpu_limit" },
    { status: "errored", statusReason: "sandbox_cpu_limit", planStatus: "errored", finishedAt: T },
  ],
  [
    "planning run canceled",
    run("planning", "running"),
    { type: "cancel_requested" },
    { status: "canceled", statusReason: "plan_canceled", planStatus: "canceled", cancelRequestedAt: T, finishedAt: T },
  ],
  [
    "policy checking run canceled (the finished plan stays finished)",
    run("policy_checking", "finished"),
    { type: "cancel_requested" },
    { status: "canceled", statusReason: "canceled", cancelRequestedAt: T, finishedAt: T },
  ],
  [
    "policy passed with changes: waits one default TTL",
    run("policy_checking", "finished"),
    { type: "policy_evaluated", outcome: "passed" },
    { status: "awaiting_approval", policyOutcome: "passed", approvalExpiresAt: later(DEFAULT_APPROVAL_TTL_SECONDS) },
  ],
  [
    "policy skipped with changes: waits the workspace TTL",
    run("policy_checking", "finished"),
    { type: "policy_evaluated", outcome: "skipped" },
    { status: "awaiting_approval", policyOutcome: "skipped", approvalExpiresAt: later(600) },
    600,
  ],
  [
    "policy passed, no changes: finished, nothing to approve",
    run("policy_checking", "finished", "pending", "plan_and_apply", false),
    { type: "policy_evaluated", outcome: "passed" },
    { status: "planned_and_finished", statusReason: "no_changes", policyOutcome: "passed", approvalExpiresAt: null, finishedAt: T },
  ],
  [
    "speculative run: finished",
    run("policy_checking", "finished", "pending", "speculative"),
    { type: "policy_evaluated", outcome: "skipped" },
    { status: "planned_and_finished", statusReason: "speculative", policyOutcome: "skipped", approvalExpiresAt: null, finishedAt: T },
  ],
  [
    "soft failure waits for an override",
    run("policy_checking", "finished"),
    { type: "policy_evaluated", outcome: "soft_failed" },
    { status: "policy_soft_failed", policyOutcome: "soft_failed", approvalExpiresAt: later(60) },
    60,
  ],
  [
    "hard failure ends it (no approval window)",
    run("policy_checking", "finished"),
    { type: "policy_evaluated", outcome: "hard_failed" },
    { status: "errored", statusReason: "policy_hard_failed", policyOutcome: "hard_failed", finishedAt: T },
  ],
  [
    "policy error ends it",
    run("policy_checking", "finished"),
    { type: "policy_evaluated", outcome: "errored" },
    { status: "errored", statusReason: "policy_errored", policyOutcome: "errored", finishedAt: T },
  ],
  ["override with changes", run("policy_soft_failed", "finished"), { type: "policy_overridden" }, { status: "awaiting_approval" }],
  [
    "override without changes ends it",
    run("policy_soft_failed", "finished", "pending", "plan_and_apply", false),
    { type: "policy_overridden" },
    { status: "planned_and_finished", statusReason: "no_changes", finishedAt: T },
  ],
  ["soft failure discarded", run("policy_soft_failed", "finished"), { type: "discarded" }, { status: "discarded", statusReason: "discarded", finishedAt: T }],
  ["soft failure expires", run("policy_soft_failed", "finished"), { type: "approval_expired" }, { status: "expired", statusReason: "approval_expired", finishedAt: T }],
  [
    "soft failure canceled",
    run("policy_soft_failed", "finished"),
    { type: "cancel_requested" },
    { status: "canceled", statusReason: "canceled", cancelRequestedAt: T, finishedAt: T },
  ],
  ["approved", run("awaiting_approval", "finished"), { type: "approved" }, { status: "applying" }],
  ["discarded", run("awaiting_approval", "finished"), { type: "discarded" }, { status: "discarded", statusReason: "discarded", finishedAt: T }],
  ["approval expires", run("awaiting_approval", "finished"), { type: "approval_expired" }, { status: "expired", statusReason: "approval_expired", finishedAt: T }],
  [
    "awaiting run canceled",
    run("awaiting_approval", "finished"),
    { type: "cancel_requested" },
    { status: "canceled", statusReason: "canceled", cancelRequestedAt: T, finishedAt: T },
  ],
  ["apply starts", run("applying", "finished"), { type: "apply_started" }, { status: "applying", applyStatus: "running" }],
  ["cancel during apply only records the request", run("applying", "finished", "running"), { type: "apply_cancel_requested" }, { status: "applying", cancelRequestedAt: T }],
  ["apply finishes", run("applying", "finished", "running"), { type: "apply_finished" }, { status: "applied", statusReason: "applied", applyStatus: "finished", finishedAt: T }],
  [
    "apply fails, nothing published",
    run("applying", "finished", "running"),
    { type: "apply_failed" },
    { status: "errored", statusReason: "apply_failed", applyStatus: "errored", finishedAt: T },
  ],
  [
    "apply refused before it started (stale approval)",
    run("applying", "finished", "pending"),
    { type: "apply_failed" },
    { status: "errored", statusReason: "apply_failed", applyStatus: "errored", finishedAt: T },
  ],
  [
    "apply fails on a limit",
    run("applying", "finished", "running"),
    { type: "apply_failed", limit: "sandbox_disk_limit" },
    { status: "errored", statusReason: "sandbox_disk_limit", applyStatus: "errored", finishedAt: T },
  ],
  [
    "apply interrupted: recovery, not finished",
    run("applying", "finished", "running"),
    { type: "apply_uncertain", interrupted: true },
    { status: "needs_recovery", statusReason: "apply_interrupted", applyStatus: "interrupted" },
  ],
  [
    "apply uncertain: recovery, not finished",
    run("applying", "finished", "running"),
    { type: "apply_uncertain", interrupted: false },
    { status: "needs_recovery", statusReason: "apply_uncertain", applyStatus: "errored" },
  ],
  [
    "apply killed by a limit",
    run("applying", "finished", "running"),
    { type: "apply_uncertain", interrupted: true, limit: "sandbox_memory_limit" },
    { status: "needs_recovery", statusReason: "sandbox_memory_limit", applyStatus: "interrupted" },
  ],
  [
    "recovery commits the pending state",
    run("needs_recovery", "finished", "interrupted"),
    { type: "recovery_resolved", stateCommitted: true },
    { status: "applied", statusReason: "recovered", applyStatus: "finished", finishedAt: T },
  ],
  [
    "recovery keeps the current state (apply status kept)",
    run("needs_recovery", "finished", "interrupted"),
    { type: "recovery_resolved", stateCommitted: false },
    { status: "errored", statusReason: "recovered", finishedAt: T },
  ],
];

for (const [title, from, event, patch, ttl] of cases) {
  change(title, () => {
    assert.equal(runChange(from, event, { now: NOW, ...(ttl === undefined ? {} : { approvalTtlSeconds: ttl }) }), { event: event.type, patch });
  });
}

const refused: Array<[string, LifecycleRunState, RunEvent]> = [
  ["a second apply start", run("applying", "finished", "running"), { type: "apply_started" }],
  ["an apply start after the apply ended uncertain", run("needs_recovery", "finished", "interrupted"), { type: "apply_started" }],
  ["an apply start before approval", run("awaiting_approval", "finished"), { type: "apply_started" }],
  ["cancel_requested during apply (apply_cancel_requested is the event)", run("applying", "finished", "running"), { type: "cancel_requested" }],
  ["apply_cancel_requested before the apply", run("awaiting_approval", "finished"), { type: "apply_cancel_requested" }],
  ["apply_cancel_requested after it", run("applied", "finished", "finished"), { type: "apply_cancel_requested" }],
  ["approval of a soft failure without an override", run("policy_soft_failed", "finished"), { type: "approved" }],
  ["a plan finishing twice", run("policy_checking", "finished"), { type: "plan_finished", hasChanges: true }],
  ["approval expiry of an applying run", run("applying", "finished", "running"), { type: "approval_expired" }],
  ["recovery of a run that does not need it", run("applied", "finished", "finished"), { type: "recovery_resolved", stateCommitted: true }],
];

for (const [title, from, event] of refused) {
  change(`refuses ${title}`, () => {
    try {
      runChange(from, event, { now: NOW });
      assert.unreachable("expected RUN_TRANSITION_INVALID");
    } catch (error) {
      assert.ok(isDomainError(error, "RUN_TRANSITION_INVALID"), String(error));
    }
  });
}

change("every terminal status reached sets finished_at; needs_recovery and the waiting statuses do not", () => {
  for (const [, from, event, , ttl] of cases) {
    const { patch } = runChange(from, event, { now: NOW, approvalTtlSeconds: ttl });
    const terminal = ["applied", "planned_and_finished", "discarded", "canceled", "errored", "expired", "plan_credentials_required"].includes(patch.status);
    assert.is(patch.finishedAt, terminal ? T : undefined, `${from.status} + ${event.type}`);
  }
});

change.run();
