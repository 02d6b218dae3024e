// One suite of the sandbox's behaviour cases against real bubblewrap (files in and out, exit codes,
// output, marks, the plan-diff, tofu), all on the same run helper and per-case temporary directory.
// bwrap's flags, the filesystem, environment and network seen inside are sandbox-isolation.test.ts;
// timeout and abort sandbox-signals.test.ts, warm sandboxes and the pool sandbox-warm.test.ts, the
// uid/seccomp confinement cases sandbox-confinement.test.ts.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { runInSandbox, SANDBOX_TOOLS_DIR, startSandbox, type SandboxOptions } from "./sandbox.ts";
import { buildPlanDiff } from "../domain/plan-diff/plan-diff.mjs";
import { planDiffBinds, SANDBOX_PLAN_DIFF_BUILDER } from "./tofu-files.ts";
import { attemptDirectoryPerCase, catEvidence, runCollecting, type CollectedResult } from "./sandbox-test-support.ts";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const toolsDir = path.join(repoRoot, ".tools");
const fixtures = path.join(repoRoot, "server/test/fixtures/configs");

const test = suite("sandbox");
const tmpDir = attemptDirectoryPerCase(test, "stackship-sandbox-test-");

/** Runs in the sandbox, collecting stdout as text; attempts live under the case's directory. */
const run = (options: SandboxOptions): Promise<CollectedResult> => runCollecting({ tmpDir: tmpDir(), ...options });

/** A resource change of the plan JSON (`tofu show -json`): the members these checks read. */
interface PlanChange {
  actions: string[];
  after: Record<string, unknown>;
  after_sensitive: { result?: unknown };
  after_unknown: { result?: unknown; input?: { password?: unknown } };
}

test("files in and out; the host work dir is removed afterwards", async () => {
  const result = await run({
    argv: [
      "sh",
      "-c",
      "cat in.txt nested/deeper.txt main.tf > out.txt; mkdir -p results; echo done > results/status; wc -c < out.txt",
    ],
    copyDir: path.join(fixtures, "basic"),
    files: { "in.txt": "first\n", "nested/deeper.txt": Buffer.from("second\n") },
    collect: ["out.txt", "results/status", "missing.txt"],
  });
  assert.is(result.exitCode, 0, result.stderr);
  const out = result.files["out.txt"]!.toString("utf8");
  assert.ok(out.startsWith("first\nsecond\n"));
  assert.ok(out.includes('resource "terraform_data" "greeting"'));
  assert.is(result.files["results/status"]!.toString("utf8"), "done\n");
  assert.is(result.files["missing.txt"], null);
  assert.is(result.stdout.trim(), String(Buffer.byteLength(out)));
  // test.after.each checks that tmpDir is empty again.
});

test("collect does not follow symlinks the sandbox planted", async () => {
  const result = await run({
    argv: ["sh", "-c", "ln -s /etc/hostname leak.txt; mkdir d; ln -s /etc d/etc; ln -s / up"],
    collect: ["leak.txt", "d/etc/hostname", "up/etc/hostname"],
  });
  assert.is(result.exitCode, 0);
  assert.equal(result.files, { "leak.txt": null, "d/etc/hostname": null, "up/etc/hostname": null });
});

test("paths outside the work dir are refused before anything starts", async () => {
  const refused: Record<string, string>[] = [{ "../escape": "x" }, { "/etc/passwd": "x" }, { "a/../../b": "x" }];
  for (const files of refused) {
    let message = "";
    await runInSandbox({ argv: ["true"], files, tmpDir: tmpDir() }).catch((error: Error) => (message = error.message));
    assert.match(message, /not a relative path inside the work directory/);
  }
  let message = "";
  await runInSandbox({
    argv: ["true"],
    readOnlyBinds: [{ source: toolsDir, target: "/work/tools" }],
    tmpDir: tmpDir(),
  }).catch((error: Error) => (message = error.message));
  assert.match(message, /would cover/);
});

test("exit codes, stderr and a missing command", async () => {
  const failing = await run({ argv: ["sh", "-c", "echo to-stderr >&2; exit 3"] });
  assert.is(failing.exitCode, 3);
  assert.is(failing.stderr, "to-stderr\n");
  assert.is(failing.error, undefined);

  const missing = await run({ argv: ["no-such-command-anywhere"] });
  assert.not.ok(missing.started);
  assert.is(missing.exitCode, 127);
  assert.match(missing.error ?? "", /ENOENT/);

  const noBwrap = await run({ argv: ["true"], bwrapPath: "/nonexistent/bwrap" });
  assert.not.ok(noBwrap.started);
  assert.match(noBwrap.error ?? "", /ENOENT/);
});

test("an onOutput callback that throws fails the run after cleanup", async () => {
  let message = "";
  await runInSandbox({
    argv: ["echo", "hi"],
    tmpDir: tmpDir(),
    onOutput: () => {
      throw new Error("consumer broke");
    },
  }).catch((error: Error) => (message = error.message));
  assert.is(message, "consumer broke");
});

test("steps the command marks on its fd 3 come back as timings", async () => {
  const result = await run({ argv: ["sh", "-c", "echo one >&3; sleep 0.05; echo two >&3; echo out"] });
  assert.is(result.exitCode, 0);
  assert.equal(
    result.timings.marks.map((m) => m.name),
    ["one", "two"],
  );
  const [one, two] = result.timings.marks;
  // Order only: the gap between the marks depends on the machine's load (no timed assertions).
  assert.ok(result.timings.startedAt! <= one.at && one.at <= two.at && two.at <= result.timings.exitedAt!);
});

