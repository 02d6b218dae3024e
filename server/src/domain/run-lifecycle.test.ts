import { suite } from "uvu";
import * as assert from "uvu/assert";
import { isDomainError } from "./errors.ts";
import { RUN_STATUSES, TERMINAL_RUN_STATUSES, type RunKind, type RunStatus } from "./run.ts";
import { awaitsDecision, isCancelable, transition, type LifecycleRun, type RunEvent } from "./run-lifecycle.ts";

const lifecycle = suite("transition");

function run(status: RunStatus, kind: RunKind = "plan_and_apply", hasChanges: boolean | null = null): LifecycleRun {
  return { status, kind, hasChanges };
}

function policy(outcome: Extract<RunEvent, { type: "policy_evaluated" }>["outcome"]): RunEvent {
  return { type: "policy_evaluated", outcome };
}

const cases: Array<[string, LifecycleRun, RunEvent, RunStatus, string | null]> = [
  ["pending → planning when the plan starts", run("pending"), { type: "plan_started" }, "planning", null],
  ["pending → canceled on cancel", run("pending"), { type: "cancel_requested" }, "canceled", "canceled"],
  [
    "planning → policy_checking when the plan finishes",
    run("planning"),
    { type: "plan_finished", hasChanges: true },
    "policy_checking",
    null,
  ],
  ["planning → errored plan_failed", run("planning"), { type: "plan_failed" }, "errored", "plan_failed"],
  [
    "planning → pending when the runner holding the plan was lost (planned again)",
    run("planning"),
    { type: "plan_requeued" },
    "pending",
    null,
  ],
  ["planning → canceled plan_canceled", run("planning"), { type: "cancel_requested" }, "canceled", "plan_canceled"],
  [
    "planning → errored with the sandbox limit that stopped the plan",
    run("planning"),
    { type: "plan_failed", limit: "sandbox_disk_limit" },
    "errored",
    "sandbox_disk_limit",
  ],
  [
    "policy passed with changes → awaiting_approval",
    run("policy_checking", "plan_and_apply", true),
    policy("passed"),
    "awaiting_approval",
    null,
  ],
  [
    "policy skipped with changes → awaiting_approval",
    run("policy_checking", "plan_and_apply", true),
    policy("skipped"),
    "awaiting_approval",
    null,
  ],
  [
    "policy passed, no changes → planned_and_finished no_changes",
    run("policy_checking", "plan_and_apply", false),
    policy("passed"),
    "planned_and_finished",
    "no_changes",
  ],
  [
    "speculative with changes → planned_and_finished speculative",
    run("policy_checking", "speculative", true),
    policy("passed"),
    "planned_and_finished",
    "speculative",
  ],
  [
    "policy soft failed → policy_soft_failed",
    run("policy_checking", "plan_and_apply", true),
    policy("soft_failed"),
    "policy_soft_failed",
    null,
  ],
  [
    "policy hard failed → errored policy_hard_failed",
    run("policy_checking", "plan_and_apply", true),
    policy("hard_failed"),
    "errored",
    "policy_hard_failed",
  ],
  [
    "policy errored → errored policy_errored (never a pass)",
    run("policy_checking", "plan_and_apply", false),
    policy("errored"),
    "errored",
    "policy_errored",
  ],
  ["policy_checking → canceled", run("policy_checking"), { type: "cancel_requested" }, "canceled", "canceled"],
  [
    "soft failure overridden → awaiting_approval",
    run("policy_soft_failed", "plan_and_apply", true),
    { type: "policy_overridden" },
    "awaiting_approval",
    null,
  ],
  ["soft failure discarded", run("policy_soft_failed"), { type: "discarded" }, "discarded", "discarded"],
  ["soft failure expires", run("policy_soft_failed"), { type: "approval_expired" }, "expired", "approval_expired"],
  [
    "awaiting_approval → applying on approval",
    run("awaiting_approval", "plan_and_apply", true),
    { type: "approved" },
    "applying",
    null,
  ],
  ["awaiting_approval → discarded", run("awaiting_approval"), { type: "discarded" }, "discarded", "discarded"],
  [
    "awaiting_approval → expired",
    run("awaiting_approval"),
    { type: "approval_expired" },
    "expired",
    "approval_expired",
  ],
  ["awaiting_approval → canceled", run("awaiting_approval"), { type: "cancel_requested" }, "canceled", "canceled"],
  ["applying → applied", run("applying"), { type: "apply_finished" }, "applied", "applied"],
  [
    "applying → errored apply_failed when nothing was published",
    run("applying"),
    { type: "apply_failed" },
    "errored",
    "apply_failed",
  ],
  [
    "applying → needs_recovery when interrupted",
    run("applying"),
    { type: "apply_uncertain", interrupted: true },
    "needs_recovery",
    "apply_interrupted",
  ],
  [
    "applying → needs_recovery when uncertain",
    run("applying"),
    { type: "apply_uncertain", interrupted: false },
    "needs_recovery",
    "apply_uncertain",
  ],
  [
    "applying → needs_recovery (never a guess) when a sandbox limit killed the apply",
    run("applying"),
    { type: "apply_uncertain", interrupted: true, limit: "sandbox_memory_limit" },
    "needs_recovery",
    "sandbox_memory_limit",
  ],
  [
    "applying → errored with the limit when the apply failed on it and published nothing",
    run("applying"),
    { type: "apply_failed", limit: "sandbox_file_size_limit" },
    "errored",
    "sandbox_file_size_limit",
  ],
  [
    "needs_recovery → applied recovered when the pending state is committed",
    run("needs_recovery"),
    { type: "recovery_resolved", stateCommitted: true },
    "applied",
    "recovered",
  ],
  [
    "needs_recovery → errored recovered when the current state is kept",
    run("needs_recovery"),
    { type: "recovery_resolved", stateCommitted: false },
    "errored",
    "recovered",
  ],
];

