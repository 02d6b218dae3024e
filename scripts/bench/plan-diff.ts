/**
 * `npm run bench plan-diff` / `task bench`: building the stackship.plan-diff/v1 artifact from a
 * synthetic 5,000-resource plan JSON (about 870 bytes per resource change, shaped like real
 * OpenTofu output: compact, sorted keys, masks, unknowns, module addresses, Go's \u003c escapes)
 * against `JSON.parse` of the same bytes, measured in the same run. Target: ≤ 2× the parse.
 * Prints medians and ratios; asserts nothing (benchmarks never do).
 *
 * The three measurements share one loop and so one young generation: a scavenge lands in
 * whichever measurement happens to be allocating when the space fills, and a scavenge during
 * "parse + build" copies the whole live plan. A change in how much the build allocates can
 * therefore move GC time into or out of the baseline; compare absolute times as well as ratios.
 */
import { buildPlanDiff } from "../../server/src/domain/plan-diff/plan-diff.mjs";
import { median, percentile } from "./stats.ts";

const RESOURCES = Number(process.env.BENCH_PLAN_RESOURCES ?? 5_000);
const REPEATS = Number(process.env.BENCH_PLAN_REPEATS ?? 30);

function goJson(value: unknown): string {
  // Go's encoder escapes <, > and & inside strings.
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");
}

/** One entry of a plan's resource_changes, with the members the other plan sections are built from. */
interface ResourceChange {
  address: string;
  name: string;
  change: { before: unknown; after: unknown; after_sensitive: unknown; [member: string]: unknown };
  [member: string]: unknown;
}

function change(i: number): ResourceChange {
  const module = i % 3 === 0 ? `module.svc_${i % 17}.` : "";
  const kind = i % 20;
  const name = `res_${i}`;
  const values = {
    arn: `arn:aws:iam::111122223333:role/${name}`,
    assume_role_policy: `{"Statement":[{"Action":"sts:AssumeRole","Effect":"Allow","Principal":{"Service":"ecs.amazonaws.com"}}],"Version":"2012-10-17"}`,
    description: `<${i}>&`,
    force_detach_policies: false,
    max_session_duration: 3600,
    name,
    path: "/",
    tags: { env: "prod", service: `svc-${i % 17}` },
  };
  const address = `${module}aws_iam_role.${name}`;
  const base = {
    address,
    ...(module ? { module_address: module.slice(0, -1) } : {}),
    mode: "managed",
    type: "aws_iam_role",
    name,
    provider_name: "registry.opentofu.org/hashicorp/aws",
  };
  if (kind < 12) {
    // create: unknown computed attributes, a sensitive-free after.
    const { arn: _arn, ...after } = values;
    return {
      ...base,
      change: {
        actions: ["create"],
        before: null,
        after,
        after_unknown: { arn: true, create_date: true, id: true, tags: {}, unique_id: true },
        before_sensitive: false,
        after_sensitive: { tags: {} },
      },
    };
  }
  if (kind < 17) {
    // update with a sensitive value in a nested block.
    const before = { ...values, inline_policy: [{ name: "p", policy: `secret-${i}` }] };
    const after = { ...values, max_session_duration: 7200, inline_policy: [{ name: "p", policy: `secret-${i}-2` }] };
    return {
      ...base,
      change: {
        actions: ["update"],
        before,
        after,
        after_unknown: { inline_policy: [{}], tags: {} },
        before_sensitive: { inline_policy: [{ policy: true }], tags: {} },
        after_sensitive: { inline_policy: [{ policy: true }], tags: {} },
      },
    };
  }
  if (kind < 19) {
    const { arn: _arn, ...after } = values;
    return {
      ...base,
      change: {
        actions: ["delete", "create"],
        before: values,
        after: { ...after, name: `${name}-2` },
        after_unknown: { arn: true, tags: {} },
        before_sensitive: { tags: {} },
        after_sensitive: { tags: {} },
        replace_paths: [["name"]],
      },
      action_reason: "replace_because_cannot_update",
    };
  }
  return {
    ...base,
    change: {
      actions: ["delete"],
      before: values,
      after: null,
      after_unknown: {},
      before_sensitive: { tags: {} },
      after_sensitive: false,
    },
  };
}

