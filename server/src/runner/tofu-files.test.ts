import { suite } from "uvu";
import * as assert from "uvu/assert";
import { planDiffBinds, SANDBOX_PLAN_DIFF_BUILDER, tfvars } from "./tofu-files.ts";

const files = suite("tofu files");

files("tfvars: template sequences in a string value are escaped, so tofu reads the value literally", () => {
  assert.is(tfvars([{ key: "k", value: 'a${b}%{c}"\\', hcl: false }]), 'k = "a$${b}%%{c}\\"\\\\"\n');
  assert.is(tfvars([{ key: "h", value: '{ x = "${y}" }', hcl: true }]), 'h = { x = "${y}" }\n');
});

files(
  "the plan sandbox mounts the plan-diff builder, the four modules it imports and the redacted plan's builder beside it",
  () => {
    const binds = planDiffBinds();
    assert.equal(
      binds.map((b) => b.target),
      [
        SANDBOX_PLAN_DIFF_BUILDER,
        SANDBOX_PLAN_DIFF_BUILDER.replace("plan-diff/plan-diff.mjs", "redaction/sensitive-values.mjs"),
        SANDBOX_PLAN_DIFF_BUILDER.replace("plan-diff/plan-diff.mjs", "redaction/value-matcher.mjs"),
        SANDBOX_PLAN_DIFF_BUILDER.replace("plan-diff/plan-diff.mjs", "redaction/plain-json.mjs"),
        SANDBOX_PLAN_DIFF_BUILDER.replace("plan-diff.mjs", "redact-change.mjs"),
        // The launcher loads it from beside the plan-diff builder (issue 29).
        SANDBOX_PLAN_DIFF_BUILDER.replace("plan-diff.mjs", "redacted-plan.mjs"),
      ],
    );
  },
);

files.run();
