import * as fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { approvalRefusal, type ApprovalFacts } from "./approval-binding.ts";
import type { Run } from "./records.ts";
import { runExecution } from "../../test/support/domain-fixtures.ts";

const binding = suite("approvalRefusal (the approval-binding rules)");

const NOW = new Date("2026-12-04T12:00:00.000Z");
const PLAN = "a".repeat(64);
const STATE = "b".repeat(64);

/** Facts under which an approval may be recorded: a run awaiting approval whose evidence all still holds. */
function approvable(): ApprovalFacts {
  const run = {
    id: "run-1",
    status: "awaiting_approval",
    execution: runExecution({
      planStatus: "finished",
      hasChanges: true,
      planDigest: PLAN,
      planJsonDigest: "c".repeat(64),
      policyOutcome: "passed",
      policyResultDigest: "d".repeat(64),
      predecessorStateDigest: STATE,
      dependencyBundleDigest: "e".repeat(64),
      approvalExpiresAt: new Date(NOW.getTime() + 60_000).toISOString(),
    }),
  } as Partial<Run> as Run;
  return {
    run,
    sentPlanDigest: PLAN,
    storedEvidenceAgrees: true,
    override: "none",
    currentStateDigest: STATE,
    now: NOW,
  };
}

/** Each rule, in the order it is checked, as a change that breaks only it, and the code it refuses with. */
const BREAKS: Array<[string, (f: ApprovalFacts) => void]> = [
  ["RUN_TRANSITION_INVALID", (f) => void (f.run.status = "planning")],
  ["RUN_PLAN_DIGEST_MISMATCH", (f) => void (f.sentPlanDigest = "f".repeat(64))],
  ["RUN_PLAN_DIGEST_MISMATCH", (f) => void (f.storedEvidenceAgrees = false)],
  ["RUN_POLICY_RESULT_CHANGED", (f) => void (f.run.execution.policyOutcome = "hard_failed")],
  ["POLICY_OVERRIDE_EXPIRED", (f) => void ((f.run.execution.policyOutcome = "soft_failed"), (f.override = "expired"))],
  ["POLICY_OVERRIDE_REQUIRED", (f) => void ((f.run.execution.policyOutcome = "soft_failed"), (f.override = "none"))],
  ["RUN_PREDECESSOR_STATE_CHANGED", (f) => void (f.currentStateDigest = null)],
  ["RUN_DEPENDENCY_BUNDLE_CHANGED", (f) => void (f.run.execution.dependencyBundleDigest = null)],
  ["RUN_TRANSITION_INVALID", (f) => void (f.run.execution.approvalExpiresAt = NOW.toISOString())],
];

binding("an approval whose evidence all holds is allowed; passed, skipped and overridden soft failures alike", () => {
  assert.is(approvalRefusal(approvable()), null);
  const skipped = approvable();
  skipped.run.execution.policyOutcome = "skipped";
  assert.is(approvalRefusal(skipped), null);
  const overridden = approvable();
  overridden.run.execution.policyOutcome = "soft_failed";
  overridden.override = "active";
  assert.is(approvalRefusal(overridden), null);
  const noWindow = approvable();
  noWindow.run.execution.approvalExpiresAt = null;
  assert.is(approvalRefusal(noWindow), null, "a run with no approval window never expires");
});

binding(
  "each rule alone refuses with its code; the window closes exactly at its instant, not a millisecond before",
  () => {
    for (const [code, breakIt] of BREAKS) {
      const facts = approvable();
      breakIt(facts);
      assert.is(approvalRefusal(facts)?.code, code, code);
    }
    const open = approvable();
    open.run.execution.approvalExpiresAt = new Date(NOW.getTime() + 1).toISOString();
    assert.is(approvalRefusal(open), null);
  },
);

binding("the sent plan digest mismatch points at the attribute the reviewer sent", () => {
  const facts = approvable();
  facts.sentPlanDigest = "0".repeat(64);
  assert.equal(approvalRefusal(facts)?.source, { pointer: "/data/attributes/plan_digest" });
});

binding("any set of broken rules refuses with the first one in order (never a later reason)", () => {
  fc.assert(
    fc.property(fc.subarray([0, 1, 2, 3, 4, 5, 6, 7, 8], { minLength: 1 }), (drawn) => {
      // The override rules (4, 5) need a soft failure, which a failed policy (3) replaces; and they exclude each other.
      const picked = drawn.filter(
        (i) => !(i === 5 && drawn.includes(4)) && !((i === 4 || i === 5) && drawn.includes(3)),
      );
      const facts = approvable();
      for (const i of picked) BREAKS[i][1](facts);
      return approvalRefusal(facts)?.code === BREAKS[Math.min(...picked)][0];
    }),
  );
});

binding.run();
