import { suite } from "uvu";
import * as assert from "uvu/assert";
import { isDomainError } from "./errors.ts";
import {
  isTerminalRunStatus,
  type ApplyPhaseStatus,
  type PlanPhaseStatus,
  type RunKind,
  type RunStatus,
} from "./run.ts";
import {
  DEFAULT_APPROVAL_TTL_SECONDS,
  runChange,
  type LifecyclePatch,
  type LifecycleRunState,
  type RunEvent,
} from "./run-lifecycle.ts";

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

function policy(outcome: Extract<RunEvent, { type: "policy_evaluated" }>["outcome"]): RunEvent {
  return { type: "policy_evaluated", outcome };
}

/** The patch of a transition that ends the run: its status and reason, the extra fields, finished now. */
function ended(
  status: LifecyclePatch["status"],
  statusReason: NonNullable<LifecyclePatch["statusReason"]>,
  extra: Partial<LifecyclePatch> = {},
): LifecyclePatch {
  return { status, statusReason, ...extra, finishedAt: T };
}

// The states most transitions start from.
const planning = run("planning", "running");
const checking = run("policy_checking", "finished");
const softFailed = run("policy_soft_failed", "finished");
const awaiting = run("awaiting_approval", "finished");
const applying = run("applying", "finished", "running");

const cases: Array<[string, LifecycleRunState, RunEvent, LifecyclePatch, number?]> = [
  ["plan starts", run("pending"), { type: "plan_started" }, { status: "planning", planStatus: "running" }],
  [
    "no plan credential",
    run("pending"),
    { type: "plan_credentials_unavailable" },
    ended("plan_credentials_required", "plan_credentials_required", { planStatus: "canceled" }),
  ],
  [
    "pending run canceled",
    run("pending"),
    { type: "cancel_requested" },
    ended("canceled", "canceled", { planStatus: "canceled", cancelRequestedAt: T }),
  ],
  [
    "plan finishes",
    planning,
    { type: "plan_finished", hasChanges: true },
    { status: "policy_checking", planStatus: "finished" },
  ],
  ["plan fails", planning, { type: "plan_failed" }, ended("errored", "plan_failed", { planStatus: "errored" })],
  [
    "plan stopped by a sandbox limit",
    planning,
    { type: "plan_failed", limit: "sandbox_cpu_limit" },
    ended("errored", "sandbox_cpu_limit", { planStatus: "errored" }),
  ],
  [
    "lost plan goes back to the queue",
    planning,
    { type: "plan_requeued" },
    { status: "pending", planStatus: "pending" },
  ],
  [
    "planning run canceled",
    planning,
    { type: "cancel_requested" },
    ended("canceled", "plan_canceled", { planStatus: "canceled", cancelRequestedAt: T }),
  ],
  [
    "policy checking run canceled (the finished plan stays finished)",
    checking,
    { type: "cancel_requested" },
    ended("canceled", "canceled", { cancelRequestedAt: T }),
  ],
  [
    "policy passed with changes: waits one default TTL",
    checking,
    policy("passed"),
    { status: "awaiting_approval", policyOutcome: "passed", approvalExpiresAt: later(DEFAULT_APPROVAL_TTL_SECONDS) },
  ],
  [
    "policy skipped with changes: waits the workspace TTL",
    checking,
    policy("skipped"),
    { status: "awaiting_approval", policyOutcome: "skipped", approvalExpiresAt: later(600) },
    600,
  ],
  [
    "policy passed, no changes: finished, nothing to approve",
    run("policy_checking", "finished", "pending", "plan_and_apply", false),
    policy("passed"),
    ended("planned_and_finished", "no_changes", { policyOutcome: "passed", approvalExpiresAt: null }),
  ],
  [
    "speculative run: finished",
    run("policy_checking", "finished", "pending", "speculative"),
    policy("skipped"),
    ended("planned_and_finished", "speculative", { policyOutcome: "skipped", approvalExpiresAt: null }),
  ],
  [
    "soft failure waits for an override",
    checking,
    policy("soft_failed"),
    { status: "policy_soft_failed", policyOutcome: "soft_failed", approvalExpiresAt: later(60) },
    60,
  ],
  [
    "hard failure ends it (no approval window)",
    checking,
    policy("hard_failed"),
    ended("errored", "policy_hard_failed", { policyOutcome: "hard_failed" }),
  ],
  [
    "policy error ends it",
    checking,
    policy("errored"),
    ended("errored", "policy_errored", { policyOutcome: "errored" }),
  ],
  ["override with changes", softFailed, { type: "policy_overridden" }, { status: "awaiting_approval" }],
  [
    "override without changes ends it",
    run("policy_soft_failed", "finished", "pending", "plan_and_apply", false),
    { type: "policy_overridden" },
    ended("planned_and_finished", "no_changes"),
  ],
  ["soft failure discarded", softFailed, { type: "discarded" }, ended("discarded", "discarded")],
  ["soft failure expires", softFailed, { type: "approval_expired" }, ended("expired", "approval_expired")],
  [
    "soft failure canceled",
    softFailed,
    { type: "cancel_requested" },
    ended("canceled", "canceled", { cancelRequestedAt: T }),
  ],
  ["approved", awaiting, { type: "approved" }, { status: "applying" }],
  ["discarded", awaiting, { type: "discarded" }, ended("discarded", "discarded")],
  ["approval expires", awaiting, { type: "approval_expired" }, ended("expired", "approval_expired")],
  [
    "awaiting run canceled",
    awaiting,
    { type: "cancel_requested" },
    ended("canceled", "canceled", { cancelRequestedAt: T }),
  ],
  [
    "apply starts",
    run("applying", "finished"),
    { type: "apply_started" },
    { status: "applying", applyStatus: "running" },
  ],
  [
    "cancel during apply only records the request",
    applying,
    { type: "apply_cancel_requested" },
    { status: "applying", cancelRequestedAt: T },
  ],
  ["apply finishes", applying, { type: "apply_finished" }, ended("applied", "applied", { applyStatus: "finished" })],
  [
    "apply fails, nothing published",
    applying,
    { type: "apply_failed" },
    ended("errored", "apply_failed", { applyStatus: "errored" }),
  ],
  [
    "apply refused before it started (stale approval)",
    run("applying", "finished", "pending"),
    { type: "apply_failed" },
    ended("errored", "apply_failed", { applyStatus: "errored" }),
  ],
  [
    "apply fails on a limit",
    applying,
    { type: "apply_failed", limit: "sandbox_disk_limit" },
    ended("errored", "sandbox_disk_limit", { applyStatus: "errored" }),
  ],
  [
    "apply interrupted: recovery, not finished",
    applying,
    { type: "apply_uncertain", interrupted: true },
    { status: "needs_recovery", statusReason: "apply_interrupted", applyStatus: "interrupted" },
  ],
  [
    "apply uncertain: recovery, not finished",
    applying,
    { type: "apply_uncertain", interrupted: false },
    { status: "needs_recovery", statusReason: "apply_uncertain", applyStatus: "errored" },
  ],
  [
    "apply killed by a limit",
    applying,
    { type: "apply_uncertain", interrupted: true, limit: "sandbox_memory_limit" },
    { status: "needs_recovery", statusReason: "sandbox_memory_limit", applyStatus: "interrupted" },
  ],
  [
    "recovery commits the pending state",
    run("needs_recovery", "finished", "interrupted"),
    { type: "recovery_resolved", stateCommitted: true },
    ended("applied", "recovered", { applyStatus: "finished" }),
  ],
  [
    "recovery keeps the current state (apply status kept)",
    run("needs_recovery", "finished", "interrupted"),
    { type: "recovery_resolved", stateCommitted: false },
    ended("errored", "recovered"),
  ],
];

