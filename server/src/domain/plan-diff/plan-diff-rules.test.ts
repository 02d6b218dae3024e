import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildPlanDiff, classifyActions, MAX_BYTES, PlanDiffInputError, type PlanDiff } from "./plan-diff.mjs";
import { isPlanDiffArtifactOf } from "./index.ts";
import {
  changeEntry,
  examples,
  only,
  plan,
  S,
  U,
  US,
  type Shown,
  type Values,
} from "../../../test/support/unit-plan-diff.ts";

const BIN = fileURLToPath(new URL("../../../bin/stackship-plan-diff.mjs", import.meta.url));

const rules = suite("plan-diff: classification, markers and fail-closed rules");

rules("classification of every action array OpenTofu emits; anything else is unknown and withheld", () => {
  assert.is(classifyActions(["create"]), "create");
  assert.is(classifyActions(["update"]), "update");
  assert.is(classifyActions(["delete"]), "delete");
  assert.is(classifyActions(["forget"]), "forget");
  assert.is(classifyActions(["delete", "create"]), "replace");
  assert.is(classifyActions(["create", "delete"]), "replace");
  assert.is(classifyActions(["forget", "create"]), "forget_replace");
  assert.is(classifyActions(["create", "update"]), "unknown");
  const r = only({ ...examples.E2, change: { ...examples.E2.change, actions: ["update", "teleport"] } });
  assert.equal(
    [r.action, r.detail_withheld, r.withheld_reason, r.before, r.after],
    ["unknown", true, "unrecognized_actions", undefined, undefined],
  );
});

rules("masks missing (Terraform 0.14, format 0.1): withheld per resource; unknown top-level keys ignored", () => {
  const entry = {
    address: "aws_s3_bucket.b",
    mode: "managed",
    type: "aws_s3_bucket",
    name: "b",
    provider_name: "aws",
    change: {
      actions: ["create"],
      before: null,
      after: { bucket: "x", acl: "secret-ish" },
      after_unknown: { id: true },
    },
  };
  const { artifact } = buildPlanDiff({
    format_version: "0.1",
    terraform_version: "0.14.0",
    resource_changes: [entry],
    applyable: true,
    complete: true,
    something_new: [1],
  });
  assert.is(artifact.resources[0].withheld_reason, "unresolvable_masks");
  assert.is(artifact.opentofu_version, "0.14.0");
});

rules("Terraform 0.15+ format 0.1/0.2 with masks is accepted; an unsupported major withholds every detail", () => {
  assert.equal(
    buildPlanDiff(plan([examples.E9], { format_version: "0.2" })).artifact.resources[0].before,
    examples.E9.change.before,
  );
  const r = buildPlanDiff(plan([examples.E9], { format_version: "2.0" })).artifact.resources[0];
  assert.equal([r.detail_withheld, r.withheld_reason, r.before], [true, "unsupported_format_version", undefined]);
});

rules("a wholly unknown after is one unknown marker (sensitive when the mask says so)", () => {
  const change = {
    actions: ["create"],
    before: null,
    after_unknown: true,
    before_sensitive: false,
    after_sensitive: false,
  };
  assert.equal(only({ ...examples.E9, deposed: undefined, change }).after, U);
  assert.equal(only({ ...examples.E9, deposed: undefined, change: { ...change, after_sensitive: true } }).after, US);
  // `after` missing without a wholly unknown mask cannot be resolved.
  assert.is(
    only({ ...examples.E9, deposed: undefined, change: { ...change, after_unknown: {} } }).withheld_reason,
    "unresolvable_masks",
  );
});

rules("an unknown mask on a known value, or a sensitive path on either side, is never shown", () => {
  const base = { address: "x.y", provider_name: "p", mode: "managed", type: "x", name: "y" };
  const conflicting = {
    ...base,
    change: {
      actions: ["update"],
      before: { a: "1" },
      after: { a: "2" },
      after_unknown: { a: true },
      before_sensitive: {},
      after_sensitive: {},
    },
  };
  assert.is(only(conflicting).withheld_reason, "unresolvable_masks");
  // Sensitive only after: the before value is redacted too.
  const becomes = {
    ...base,
    change: {
      actions: ["update"],
      before: { a: "old-secret" },
      after: { a: "new-secret" },
      after_unknown: {},
      before_sensitive: {},
      after_sensitive: { a: true },
    },
  };
  assert.equal([only(becomes).before, only(becomes).after], [{ a: S }, { a: S }]);
});