for (const [title, from, event, status, reason] of cases) {
  lifecycle(title, () => {
    assert.equal(transition(from, event), { status, reason });
  });
}

const refused: Array<[string, LifecycleRun, RunEvent]> = [
  ["a pending run cannot be approved", run("pending"), { type: "approved" }],
  ["a planning run cannot be approved", run("planning"), { type: "approved" }],
  [
    "a soft-failed run cannot be approved before an override",
    run("policy_soft_failed", "plan_and_apply", true),
    { type: "approved" },
  ],
  ["an applying run cannot be discarded", run("applying"), { type: "discarded" }],
  ["cancel during apply is an interrupt, not a status change", run("applying"), { type: "cancel_requested" }],
  ["an applied run cannot be approved again", run("applied"), { type: "approved" }],
  ["a needs_recovery run cannot be discarded", run("needs_recovery"), { type: "discarded" }],
  ["a needs_recovery run cannot be canceled", run("needs_recovery"), { type: "cancel_requested" }],
  ["a lost apply is never queued again like a plan", run("applying"), { type: "plan_requeued" }],
  ["a finished plan is not queued again", run("policy_checking", "plan_and_apply", true), { type: "plan_requeued" }],
  ["a pending run has no plan to requeue", run("pending"), { type: "plan_requeued" }],
];

for (const [title, from, event] of refused) {
  lifecycle(`refuses: ${title}`, () => {
    try {
      transition(from, event);
      assert.unreachable("expected RUN_TRANSITION_INVALID");
    } catch (error) {
      assert.ok(isDomainError(error, "RUN_TRANSITION_INVALID"), String(error));
    }
  });
}

lifecycle("no event moves a terminal run", () => {
  const events: RunEvent[] = [
    { type: "plan_started" },
    { type: "plan_finished", hasChanges: true },
    { type: "plan_failed" },
    { type: "plan_requeued" },
    { type: "policy_evaluated", outcome: "passed" },
    { type: "policy_overridden" },
    { type: "approved" },
    { type: "discarded" },
    { type: "approval_expired" },
    { type: "cancel_requested" },
    { type: "apply_started" },
    { type: "apply_finished" },
    { type: "apply_failed" },
    { type: "apply_uncertain", interrupted: true },
    { type: "recovery_resolved", stateCommitted: true },
  ];
  for (const status of TERMINAL_RUN_STATUSES) {
    for (const event of events) assert.throws(() => transition(run(status), event), `${status} took ${event.type}`);
  }
});

lifecycle("a speculative run can never reach awaiting_approval", () => {
  for (const outcome of ["passed", "skipped"] as const) {
    for (const hasChanges of [true, false]) {
      assert.is.not(
        transition(run("policy_checking", "speculative", hasChanges), { type: "policy_evaluated", outcome }).status,
        "awaiting_approval",
      );
    }
  }
});

lifecycle("awaitsDecision and isCancelable cover exactly the waiting statuses", () => {
  assert.equal(RUN_STATUSES.filter(awaitsDecision), ["policy_soft_failed", "awaiting_approval"]);
  assert.equal(RUN_STATUSES.filter(isCancelable), [
    "pending",
    "planning",
    "policy_checking",
    "policy_soft_failed",
    "awaiting_approval",
  ]);
});

lifecycle.run();
