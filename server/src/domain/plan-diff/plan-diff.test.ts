import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildPlanDiff } from "./plan-diff.mjs";
import Ajv2020 from "ajv/dist/2020.js";
import {
  examples,
  managed,
  only,
  plan,
  S,
  U,
  US,
  type Shown,
  type Values,
} from "../../../test/support/unit-plan-diff.ts";

const section6 = suite("plan-diff: the composed examples of plan-json.md §6");

section6("E1 create: after shown, unknown computed attributes marked, nothing guessed", () => {
  const r = only(examples.E1);
  const after = examples.E1.change.after;
  assert.equal(r, {
    ...managed("module.payments.aws_iam_role.app", "registry.opentofu.org/hashicorp/aws", "aws_iam_role", "app"),
    module_address: "module.payments",
    actions: ["create"],
    action: "create",
    before: null,
    after: {
      ...after,
      arn: U,
      create_date: U,
      id: U,
      inline_policy: U,
      managed_policy_arns: U,
      name_prefix: U,
      unique_id: U,
    },
  });
});

section6(
  "E2 update: DB_PASSWORD redacted on both sides, memory_size shown, unknown list element and attributes marked",
  () => {
    const r = only(examples.E2);
    const { before, after } = examples.E2.change;
    assert.is(r.action, "update");
    assert.equal(r.before, {
      ...before,
      environment: [{ variables: { DB_HOST: "db.internal.example", DB_PASSWORD: S } }],
    });
    assert.equal(r.after, {
      ...after,
      environment: [{ variables: { DB_HOST: "db.internal.example", DB_PASSWORD: S } }],
      layers: ["arn:aws:lambda:eu-west-1:111122223333:layer:common:7", U],
      last_modified: U,
      qualified_arn: U,
      version: U,
    });
    assert.is((r.before as Shown).memory_size, 256);
    assert.is((r.after as Shown).memory_size, 512);
    assert.not.match(JSON.stringify(r), "Pa55word");
  },
);

section6("E3 replace: trigger path kept, secrets redacted on both sides (unknown and sensitive after)", () => {
  const r = only(examples.E3);
  assert.is(r.action, "replace");
  assert.equal(r.actions, ["delete", "create"]);
  assert.is(r.action_reason, "replace_because_cannot_update");
  assert.equal(r.replace_paths, [["length"]]);
  assert.equal(r.before, { ...examples.E3.change.before, bcrypt_hash: S, result: S });
  assert.equal(r.after, { ...examples.E3.change.after, bcrypt_hash: US, result: US, id: U });
  assert.is((r.before as Shown).length, 24);
  assert.is((r.after as Shown).length, 32);
  const json = JSON.stringify(r);
  assert.not.match(json, "q7M");
  assert.not.match(json, "$2a$10$");
});

section6("E4 read and E5 no-op are omitted; totals differ from the plan counts", () => {
  const { artifact } = buildPlanDiff(plan([examples.E4, examples.E5, examples.E1]));
  assert.equal(
    artifact.resources.map((r) => r.address),
    ["module.payments.aws_iam_role.app"],
  );
  assert.is(artifact.truncation.changed_resources, 1);
  assert.is(artifact.truncated, false);
});

section6("E6 bare true masks: address and action only, every attribute redacted", () => {
  const r = only(examples.E6);
  assert.equal(r, {
    ...managed('terraform_data.bootstrap["blue"]', "terraform.io/builtin/terraform", "terraform_data", "bootstrap"),
    actions: ["update"],
    action: "update",
    before: S,
    after: S,
  });
});