rules("object keys: `$` keys are escaped so markers are unambiguous; inherited names are ordinary keys", () => {
  const base = { address: "x.y", provider_name: "p", mode: "managed", type: "x", name: "y" };
  const value = JSON.parse(
    '{"tags":{"$stackship":"unknown","constructor":"c","toString":"t","__proto__":"p"}}',
  ) as Values;
  const r = only({
    ...base,
    change: {
      actions: ["create"],
      before: null,
      after: value,
      after_unknown: { tags: {} },
      before_sensitive: false,
      after_sensitive: { tags: {} },
    },
  });
  assert.is(
    JSON.stringify(r.after),
    '{"tags":{"$$stackship":"unknown","constructor":"c","toString":"t","__proto__":"p"}}',
  );
});

rules("integers JSON cannot carry exactly are marked, not rounded", () => {
  const base = { address: "x.y", provider_name: "p", mode: "managed", type: "x", name: "y" };
  const after = JSON.parse('{"big":12345678901234567890,"ok":42,"f":1.5}') as Values;
  const r = only({
    ...base,
    change: {
      actions: ["create"],
      before: null,
      after,
      after_unknown: {},
      before_sensitive: false,
      after_sensitive: {},
    },
  });
  assert.equal(r.after, { big: { $stackship: "imprecise_number" }, ok: 42, f: 1.5 });
});

rules("replace_paths stop at a sensitive value and non-name steps withhold", () => {
  const base = { address: "x.y", provider_name: "p", mode: "managed", type: "x", name: "y" };
  const change = {
    actions: ["delete", "create"],
    before: { m: { k: "v" } },
    after: { m: { k: "w" } },
    after_unknown: {},
    before_sensitive: { m: true },
    after_sensitive: {},
  };
  assert.equal(only({ ...base, change: { ...change, replace_paths: [["m", "secret-key-name"]] } }).replace_paths, [
    ["m"],
  ]);
  assert.is(
    only({ ...base, change: { ...change, replace_paths: [["m", { k: "v" }]] } }).withheld_reason,
    "unresolvable_masks",
  );
});

rules(
  "known secrets are redacted where the masks miss them (terraform_data's before.output); in a key or path they withhold",
  () => {
    const base = {
      address: "terraform_data.s",
      provider_name: "terraform.io/builtin/terraform",
      mode: "managed",
      type: "terraform_data",
      name: "s",
    };
    const change = {
      actions: ["update"],
      before: { input: "tok-123", output: "tok-123", id: "i" },
      after: { input: "tok-123-v2", id: "i" },
      after_unknown: { output: true },
      before_sensitive: { input: true },
      after_sensitive: { input: true },
    };
    const r = buildPlanDiff(plan([{ ...base, change }]), { knownSecrets: ["tok-123", ""] }).artifact.resources[0];
    assert.equal(
      [r.before, r.after],
      [
        { input: S, output: S, id: "i" },
        { input: S, id: "i", output: U },
      ],
    );
    // Without being told: the plan marks `input` sensitive, so its value is redacted in `output` too.
    assert.equal(buildPlanDiff(plan([{ ...base, change }])).artifact.resources[0].before, {
      input: S,
      output: S,
      id: "i",
    });
    // Masks alone (what the builder did before redaction by value) miss it.
    assert.equal(
      buildPlanDiff(plan([{ ...base, change }]), { planSensitiveValues: false }).artifact.resources[0].before,
      { input: S, output: "tok-123", id: "i" },
    );
    const keyed = {
      ...change,
      before: { tags: { "tok-123": "x" } },
      after: { tags: {} },
      after_unknown: {},
      before_sensitive: {},
      after_sensitive: {},
    };
    assert.is(
      buildPlanDiff(plan([{ ...base, change: keyed }]), { knownSecrets: ["tok-123"] }).artifact.resources[0]
        .withheld_reason,
      "unresolvable_masks",
    );
  },
);