test("plan-diff: the launcher builds it inside the sandbox after the command, with the builder loaded at boot", async () => {
  const secret = "lt-sandbox-secret-0451";
  const plan = {
    format_version: "1.2",
    terraform_version: "1.12.6",
    errored: false,
    resource_changes: [
      {
        address: "terraform_data.a",
        mode: "managed",
        type: "terraform_data",
        name: "a",
        provider_name: "terraform.io/builtin/terraform",
        change: {
          actions: ["create"],
          before: null,
          after: { input: secret },
          after_unknown: { id: true },
          before_sensitive: false,
          after_sensitive: {},
        },
      },
    ],
  };
  const shape = { tmpDir: tmpDir(), readOnlyBinds: planDiffBinds(), planDiffBuilder: SANDBOX_PLAN_DIFF_BUILDER };
  const request = catEvidence("run-0123456789abcdef", ["PD_SECRET"]);
  const sandbox = await startSandbox(shape);
  assert.ok(await sandbox.ready, "ready once the builder is loaded");
  const withFile = await sandbox.run({
    argv: ["true"],
    files: { "plan.tfplan": JSON.stringify(plan) },
    env: { PD_SECRET: secret },
    evidence: request,
    collect: ["plan-diff.json"],
  });
  assert.is(withFile.exitCode, 0, withFile.error);
  assert.equal(
    withFile.timings.marks.map((m) => m.name),
    ["evidence", "show", "plan-diff"],
  );
  const text = withFile.artifacts["plan-diff.json"].toString("utf8");
  assert.not.match(text, secret, "a value named by secretEnv stays redacted");
  assert.equal(
    JSON.parse(text),
    buildPlanDiff(plan, { runId: "run-0123456789abcdef", knownSecrets: [secret] }).artifact,
  );
  assert.is(withFile.files["plan-diff.json"], null, "nothing is written to /work");

  // Not a plan: no artifact, a line in the log that does not quote the input, and the attempt still succeeds.
  let log = "";
  const refused = await runInSandbox({
    ...shape,
    argv: ["true"],
    files: { "plan.tfplan": '{"password": "hunter2", oops' },
    evidence: request,
    onOutput: (chunk) => (log += chunk.toString()),
  });
  assert.is(refused.exitCode, 0);
  assert.is(refused.artifacts["plan-diff.json"], undefined);
  assert.match(log, /could not build the redacted plan changes/);
  assert.not.match(log, "hunter2");

  // A failed command: no plan-diff at all.
  const failed = await runInSandbox({
    ...shape,
    argv: ["sh", "-c", "exit 4"],
    files: { "plan.tfplan": JSON.stringify(plan) },
    evidence: request,
  });
  assert.is(failed.exitCode, 4);
  assert.equal(failed.artifacts, {});
});

test("tofu: offline init from the provider mirror, plan -out, show -json", async () => {
  const cliConfig = `provider_installation {
  filesystem_mirror {
    path    = "${SANDBOX_TOOLS_DIR}/providers"
    include = ["registry.opentofu.org/*/*"]
  }
}
`;
  const script = [
    "set -e",
    "tofu init -input=false -no-color",
    "tofu plan -input=false -no-color -lock=false -out=plan.tfplan",
    "tofu show -json plan.tfplan > plan.json",
  ].join("\n");
  const result = await run({
    argv: ["sh", "-c", script],
    name: "ss-plan-tofu",
    copyDir: path.join(fixtures, "random"),
    files: { ".tofurc": cliConfig },
    env: {
      PATH: `${SANDBOX_TOOLS_DIR}/bin:/usr/bin:/bin`,
      TF_CLI_CONFIG_FILE: "/work/.tofurc",
      TF_IN_AUTOMATION: "1",
      CHECKPOINT_DISABLE: "1",
    },
    readOnlyBinds: [{ source: toolsDir, target: SANDBOX_TOOLS_DIR }],
    timeoutMs: 60_000,
    collect: ["plan.tfplan", "plan.json", ".terraform.lock.hcl"],
  });
  assert.is(result.exitCode, 0, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  assert.match(result.stdout, /Installed hashicorp\/random v3\.9\.0/);
  assert.match(result.stdout, /Plan: 2 to add, 0 to change, 0 to destroy\./);
  assert.ok(result.files["plan.tfplan"]!.length > 0);
  assert.match(result.files[".terraform.lock.hcl"]!.toString("utf8"), /registry\.opentofu\.org\/hashicorp\/random/);

  const plan = JSON.parse(result.files["plan.json"]!.toString("utf8")) as {
    errored: boolean;
    terraform_version: string;
    resource_changes: Array<{ address: string; change: PlanChange }>;
  };
  assert.is(plan.errored, false);
  const changes = Object.fromEntries(plan.resource_changes.map((c) => [c.address, c.change]));
  assert.equal(Object.keys(changes).sort(), ["random_password.db", "terraform_data.app"]);
  assert.equal(changes["random_password.db"].actions, ["create"]);
  assert.equal(changes["terraform_data.app"].actions, ["create"]);
  // The provider marks result sensitive; at plan time it is also unknown, so `after` omits it.
  assert.is(changes["random_password.db"].after_sensitive.result, true);
  assert.is(changes["random_password.db"].after_unknown.result, true);
  assert.not.ok("result" in changes["random_password.db"].after);
  assert.is(changes["terraform_data.app"].after_unknown.input?.password, true);
  // tofu ran the pinned version.
  assert.is(
    plan.terraform_version,
    readFileSync(path.join(repoRoot, "scripts/tool-versions.env"), "utf8").match(/^OPENTOFU_VERSION=(.*)$/m)![1],
  );
});

test.run();
