import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildPlanDiff, type PlanDiff } from "../domain/plan-diff/plan-diff.mjs";
import { startSandbox, type SandboxRun } from "./sandbox.ts";
import { attemptDirectoryPerCase, catEvidence } from "./sandbox-test-support.ts";
import { planDiffBinds, SANDBOX_PLAN_DIFF_BUILDER } from "./tofu-files.ts";
import { skipTest } from "../../test/support/skips.ts";
import { plan as planJson, terraformData } from "../../test/support/unit-plan-diff.ts";

// The launcher builds a plan JSON up to its inline limit in its own thread, a larger one in a
// worker thread with its own heap limit (started for that plan); both give the host's artifact.
const planDiff = suite("sandbox plan-diff: inline and in a worker");
const tmpDir = attemptDirectoryPerCase(planDiff, "ss-plan-diff-");

const launcherSource = readFileSync(new URL("./sandbox/launcher-plan-diff.mjs", import.meta.url), "utf8");
const inlineMaxBytes =
  Number(/const PLAN_DIFF_INLINE_MAX_BYTES = (\d+) \* 1024 \* 1024;/.exec(launcherSource)?.[1]) * 1024 * 1024;
const secret = "pd-worker-secret-7781";

/** A plan with `count` created resources whose input is `size` characters (the first holds the secret). */
function plan(count: number, size: number) {
  return planJson(
    Array.from({ length: count }, (_, i) =>
      terraformData(`r${i}`, {
        actions: ["create"],
        before: null,
        after: { input: i === 0 ? secret : String(i % 10).repeat(size) },
        after_unknown: { id: true },
        before_sensitive: false,
        after_sensitive: {},
      }),
    ),
  );
}

/**
 * Runs a command in a sandbox that builds the plan-diff evidence (of the run by default, in at
 * most 30 s; `run` may say otherwise) and gathers its output.
 */
async function runWithPlanDiff(run: SandboxRun) {
  const sandbox = await startSandbox({
    tmpDir: tmpDir(),
    readOnlyBinds: planDiffBinds(),
    planDiffBuilder: SANDBOX_PLAN_DIFF_BUILDER,
  });
  let log = "";
  const result = await sandbox.run({
    evidence: catEvidence("run-0123456789abcdef"),
    timeoutMs: 30_000,
    ...run,
    onOutput: (chunk) => (log += chunk.toString("utf8")),
  });
  return { result, log };
}

function buildInSandbox(planJson: string) {
  return runWithPlanDiff({
    argv: ["true"],
    files: { "plan.tfplan": planJson },
    env: { PD_SECRET: secret },
    evidence: catEvidence("run-0123456789abcdef", ["PD_SECRET"]),
    timeoutMs: 120_000,
  });
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
    const text = result.artifacts["plan-diff.json"]?.toString("utf8");
    assert.ok(text, "the artifact was built");
    assert.not.match(text, secret, "a value named by secretEnv stays redacted");
    assert.equal(
      JSON.parse(text),
      buildPlanDiff(input, { runId: "run-0123456789abcdef", knownSecrets: [secret] }).artifact,
    );
    assert.is(sha(result.artifacts["plan.json"]), sha(json), "the plan JSON travels over the channel as shown");
  });
}

const sha = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

// The red team's forging watcher: a process the configuration leaves behind in a session of its
// own (setsid, so not in the command's process group) rewrites the plan files in a loop.
const watcher = (files: string) => `setsid sh -c 'while :; do ${files} done' </dev/null >/dev/null 2>&1 &`;

planDiff(
  "a forging watcher left running (setsid) rewrites plan.tfplan, plan.json and plan-diff.json in a loop: the evidence is the real plan's",
  async () => {
    const real = JSON.stringify(plan(3, 10));
    const forged = JSON.stringify(plan(1, 10));
    const forgedDiff = JSON.stringify(buildPlanDiff(JSON.parse(forged), { runId: "run-0123456789abcdef" }).artifact);
    const { result, log } = await runWithPlanDiff({
      // The "plan" writes the real plan, starts the watcher and waits until it has rewritten every file once.
      argv: [
        "sh",
        "-c",
        `cp real.json plan.tfplan; ${watcher("cp forged.json plan.json; cp forged-diff.json plan-diff.json; cp forged.json plan.tfplan.forged; echo x > watching;")}
       while [ ! -f watching ]; do :; done; cp real.json plan.tfplan`,
      ],
      files: { "real.json": real, "forged.json": forged, "forged-diff.json": forgedDiff },
    });
    assert.is(result.exitCode, 0, `${result.error ?? ""} ${log}`);
    assert.is(result.artifacts["plan.json"]?.toString("utf8"), real, "the plan JSON is the show of the saved plan");
    const diff = JSON.parse(result.artifacts["plan-diff.json"].toString("utf8")) as PlanDiff;
    assert.equal(
      diff.resources.map((r) => r.address),
      ["terraform_data.r0", "terraform_data.r1", "terraform_data.r2"],
      "every resource of the real plan",
    );
    assert.is(result.artifacts["plan.tfplan"]?.toString("utf8"), real);
  },
);