rules("the host keeps a collected artifact only when it is this run's, in bounds and free of known secrets", () => {
  const { json } = buildPlanDiff(plan([examples.E1]), { runId: "run-0123456789abcdef" });
  const bytes = Buffer.from(json);
  assert.ok(isPlanDiffArtifactOf(bytes, "run-0123456789abcdef", ["not-in-there"]));
  assert.not.ok(isPlanDiffArtifactOf(bytes, "run-ffffffffffffffff"));
  assert.not.ok(isPlanDiffArtifactOf(bytes, "run-0123456789abcdef", ["payments-app"]));
  assert.not.ok(isPlanDiffArtifactOf(Buffer.from('{"format":"other"}'), "run-0123456789abcdef"));
  assert.not.ok(isPlanDiffArtifactOf(Buffer.from("not json"), "run-0123456789abcdef"));
  assert.not.ok(isPlanDiffArtifactOf(Buffer.alloc(0), "run-0123456789abcdef"));
  assert.not.ok(isPlanDiffArtifactOf(Buffer.concat([bytes, Buffer.alloc(MAX_BYTES, 32)]), "run-0123456789abcdef"));
});

rules("the host's check looks at what came from the plan, not at the artifact's own words", () => {
  const entry = changeEntry('x.y["tenant-a"]', "p", "x", "y", {
    actions: ["update"],
    before: { m: { "key-value": "before-value" }, s: "sv" },
    after: { m: { "key-value": "after-value" }, s: "sv" },
    after_unknown: { u: true },
    before_sensitive: { s: true },
    after_sensitive: { s: true },
  });
  const bytes = Buffer.from(buildPlanDiff(plan([entry]), { runId: "run-0123456789abcdef" }).json);
  // Member names, actions, markers: a sensitive value that happens to spell one withholds nothing.
  for (const word of [
    "sensitive",
    "unknown",
    "update",
    "resources",
    "address",
    "stackship.plan-diff/v1",
    "truncation",
    "max_bytes",
  ]) {
    assert.ok(isPlanDiffArtifactOf(bytes, "run-0123456789abcdef", [word]), word);
  }
  // Addresses, values and keys inside before/after do.
  for (const value of ["tenant-a", "before-value", "after-value", "key-value", "1.12.6"])
    assert.not.ok(isPlanDiffArtifactOf(bytes, "run-0123456789abcdef", [value]), value);
});

rules(
  "a handed-over plan (consume) gives the same artifact; values only prior_state, planned_values or the configuration mark are still redacted",
  () => {
    const entry = changeEntry("terraform_data.copy", "terraform.io/builtin/terraform", "terraform_data", "copy", {
      actions: ["update"],
      before: { input: "prior-secret-1", output: "x" },
      after: { input: "planned-secret-2", output: "default-secret-3" },
      after_unknown: {},
      before_sensitive: {},
      after_sensitive: {},
    });
    const full = () =>
      plan([structuredClone(entry)], {
        prior_state: {
          values: {
            root_module: {
              resources: [
                {
                  address: "terraform_data.copy",
                  values: { input: "prior-secret-1" },
                  sensitive_values: { input: true },
                },
              ],
            },
          },
        },
        planned_values: {
          root_module: {
            resources: [
              {
                address: "terraform_data.copy",
                values: { input: "planned-secret-2" },
                sensitive_values: { input: true },
              },
            ],
          },
        },
        configuration: { root_module: { variables: { v: { sensitive: true, default: "default-secret-3" } } } },
      });
    const kept = buildPlanDiff(full()).json;
    const handedOver = full();
    assert.is(buildPlanDiff(handedOver, { consume: true }).json, kept);
    const r = (JSON.parse(kept) as { resources: Array<{ before: Shown; after: Shown }> }).resources[0];
    assert.equal([r.before.input, r.after.input, r.after.output, r.before.output], [S, S, S, "x"]);
    // What the build no longer reads is let go of once the sensitive values are known.
    assert.equal(Object.keys(handedOver).sort(), ["errored", "format_version", "terraform_version"]);
  },
);

rules("input that is not a plan is refused with a message that does not quote it", () => {
  for (const input of [
    null,
    [],
    "plan",
    { resource_changes: [] },
    { format_version: "1.2", resource_changes: {} },
    { format_version: "1.2", resource_changes: [{ address: "a", change: { actions: "create" } }] },
  ]) {
    assert.throws(
      () => buildPlanDiff(input),
      (e: unknown) => e instanceof PlanDiffInputError,
    );
  }
  // No resource_changes at all means no changes.
  assert.equal(buildPlanDiff({ format_version: "1.2" }).artifact.resources, []);
});

