import { suite } from "uvu";
import * as assert from "uvu/assert";
import { DomainError } from "./errors.ts";
import {
  APPLY_PHASE_STATUSES,
  assertRunCreationAllowed,
  AUTO_APPLY_FORBIDDEN_DETAIL,
  DESTROY_FORBIDDEN_DETAIL,
  isRunKind,
  isRunStatus,
  isTerminalRunStatus,
  PLAN_PHASE_STATUSES,
  TERMINAL_RUN_STATUSES,
  RUN_KINDS,
  RUN_STATUSES,
} from "./run.ts";

function codeOf(fn: () => void): string | undefined {
  try {
    fn();
  } catch (error) {
    assert.instance(error, DomainError);
    return (error as DomainError).code;
  }
  return undefined;
}

const statuses = suite("run statuses");

statuses("are the closed sets the architecture names", () => {
  assert.equal([...RUN_KINDS], ["plan_and_apply", "speculative"]);
  assert.is(RUN_STATUSES.length, 14);
  assert.equal([...PLAN_PHASE_STATUSES], ["pending", "running", "finished", "errored", "canceled"]);
  assert.equal([...APPLY_PHASE_STATUSES], ["pending", "running", "finished", "errored", "canceled", "interrupted"]);
});

statuses("isTerminalRunStatus is true exactly for the finished statuses", () => {
  const terminal = RUN_STATUSES.filter(isTerminalRunStatus);
  assert.equal(terminal, [...TERMINAL_RUN_STATUSES]);
});

statuses("needs_recovery is not terminal: an operator must still resolve it", () => {
  assert.not.ok(isTerminalRunStatus("needs_recovery"));
});

statuses("isRunStatus and isRunKind accept only members", () => {
  assert.ok(isRunStatus("awaiting_approval"));
  assert.not.ok(isRunStatus("approved"));
  assert.not.ok(isRunStatus(undefined));
  assert.ok(isRunKind("speculative"));
  assert.not.ok(isRunKind("destroy"));
  assert.not.ok(isRunKind(1));
});

const creation = suite("assertRunCreationAllowed");

creation("allows absent or false flags for every kind", () => {
  for (const kind of RUN_KINDS) {
    assertRunCreationAllowed({ kind });
    assertRunCreationAllowed({ kind, autoApply: false, isDestroy: false });
    assertRunCreationAllowed({ kind, autoApply: undefined, isDestroy: undefined });
  }
});

creation("refuses every auto-apply value but undefined and false", () => {
  const values: unknown[] = [true, "true", 1, "yes", null, 0, "", "false", [], {}, Number.NaN];
  for (const autoApply of values) {
    assert.is(
      codeOf(() => assertRunCreationAllowed({ kind: "plan_and_apply", autoApply })),
      "RUN_AUTO_APPLY_FORBIDDEN",
      String(autoApply),
    );
  }
});

creation("refuses every destroy value but undefined and false", () => {
  for (const isDestroy of [true, "true", 1, null, 0, "false"]) {
    assert.is(
      codeOf(() => assertRunCreationAllowed({ kind: "plan_and_apply", isDestroy })),
      "RUN_DESTROY_FORBIDDEN",
      String(isDestroy),
    );
  }
});

creation("uses the fixed details", () => {
  try {
    assertRunCreationAllowed({ kind: "plan_and_apply", autoApply: true });
    assert.unreachable();
  } catch (error) {
    assert.is((error as DomainError).detail, AUTO_APPLY_FORBIDDEN_DETAIL);
    assert.is(
      (error as DomainError).detail,
      "StackShip never applies without an explicit human approval bound to the reviewed plan. Create the run without auto_apply, then approve it.",
    );
  }
  try {
    assertRunCreationAllowed({ kind: "plan_and_apply", isDestroy: true });
    assert.unreachable();
  } catch (error) {
    assert.is((error as DomainError).detail, DESTROY_FORBIDDEN_DETAIL);
    assert.is(
      (error as DomainError).detail,
      "Destroy-mode runs are not supported. Remove the resources from the configuration and apply an ordinary plan instead.",
    );
  }
});

creation("refuses an unknown kind with DOCUMENT_INVALID", () => {
  for (const kind of ["destroy", "PLAN_AND_APPLY", "", undefined, null, 1]) {
    assert.is(
      codeOf(() => assertRunCreationAllowed({ kind })),
      "DOCUMENT_INVALID",
      String(kind),
    );
  }
});

creation("checks auto-apply first, then destroy, then kind", () => {
  assert.is(
    codeOf(() => assertRunCreationAllowed({ kind: "bogus", autoApply: true, isDestroy: true })),
    "RUN_AUTO_APPLY_FORBIDDEN",
  );
  assert.is(
    codeOf(() => assertRunCreationAllowed({ kind: "bogus", isDestroy: true })),
    "RUN_DESTROY_FORBIDDEN",
  );
});

creation("treats a non-object input as untyped instead of crashing", () => {
  for (const input of [null, undefined, "plan_and_apply", 7]) {
    assert.is(
      codeOf(() => assertRunCreationAllowed(input as never)),
      "DOCUMENT_INVALID",
    );
  }
});

statuses.run();
creation.run();