for (const [title, from, event, patch, ttl] of cases) {
  change(title, () => {
    assert.equal(runChange(from, event, { now: NOW, ...(ttl === undefined ? {} : { approvalTtlSeconds: ttl }) }), {
      event: event.type,
      patch,
    });
  });
}

const refused: Array<[string, LifecycleRunState, RunEvent]> = [
  ["a second apply start", run("applying", "finished", "running"), { type: "apply_started" }],
  [
    "an apply start after the apply ended uncertain",
    run("needs_recovery", "finished", "interrupted"),
    { type: "apply_started" },
  ],
  ["an apply start before approval", run("awaiting_approval", "finished"), { type: "apply_started" }],
  [
    "cancel_requested during apply (apply_cancel_requested is the event)",
    run("applying", "finished", "running"),
    { type: "cancel_requested" },
  ],
  ["apply_cancel_requested before the apply", run("awaiting_approval", "finished"), { type: "apply_cancel_requested" }],
  ["apply_cancel_requested after it", run("applied", "finished", "finished"), { type: "apply_cancel_requested" }],
  ["approval of a soft failure without an override", run("policy_soft_failed", "finished"), { type: "approved" }],
  ["a plan finishing twice", run("policy_checking", "finished"), { type: "plan_finished", hasChanges: true }],
  ["approval expiry of an applying run", run("applying", "finished", "running"), { type: "approval_expired" }],
  [
    "recovery of a run that does not need it",
    run("applied", "finished", "finished"),
    { type: "recovery_resolved", stateCommitted: true },
  ],
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
    const terminal = isTerminalRunStatus(patch.status);
    assert.is(patch.finishedAt, terminal ? T : undefined, `${from.status} + ${event.type}`);
  }
});

change.run();