rules("the bin: plan JSON in, artifact out; non-zero exit and a message on stderr for non-plans", () => {
  const ok = spawnSync(process.execPath, [BIN, "--run-id", "run-0123456789abcdef"], {
    input: JSON.stringify(plan([examples.E2])),
  });
  assert.is(ok.status, 0, ok.stderr.toString());
  const artifact = JSON.parse(ok.stdout.toString()) as PlanDiff;
  assert.is(artifact.run_id, "run-0123456789abcdef");
  assert.equal(artifact, buildPlanDiff(plan([examples.E2]), { runId: "run-0123456789abcdef" }).artifact);
  const bad = spawnSync(process.execPath, [BIN], { input: '{"password": "hunter2", oops' });
  assert.is(bad.status, 1);
  assert.is(bad.stdout.length, 0);
  assert.match(bad.stderr.toString(), "stackship-plan-diff: standard input is not JSON");
  assert.not.match(bad.stderr.toString(), "hunter2");
  const secretPlan = plan([{ ...examples.E9, deposed: undefined }]);
  const withSecret = spawnSync(process.execPath, [BIN, "--secret-env", "PD_SECRET"], {
    input: JSON.stringify(secretPlan),
    env: { ...process.env, PD_SECRET: "lt-0a1b2c3d4e5f60718" },
  });
  assert.is(withSecret.status, 0);
  assert.not.match(withSecret.stdout.toString(), "lt-0a1b2c3d4e5f60718");
  assert.not.match(withSecret.stdout.toString(), "PD_SECRET");
  const notPlan = spawnSync(process.execPath, [BIN], { input: '{"values": {}}' });
  assert.is(notPlan.status, 1);
  assert.match(notPlan.stderr.toString(), "format_version");
});

rules(
  "the bin redacts by value what the plan itself marks: a copy in terraform_data's output, a sensitive variable mirrored in an update and a delete",
  () => {
    const copy = changeEntry("terraform_data.copy", "terraform.io/builtin/terraform", "terraform_data", "copy", {
      actions: ["update"],
      before: {
        id: "i",
        input: { gen: "g1", pass: "s3cret-value", user: "u" },
        output: { gen: "g1", pass: "s3cret-value", user: "u" },
      },
      after: { id: "i", input: { gen: "g2", pass: "s3cret-value", user: "u" } },
      after_unknown: { input: {}, output: true },
      before_sensitive: { input: { pass: true }, output: {} },
      after_sensitive: { input: { pass: true }, output: {} },
    });
    // Terraform-style plans: the variable is marked only by the configuration; its value is mirrored unmasked.
    const mirrored = (address: string, actions: string[], after: unknown) => ({
      address,
      mode: "managed",
      type: "null_resource",
      name: address.split(".")[1],
      provider_name: "registry.terraform.io/hashicorp/null",
      change: {
        actions,
        before: { id: "1", triggers: { conn: "postgres://app:db-password-9@db/app", n: "3" } },
        after,
        after_unknown: after === null ? false : {},
        before_sensitive: {},
        after_sensitive: after === null ? false : {},
      },
    });
    const input = plan(
      [
        copy,
        mirrored("null_resource.upd", ["update"], { id: "1", triggers: { conn: "db-password-9", n: "4" } }),
        mirrored("null_resource.del", ["delete"], null),
      ],
      {
        format_version: "1.2",
        terraform_version: "1.9.8",
        variables: { db_password: { value: "db-password-9" } },
        configuration: { root_module: { variables: { db_password: { sensitive: true } } } },
      },
    );
    const out = spawnSync(process.execPath, [BIN], { input: JSON.stringify(input) });
    assert.is(out.status, 0, out.stderr.toString());
    const text = out.stdout.toString();
    assert.not.match(text, "s3cret-value");
    assert.not.match(text, "db-password-9");
    const [c, u, d] = (
      JSON.parse(text) as {
        resources: Array<{ action: string; before: Record<string, Shown>; after: Record<string, Shown> }>;
      }
    ).resources;
    assert.equal(c.before.output, { gen: "g1", pass: S, user: "u" });
    assert.equal(
      [u.before.triggers, u.after.triggers],
      [
        { conn: S, n: "3" },
        { conn: S, n: "4" },
      ],
    );
    assert.equal([d.action, d.before.triggers, d.after], ["delete", { conn: S, n: "3" }, null]);
  },
);

rules.run();
