import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  ADMIN,
  awaiting,
  caller,
  evaluation,
  NOW,
  OPERATOR,
  POLICY_DIGEST,
  records,
  run,
  VIEWER,
} from "../../test/support/review-records.ts";
import {
  availableActions,
  failedPhase,
  holdsAnyDownloadPermission,
  reviewTitle,
  TERMINAL_REASON_SENTENCES,
} from "./review.ts";
import { RUN_REASONS } from "./run-lifecycle.ts";

const table = suite("terminal reasons");

table("one sentence for every lifecycle reason and for plan_credentials_required", () => {
  for (const code of [...RUN_REASONS, "plan_credentials_required" as const]) {
    const sentence = TERMINAL_REASON_SENTENCES[code];
    assert.type(sentence, "string", code);
    assert.ok(/^[A-Z].*\.$/.test(sentence), `${code}: one sentence`);
  }
});

table("the failed phase is read only for errored runs whose plan or apply failed", () => {
  assert.is(failedPhase(run("errored", { planStatus: "errored", statusReason: "plan_failed" })), "plan");
  assert.is(
    failedPhase(run("errored", { planStatus: "finished", applyStatus: "errored", statusReason: "apply_failed" })),
    "apply",
  );
  assert.is(
    failedPhase(
      run("errored", { planStatus: "finished", policyOutcome: "hard_failed", statusReason: "policy_hard_failed" }),
    ),
    null,
  );
  assert.is(failedPhase(run("needs_recovery", { planStatus: "finished", applyStatus: "interrupted" })), null);
  assert.is(failedPhase(run("applied", { planStatus: "finished", applyStatus: "finished" })), null);
});

const header = suite("header");

header("the title is the run message, generated for a trigger that recorded none", () => {
  assert.equal(reviewTitle({ message: "Add the bucket", source: "api" }, null), {
    title: "Add the bucket",
    generated: false,
  });
  assert.equal(reviewTitle({ message: "", source: "github_push" }, "0123456789abcdef0123456789abcdef01234567"), {
    title: "GitHub 0123456789abcdef0123456789abcdef01234567",
    generated: true,
  });
  assert.equal(
    reviewTitle(
      { message: "GitHub 0123456789abcdef0123456789abcdef01234567", source: "github_pull_request" },
      "0123456789abcdef0123456789abcdef01234567",
    ),
    {
      title: "GitHub 0123456789abcdef0123456789abcdef01234567",
      generated: true,
    },
  );
  assert.equal(
    reviewTitle(
      { message: "GitHub something else", source: "github_push" },
      "0123456789abcdef0123456789abcdef01234567",
    ),
    {
      title: "GitHub something else",
      generated: false,
    },
  );
  assert.equal(reviewTitle({ message: "  ", source: "cli" }, null), { title: "OpenTofu CLI run", generated: true });
});

const actions = suite("available actions");

actions("awaiting approval: approve and discard for an operator, nothing for a viewer, cancel too", () => {
  const r = records(awaiting(), { evaluation: evaluation() });
  assert.equal(availableActions(r, caller(VIEWER), NOW), []);
  assert.equal(availableActions(r, caller(OPERATOR), NOW), ["approve", "discard", "cancel"]);
  assert.equal(availableActions(r, caller(ADMIN), NOW), ["approve", "discard", "cancel"]);
});

actions("no approve once the approval window closed", () => {
  const r = records(awaiting(), { evaluation: evaluation() });
  assert.equal(availableActions(r, caller(OPERATOR), new Date("2026-12-04T00:00:00.000Z")), ["discard", "cancel"]);
});

actions("a soft failure: override only with policy:override_soft; approve only under an active override", () => {
  const soft = run("policy_soft_failed", { ...awaiting().execution, policyOutcome: "soft_failed" });
  assert.equal(availableActions(records(soft), caller(OPERATOR), NOW), ["discard", "cancel"]);
  assert.equal(availableActions(records(soft), caller(ADMIN), NOW), ["discard", "cancel", "override"]);
  const overridden = run("awaiting_approval", { ...awaiting().execution, policyOutcome: "soft_failed" });
  const active = {
    id: "po-1",
    resultDigest: POLICY_DIGEST,
    reason: "ship",
    actorId: "user-1",
    createdAt: "2026-12-02T11:50:00.000Z",
    expiresAt: "2026-12-02T12:50:00.000Z",
  };
  assert.equal(availableActions(records(overridden, { overrides: [active] }), caller(ADMIN), NOW), [
    "approve",
    "discard",
    "cancel",
    "override",
  ]);
  const lapsed = { ...active, expiresAt: "2026-12-02T11:59:59.000Z" };
  assert.equal(availableActions(records(overridden, { overrides: [lapsed] }), caller(ADMIN), NOW), [
    "discard",
    "cancel",
    "override",
  ]);
});

actions("recover only for run:recover while the run needs recovery; cancel while applying until asked", () => {
  const stuck = records(
    run("needs_recovery", { ...awaiting().execution, applyStatus: "interrupted", statusReason: "apply_interrupted" }),
  );
  assert.equal(availableActions(stuck, caller(OPERATOR), NOW), []);
  assert.equal(availableActions(stuck, caller(ADMIN), NOW), ["recover"]);
  const applying = run("applying", { ...awaiting().execution, applyStatus: "running" });
  assert.equal(availableActions(records(applying), caller(OPERATOR), NOW), ["cancel"]);
  assert.equal(
    availableActions(
      records(run("applying", { ...applying.execution, cancelRequestedAt: NOW.toISOString() })),
      caller(OPERATOR),
      NOW,
    ),
    [],
  );
  assert.equal(availableActions(records(run("applied", { statusReason: "applied" })), caller(ADMIN), NOW), []);
});

const downloads = suite("downloads");

downloads("holding a download permission anywhere counts; org:admin and site admins always", () => {
  assert.is(
    holdsAnyDownloadPermission({
      siteAdmin: false,
      grants: [{ scopeKind: "workspace", scopeId: "ws-9", permission: "artifact:read" }],
    }),
    true,
  );
  assert.is(
    holdsAnyDownloadPermission({
      siteAdmin: false,
      grants: [{ scopeKind: "organization", scopeId: "org-0000000000000001", permission: "org:admin" }],
    }),
    true,
  );
  assert.is(
    holdsAnyDownloadPermission({
      siteAdmin: false,
      grants: [{ scopeKind: "organization", scopeId: "org-0000000000000001", permission: "run:recover" }],
    }),
    false,
  );
  assert.is(holdsAnyDownloadPermission({ siteAdmin: true, grants: [] }), true);
});

for (const s of [table, header, actions, downloads]) s.run();