section6("E7 nested blocks and sets: labels and locations shown; client_key and all of cidr_blocks redacted", () => {
  const r = only(examples.E7);
  const { before, after } = examples.E7.change;
  const auth = (side: Values | null) => [{ ...(side!.master_auth as Values[])[0], client_key: S }];
  assert.equal(r.before, {
    ...before,
    master_auth: auth(before),
    master_authorized_networks_config: [{ cidr_blocks: S, gcp_public_cidrs_access_enabled: false }],
  });
  assert.equal(r.after, {
    ...after,
    master_auth: auth(after),
    master_authorized_networks_config: [{ cidr_blocks: S, gcp_public_cidrs_access_enabled: false }],
  });
  assert.equal((r.after as Shown).node_locations, ["europe-west1-b", "europe-west1-c", "europe-west1-d"]);
  assert.equal((r.after as Shown).resource_labels, { env: "prod", team: "platform" });
  assert.not.match(JSON.stringify(r), "203.0.113.7");
});

section6("E8 malformed masks: address, type and actions kept, all detail withheld (memory_size not salvaged)", () => {
  const r = only(examples.E8);
  assert.equal(r, {
    ...managed("aws_lambda_function.broken", "registry.opentofu.org/hashicorp/aws", "aws_lambda_function", "broken"),
    actions: ["update"],
    action: "update",
    detail_withheld: true,
    withheld_reason: "unresolvable_masks",
  });
  assert.not.match(JSON.stringify(r), "live-key");
});

section6("E9 delete of a deposed object", () => {
  const r = only(examples.E9);
  assert.equal(r, {
    ...managed("aws_launch_template.web", "registry.opentofu.org/hashicorp/aws", "aws_launch_template", "web"),
    deposed: "4f1a9c2e",
    actions: ["delete"],
    action: "delete",
    before: examples.E9.change.before,
    after: null,
  });
});

section6("all nine together: the top level", () => {
  const { artifact, json, bytes } = buildPlanDiff(
    plan(Object.values(examples), { timestamp: "2026-12-02T10:00:00Z", variables: { pw: { value: "var-secret" } } }),
    {
      runId: "run-0123456789abcdef",
    },
  );
  assert.is(artifact.format, "stackship.plan-diff/v1");
  assert.is(artifact.run_id, "run-0123456789abcdef");
  assert.is(artifact.opentofu_version, "1.12.6");
  assert.is(artifact.plan_timestamp, "2026-12-02T10:00:00Z");
  assert.is(artifact.truncated, false);
  assert.equal(artifact.truncation, {
    max_resources: 5000,
    max_bytes: 4194304,
    changed_resources: 7,
    cut: 0,
    withheld: 0,
    dropped: 0,
  });
  assert.equal(
    artifact.resources.map((r) => r.action),
    ["create", "update", "replace", "update", "update", "update", "delete"],
  );
  assert.is(json, JSON.stringify(artifact));
  assert.is(bytes, Buffer.byteLength(json));
  assert.not.match(json, "var-secret");
});

section6("every artifact shape validates against spec/schemas/stackship.plan-diff.v1.json", () => {
  const schema = JSON.parse(
    readFileSync(new URL("../../../../spec/schemas/stackship.plan-diff.v1.json", import.meta.url), "utf8"),
  ) as object;
  const validate = new Ajv2020.default({ strict: true, allErrors: true }).compile(schema);
  const odd = { ...examples.E2, address: "x.odd", change: { ...examples.E2.change, actions: ["teleport"] } };
  const artifacts = [
    buildPlanDiff(plan([...Object.values(examples), odd]), { runId: "run-0123456789abcdef" }).artifact,
    buildPlanDiff(plan(Object.values(examples)), { maxBytes: 2_000 }).artifact,
    buildPlanDiff(plan(Object.values(examples)), { maxResources: 2, maxBytes: 1_200 }).artifact,
    buildPlanDiff(plan([examples.E1], { format_version: "2.0" })).artifact,
    buildPlanDiff({ format_version: "0.1" }).artifact,
  ];
  assert.ok(
    artifacts[1].truncation.withheld > 0 &&
      artifacts[1].truncation.dropped > 0 &&
      artifacts[2].truncation.cut > 0 &&
      artifacts[2].truncation.withheld > 0,
  );
  for (const artifact of artifacts) assert.ok(validate(artifact), JSON.stringify(validate.errors));
});

section6.run();