function synthesize(withRest: boolean): Buffer {
  const resourceChanges = Array.from({ length: RESOURCES }, (_, i) => change(i));
  const plan: Record<string, unknown> = { format_version: "1.2", terraform_version: "1.12.6" };
  if (withRest) {
    // The sections the builder drops, at their usual share (about 3.2× resource_changes in all).
    plan.planned_values = {
      root_module: {
        resources: resourceChanges.map((r) => ({
          address: r.address,
          values: r.change.after,
          sensitive_values: r.change.after_sensitive,
        })),
      },
    };
    plan.prior_state = {
      values: {
        root_module: { resources: resourceChanges.map((r) => ({ address: r.address, values: r.change.before })) },
      },
    };
    plan.configuration = {
      root_module: {
        resources: resourceChanges.map((r) => ({
          address: r.address,
          expressions: { name: { constant_value: r.name }, description: { constant_value: "x".repeat(300) } },
        })),
      },
    };
  }
  plan.resource_changes = resourceChanges;
  plan.timestamp = "2026-12-02T10:00:00Z";
  plan.errored = false;
  return Buffer.from(`${goJson(plan)}\n`);
}

function time(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

function measure(label: string, bytes: Buffer) {
  const text = bytes.toString("utf8");
  const changes = (JSON.parse(text) as { resource_changes: unknown[] }).resource_changes.map(
    (c) => JSON.stringify(c).length,
  );
  const perChange = Math.round(changes.reduce((a, b) => a + b, 0) / changes.length);
  // Warm up both paths.
  for (let i = 0; i < 3; i++) {
    JSON.parse(text);
    buildPlanDiff(JSON.parse(text), { consume: true });
  }
  const parse: number[] = [];
  const build: number[] = [];
  const endToEnd: number[] = [];
  let artifactBytes = 0;
  const sample = buildPlanDiff(JSON.parse(text), { consume: true }).artifact;
  const withheld = sample.resources.filter((r) => r.detail_withheld).length;
  for (let i = 0; i < REPEATS; i++) {
    parse.push(time(() => void JSON.parse(bytes.toString("utf8"))));
    // A fresh parse each time: the command redacts the parsed plan in place.
    const plan: unknown = JSON.parse(text);
    build.push(time(() => (artifactBytes = buildPlanDiff(plan, { consume: true }).bytes)));
    endToEnd.push(time(() => buildPlanDiff(JSON.parse(bytes.toString("utf8")), { consume: true })));
  }
  const p = median(parse);
  const b = median(build);
  const e = median(endToEnd);
  // The spread of each measurement (the machine is often shared): min, first quartile, third
  // quartile. The ratios are of medians; the quartile ratio is a second, less noise-prone view.
  const spread = (samples: number[]) =>
    `[min ${Math.min(...samples).toFixed(1)}, q1 ${percentile(samples, 25).toFixed(1)}, q3 ${percentile(samples, 75).toFixed(1)}]`;
  const quartileRatio = (samples: number[]) =>
    `(q1/q1 ${(percentile(samples, 25) / percentile(parse, 25)).toFixed(2)}×)`;
  console.log(
    `plan-diff [${label}]: ${RESOURCES} resource changes, ${(bytes.length / 1e6).toFixed(2)} MB plan JSON (${perChange} B per change), artifact ${(artifactBytes / 1e6).toFixed(2)} MB, ${withheld} withheld, truncated ${sample.truncated}; medians of ${REPEATS}`,
  );
  console.log(`  JSON.parse of the plan bytes (baseline)   ${p.toFixed(1)} ms  ${spread(parse)}`);
  console.log(
    `  build from the parsed plan                ${b.toFixed(1)} ms  ${(b / p).toFixed(2)}× the parse  ${spread(build)} ${quartileRatio(build)}`,
  );
  console.log(
    `  parse + build (the command's whole work)  ${e.toFixed(1)} ms  ${(e / p).toFixed(2)}× the parse (target: ≤ 2×)  ${spread(endToEnd)} ${quartileRatio(endToEnd)}`,
  );
}

measure("resource_changes only", synthesize(false));
measure("with planned_values, prior_state, configuration", synthesize(true));