planDiff(
  "a watcher that rewrites the saved plan itself after it was written: killed before show, so the plan shown is the plan sent",
  async () => {
    const real = JSON.stringify(plan(3, 10));
    const forged = JSON.stringify(plan(1, 10));
    const { result } = await runWithPlanDiff({
      argv: [
        "sh",
        "-c",
        `cp real.json plan.tfplan; ${watcher("cp forged.json plan.tfplan.new; mv plan.tfplan.new plan.tfplan; echo x > watching;")} while [ ! -f watching ]; do :; done`,
      ],
      files: { "real.json": real, "forged.json": forged },
      collect: ["plan.tfplan"],
    });
    assert.is(result.exitCode, 0, result.error);
    // Whichever version the watcher left when it was killed, the saved plan sent is the one shown and built from.
    const sent = result.artifacts["plan.tfplan"].toString("utf8");
    assert.is(result.artifacts["plan.json"]?.toString("utf8"), sent);
    assert.is(
      (JSON.parse(result.artifacts["plan-diff.json"].toString("utf8")) as PlanDiff).resources.length,
      (JSON.parse(sent) as { resource_changes: unknown[] }).resource_changes.length,
    );
    assert.is(
      result.files["plan.tfplan"]?.toString("utf8"),
      sent,
      "nothing rewrote the saved plan after the watcher was killed",
    );
  },
);

// As root the launcher makes itself non-dumpable (sandbox-launcher.mjs becomeNonDumpable); without
// root (one mapped gid) it cannot, and this case is skipped.
const asRoot = process.getuid?.() === 0;
const launcherMemory = (name: string, handler: () => Promise<void>) =>
  asRoot ? planDiff(name, handler) : skipTest(planDiff, name, "not root: the launcher cannot make itself non-dumpable");
launcherMemory(
  "the command (the same uid) cannot open the launcher's memory, so it cannot rewrite what the launcher derives and sends",
  async () => {
    const sandbox = await startSandbox({ tmpDir: tmpDir() });
    let log = "";
    const result = await sandbox.run({
      argv: [
        "sh",
        "-c",
        'tr "\\0" " " < /proc/$PPID/cmdline; echo; for how in "<>" "<"; do if eval "(exec 4${how}/proc/$PPID/mem) 2>/dev/null"; then echo "opened mem with $how"; fi; done; if cat /proc/$PPID/environ >/dev/null 2>&1; then echo "read environ"; fi',
      ],
      timeoutMs: 30_000,
      onOutput: (chunk) => (log += chunk.toString("utf8")),
    });
    assert.is(result.exitCode, 0, result.error);
    assert.match(log, "launcher.mjs", "the probe looked at the launcher");
    assert.not.match(log, "opened mem");
    assert.not.match(log, "read environ");
  },
);

planDiff(
  "a plan JSON written into /work (by the command or later) is never the evidence: only the show's output is",
  async () => {
    const real = JSON.stringify(plan(2, 10));
    const forged = JSON.stringify(plan(1, 10));
    const { result } = await runWithPlanDiff({
      argv: ["sh", "-c", "cp real.json plan.tfplan; cp forged.json plan.json; cp forged.json plan-diff.json"],
      files: { "real.json": real, "forged.json": forged },
    });
    assert.is(result.exitCode, 0, result.error);
    assert.is(result.artifacts["plan.json"]?.toString("utf8"), real);
    assert.is((JSON.parse(result.artifacts["plan-diff.json"].toString("utf8")) as PlanDiff).resources.length, 2);
  },
);

planDiff(
  "above the inline limit, input the builder refuses: no artifact, the attempt succeeds, the plan is not quoted",
  async () => {
    const json = `{"password": "hunter2", "pad": "${"x".repeat(inlineMaxBytes)}", oops`;
    const { result, log } = await buildInSandbox(json);
    assert.is(result.exitCode, 0, result.error);
    assert.is(result.artifacts["plan-diff.json"], undefined);
    assert.match(log, /could not build the redacted plan changes/);
    assert.not.match(log, "hunter2");
  },
);

planDiff("a saved plan that is no regular file (a device) or missing: no evidence, the attempt fails", async () => {
  for (const script of ["ln -s /dev/zero plan.tfplan", "rm -f plan.tfplan"]) {
    const { result, log } = await runWithPlanDiff({ argv: ["sh", "-c", script] });
    assert.is(result.exitCode, 1, result.error);
    assert.is(result.limit, null, script);
    assert.equal(result.artifacts, {}, script);
    assert.match(log, /the saved plan is missing or not a regular file/, script);
  }
});

planDiff.run();
