import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildPlanDiff } from "../domain/plan-diff/plan-diff.mjs";
import { startSandbox } from "./sandbox.ts";
import { attemptDirectoryPerCase } from "./sandbox-test-support.ts";
import { planDiffBinds, planDiffRequest, SANDBOX_PLAN_DIFF_BUILDER } from "./tofu-files.ts";

// The launcher builds a plan JSON up to its inline limit in its own thread, a larger one in a
// worker thread with its own heap limit (started for that plan); both give the host's artifact.
const planDiff = suite("sandbox plan-diff: inline and in a worker");
const tmpDir = attemptDirectoryPerCase(planDiff, "ss-plan-diff-");

const launcherSource = readFileSync(new URL("./sandbox-launcher.mjs", import.meta.url), "utf8");
const inlineMaxBytes = Number(/const PLAN_DIFF_INLINE_MAX_BYTES = (\d+) \* 1024 \* 1024;/.exec(launcherSource)?.[1]) * 1024 * 1024;
const secret = "pd-worker-secret-7781";

/** A plan with `count` created resources whose input is `size` characters (the first holds the secret). */
function plan(count: number, size: number) {
  return {
    format_version: "1.2",
    terraform_version: "1.12.6",
    errored: false,
    resource_changes: Array.from({ length: count }, (_, i) => ({
      address: `terraform_data.r${i}`,
      mode: "managed",
      type: "terraform_data",
      name: `r${i}`,
      provider_name: "terraform.io/builtin/terraform",
      change: {
        actions: ["create"],
        before: null,
        after: { input: i === 0 ? secret : String(i % 10).repeat(size) },
        after_unknown: { id: true },
        before_sensitive: false,
        after_sensitive: {},
      },
    })),
  };
}

async function buildInSandbox(planJson: string) {
  const sandbox = await startSandbox({ tmpDir: tmpDir(), readOnlyBinds: planDiffBinds(), planDiffBuilder: SANDBOX_PLAN_DIFF_BUILDER });
  let log = "";
  const result = await sandbox.run({
    argv: ["true"],
    files: { "plan.json": planJson },
    env: { PD_SECRET: secret },
    planDiff: planDiffRequest("run-0123456789abcdef", ["PD_SECRET"]),
    collect: ["plan-diff.json"],
    timeoutMs: 120_000,
    onOutput: (chunk) => (log += chunk.toString("utf8")),
  });
  return { result, log };
}

planDiff("the inline limit is read from the launcher", () => {
  assert.ok(inlineMaxBytes >= 1024 * 1024, `inline limit ${inlineMaxBytes}`);
});

for (const [name, count, size] of [
  ["below the inline limit: built in the launcher's thread", 50, 1000],
  ["above the inline limit: built in a worker of its own", 600, 16 * 1024],
] as const) {
  planDiff(name, async () => {
    const input = plan(count, size);
    const json = JSON.stringify(input);
    if (count === 50) assert.ok(json.length < inlineMaxBytes, `${json.length} bytes`);
    else assert.ok(json.length > inlineMaxBytes, `${json.length} bytes`);
    const { result, log } = await buildInSandbox(json);
    assert.is(result.exitCode, 0, result.error);
    assert.not.match(log, /could not build/);
    const text = result.files["plan-diff.json"]?.toString("utf8");
    assert.ok(text, "the artifact was built");
    assert.not.match(text!, secret, "a value named by secretEnv stays redacted");
    assert.equal(JSON.parse(text!), buildPlanDiff(input, { runId: "run-0123456789abcdef", knownSecrets: [secret] }).artifact);
    assert.is(result.planDiffSourceSha256, sha(json), "the exit report names the plan JSON it was built from");
  });
}

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

planDiff("built at the mark, the plan-diff names the plan JSON of that moment, not the one a process left behind wrote later", async () => {
  const first = JSON.stringify(plan(2, 10));
  const later = JSON.stringify(plan(3, 10));
  const sandbox = await startSandbox({ tmpDir: tmpDir(), readOnlyBinds: planDiffBinds(), planDiffBuilder: SANDBOX_PLAN_DIFF_BUILDER });
  const request = planDiffRequest("run-0123456789abcdef", []);
  const result = await sandbox.run({
    // The mark the launcher builds after, then plan.json rewritten before the command exits.
    argv: ["sh", "-c", `cp first.json plan.json; echo ${request.afterMark} >&3; sleep 0.3; cp later.json plan.json`],
    files: { "first.json": first, "later.json": later },
    planDiff: request,
    collect: ["plan.json", "plan-diff.json"],
    timeoutMs: 30_000,
  });
  assert.is(result.exitCode, 0, result.error);
  assert.is(result.files["plan.json"]?.toString("utf8"), later);
  assert.is(JSON.parse(result.files["plan-diff.json"]!.toString("utf8")).resources.length, 2);
  assert.is(result.planDiffSourceSha256, sha(first));
  assert.is.not(result.planDiffSourceSha256, sha(later), "the runner can tell the stored plan JSON is not the one the plan-diff shows");
});

planDiff("above the inline limit, input the builder refuses: no artifact, the attempt succeeds, the plan is not quoted", async () => {
  const json = `{"password": "hunter2", "pad": "${"x".repeat(inlineMaxBytes)}", oops`;
  const { result, log } = await buildInSandbox(json);
  assert.is(result.exitCode, 0, result.error);
  assert.is(result.files["plan-diff.json"], null);
  assert.is(result.planDiffSourceSha256, null);
  assert.match(log, /could not build the redacted plan changes/);
  assert.not.match(log, "hunter2");
});

planDiff("a plan JSON that is no regular file (a device) or missing: no artifact, the attempt succeeds", async () => {
  for (const script of ["ln -s /dev/zero plan.json", "rm -f plan.json"]) {
    const sandbox = await startSandbox({ tmpDir: tmpDir(), readOnlyBinds: planDiffBinds(), planDiffBuilder: SANDBOX_PLAN_DIFF_BUILDER });
    let log = "";
    const result = await sandbox.run({
      argv: ["sh", "-c", script],
      planDiff: planDiffRequest("run-0123456789abcdef", []),
      collect: ["plan-diff.json"],
      timeoutMs: 30_000,
      onOutput: (chunk) => (log += chunk.toString("utf8")),
    });
    assert.is(result.exitCode, 0, result.error);
    assert.is(result.limit, null, script);
    assert.is(result.files["plan-diff.json"], null, script);
    assert.match(log, /the plan JSON could not be read/, script);
  }
});

planDiff.run();
