// Structured run output with the real CLI (issue 29): the workspace has
// `structured-run-output-enabled`, so its runs' plan and apply print `-json` UI lines; the CLI
// reads those through the log URL, and renders the plan itself from json-output-redacted (the
// ping's X-TFE-Version lets it). What it prints equals a local `tofu plan` of the same
// configuration, sensitive values render `(sensitive value)` and none reaches anything the CLI
// printed or fetched; /v1 keeps serving human text; the interactive apply renders from JSON lines.
// Both CLIs: OpenTofu, and the Terraform CLI (v1.5.7, built by scripts/bootstrap-tools
// --with-test-tools), each against its own local plan.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readFramedLog } from "../../src/api/tfe/logs.ts";
import { phaseId } from "../../src/api/tfe/presenters.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { stripAnsi } from "../../src/runner/log-sanitizer.ts";
import { skipTest } from "../support/skips.ts";
import { TERRAFORM, TOFU, testEachInitializedProject, transcript, type CliProject, type CliServer } from "./cli.ts";

const test = suite("structured run output with the tofu and Terraform CLIs");

/** A CLI the scenarios run with: its binary, and where its providers come from offline. */
interface Cli {
  name: string;
  binary: string;
  /** The registry host its `hashicorp/random` resolves to (the mirror is laid out under it). */
  registry: string;
}
const CLIS: Cli[] = [
  { name: "tofu", binary: TOFU, registry: "registry.opentofu.org" },
  { name: "terraform", binary: TERRAFORM, registry: "registry.terraform.io" },
];

/** Unique per run of the suite, so a value found anywhere is this test's. */
const CANARY = randomBytes(6).toString("hex");
/** The sensitive variable's value: a quote, a backslash and `<>&`, which JSON (and Go's JSON) escape. */
const PASSWORD = `pw-${CANARY}-"q"\\b<&>`;
/** A value wrapped in sensitive() in the configuration itself. */
const WRAPPED = `wrapped-${CANARY}-value`;

const CONFIGURATION = `variable "password" {
  type      = string
  sensitive = true
}

resource "terraform_data" "secret" {
  input = var.password
}

resource "terraform_data" "wrapped" {
  input = sensitive("${WRAPPED}")
}

resource "terraform_data" "plain" {
  input = { greeting = "hello", sizes = [1, 2, 3] }
}

output "greeting" {
  value = terraform_data.plain.output.greeting
}

output "secret" {
  value     = terraform_data.secret.output
  sensitive = true
}
`;

/** The human plan: from "OpenTofu used the selected providers" (or "No changes.") to the end of the changes, colour and trailing spaces removed. */
function renderedPlan(stdout: string): string[] {
  const lines = stripAnsi(stdout)
    .split("\n")
    .map((line) => line.trimEnd());
  const start = lines.findIndex(
    (line) => /^(OpenTofu|Terraform) used the selected providers/.test(line) || line.startsWith("No changes."),
  );
  if (start < 0) return [];
  let end = lines.findIndex(
    (line, i) =>
      i > start &&
      (line.startsWith("─") ||
        line.startsWith("Note: You didn't use the -out option") ||
        line.startsWith("Do you want to perform")),
  );
  if (end < 0) end = lines.length;
  return lines.slice(start, end).join("\n").trim().split("\n");
}

/** `<cli> <args>` in `dir` with the local backend (no cloud block), the variable from the environment. */
async function localTofu(
  cli: Cli,
  dir: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cli.binary, args, {
      cwd: dir,
      env: {
        PATH: "/usr/bin:/bin",
        HOME: dir,
        CHECKPOINT_DISABLE: "1",
        TF_VAR_password: PASSWORD,
        TF_CLI_CONFIG_FILE: join(dir, "tofu.rc"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function enableStructuredOutput(server: CliServer, project: CliProject): Promise<void> {
  const workspace = (await project.workspace())!;
  const response = await fetch(`${server.baseUrl}/api/v2/workspaces/${workspace.id}`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${project.token}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({ data: { type: "workspaces", attributes: { "structured-run-output-enabled": true } } }),
  });
  assert.is(response.status, 200, await response.text());
}

/** Everything the CLI could have fetched about the run: both framed logs, json-output-redacted, and what /v1 serves of each log. */
async function everythingServed(server: CliServer, project: CliProject, runId: string): Promise<string> {
  const run = (await server.services.stores.runs.getById(runId))!;
  const parts = [
    Buffer.from(await readFramedLog(server.services, run, "plan", 0, 1 << 24)).toString("utf8"),
    Buffer.from(await readFramedLog(server.services, run, "apply", 0, 1 << 24)).toString("utf8"),
  ];
  const redacted = await fetch(`${server.baseUrl}/api/v2/plans/${phaseId(runId, "plan")}/json-output-redacted`, {
    headers: { Authorization: `Bearer ${project.token}` },
  });
  parts.push(await redacted.text());
  for (const phase of ["plan", "apply"]) {
    const log = await fetch(`${server.baseUrl}/v1/runs/${runId}/logs/${phase}`, {
      headers: { Authorization: `Bearer ${project.token}` },
    });
    parts.push(await log.text());
  }
  return parts.join("\n");
}

/** Every spelling a leak of the canaries could take: as is and JSON-escaped once or twice. */
function assertNoCanary(text: string, where: string): void {
  for (const value of [PASSWORD, WRAPPED]) {
    const once = JSON.stringify(value).slice(1, -1);
    for (const spelling of [value, once, JSON.stringify(once).slice(1, -1)])
      assert.not.ok(text.includes(spelling), `${where} holds ${JSON.stringify(spelling)}`);
  }
  assert.not.ok(text.includes(`pw-${CANARY}`), `${where} holds a piece of the sensitive variable`);
}

function renderingScenario(cli: Cli): void {
  testEachInitializedProject(
    test,
    `${cli.name}: plan renders from json-output-redacted as a local plan does, apply (yes) from JSON lines; no sensitive value printed or served`,
    async (server, project) => {
      await enableStructuredOutput(server, project);
      // The variable travels as a run variable (an HCL expression).
      const planned = await project.tofu(["plan", "-var", `password=${PASSWORD}`]);
      assert.is(planned.code, 0, transcript(planned));
      const [planRun] = await project.runs();
      assert.is(planRun.structuredRunOutput, true);
      // The plan log the CLI read is `-json` UI lines; /v1 serves the human form, in which the plan
      // is tofu's own rendering of the saved plan (each resource's diff), not the lines' @message.
      const planLog = await server.services.stores.logs.read(planRun.id, "plan", 0, 1 << 24);
      const framed = Buffer.from(await readFramedLog(server.services, planRun, "plan", 0, 1 << 24)).toString("utf8");
      assert.match(framed, /"type":"planned_change"/);
      assert.match(planLog.text, "# terraform_data.plain will be created");
      assert.match(planLog.text, "(sensitive value)");
      assert.not.match(planLog.text, "Plan to create");
      assert.match(planLog.text, "Plan: 3 to add, 0 to change, 0 to destroy.");
      assert.not.match(planLog.text, '"@level"');
      assert.not.match(planLog.text, PASSWORD);
      // The CLI drops the planned_change lines, so this diff came from the redacted plan.
      assert.not.match(planned.stdout, "Plan to create", transcript(planned));

      // The same configuration planned locally (local backend, no state), rendered by the same tofu.
      const local = await mkdtemp(join(tmpdir(), "ss-sro-local-"));
      try {
        await writeFile(join(local, "main.tf"), CONFIGURATION);
        await writeFile(join(local, "tofu.rc"), "");
        const init = await localTofu(cli, local, ["init", "-no-color"]);
        assert.is(init.code, 0, init.stdout + init.stderr);
        const localPlan = await localTofu(cli, local, ["plan", "-no-color"]);
        assert.is(localPlan.code, 0, localPlan.stdout + localPlan.stderr);
        const expected = renderedPlan(localPlan.stdout);
        assert.ok(expected.length > 10, localPlan.stdout);
        assert.equal(renderedPlan(planned.stdout), expected, transcript(planned));
      } finally {
        await rm(local, { recursive: true, force: true });
      }
      assert.match(planned.stdout, "input  = (sensitive value)", transcript(planned));
      assertNoCanary(planned.stdout + planned.stderr, "tofu plan's output");
      assertNoCanary(await everythingServed(server, project, planRun.id), "what StackShip serves of the plan");

      // The interactive apply: the CLI's yes is the approval; the apply log is JSON lines it renders.
      const applied = await project.tofu(["apply", "-var", `password=${PASSWORD}`], { stdin: "yes\n" });
      assert.is(applied.code, 0, transcript(applied));
      assert.match(applied.stdout, "Do you want to perform these actions in workspace", transcript(applied));
      assert.match(applied.stdout, "terraform_data.plain: Creation complete", transcript(applied));
      assert.match(applied.stdout, "Apply complete! Resources: 3 added, 0 changed, 0 destroyed.", transcript(applied));
      assert.match(applied.stdout, 'greeting = "hello"', transcript(applied));
      assert.match(applied.stdout, "secret = (sensitive value)", transcript(applied));
      assert.not.match(applied.stdout, '"@level"', transcript(applied));
      const [applyRun] = await project.runs();
      assert.is(applyRun.status, "applied");
      const applyFramed = Buffer.from(await readFramedLog(server.services, applyRun, "apply", 0, 1 << 24)).toString(
        "utf8",
      );
      assert.match(applyFramed, /"type":"apply_complete"/);
      const applyLog = await server.services.stores.logs.read(applyRun.id, "apply", 0, 1 << 24);
      assert.match(applyLog.text, "Apply complete! Resources: 3 added, 0 changed, 0 destroyed.");
      assert.not.match(applyLog.text, '"@level"');
      assertNoCanary(applied.stdout + applied.stderr, "tofu apply's output");
      assertNoCanary(await everythingServed(server, project, applyRun.id), "what StackShip serves of the apply");
    },
    { runner: true, project: { configuration: CONFIGURATION, cli: cli.binary } },
  );
}

/** The configuration the import scenario plans: a random_string imported by an `import` block, its configuration to be generated. */
const IMPORT_CONFIGURATION = `terraform {
  required_providers {
    random = {
      source  = "hashicorp/random"
      version = "~> 3.9"
    }
  }
}

import {
  to = random_string.imported
  id = "importedvalue"
}
`;

/**
 * Providers from the repository's offline mirror (the CLI's own init installs them too). The
 * mirror is laid out for OpenTofu's registry; Terraform resolves `hashicorp/random` on its own
 * registry, so it gets a copy under that host in `dir`.
 */
async function mirrorConfig(cli: Cli, dir: string): Promise<string> {
  const tools = join(REPO_ROOT, ".tools/providers");
  let path = tools;
  if (cli.registry !== "registry.opentofu.org") {
    path = join(dir, "providers");
    await cp(join(tools, "registry.opentofu.org"), join(path, cli.registry), { recursive: true });
  }
  return `provider_installation {\n  filesystem_mirror {\n    path    = "${path}"\n    include = ["${cli.registry}/*/*"]\n  }\n}\n`;
}

function importScenario(cli: Cli, structured: boolean): void {
  testEachInitializedProject(
    test,
    `${cli.name}: plan -generate-config-out writes the configuration a local plan generates (structured output ${structured ? "on" : "off"})`,
    async (server, project) => {
      if (structured) await enableStructuredOutput(server, project);
      const out = join(project.dir, "generated.tf");
      const planned = await project.tofu(["plan", `-generate-config-out=${out}`]);
      assert.is(planned.code, 0, transcript(planned));
      assert.match(planned.stdout, "1 to import", transcript(planned));
      const generated = await readFile(out, "utf8");
      const [run] = await project.runs();
      const plan = await fetch(`${server.baseUrl}/api/v2/plans/${phaseId(run.id, "plan")}`, {
        headers: { Authorization: `Bearer ${project.token}` },
      });
      const attributes = ((await plan.json()) as { data: { attributes: Record<string, unknown> } }).data.attributes;
      assert.is(attributes["generated-configuration"], true);
      assert.is(attributes["resource-imports"], 1);

      const local = await mkdtemp(join(tmpdir(), "ss-sro-import-"));
      try {
        await writeFile(join(local, "main.tf"), IMPORT_CONFIGURATION);
        await writeFile(join(local, "tofu.rc"), await mirrorConfig(cli, local));
        const init = await localTofu(cli, local, ["init", "-no-color"]);
        assert.is(init.code, 0, init.stdout + init.stderr);
        const localPlan = await localTofu(cli, local, ["plan", "-no-color", "-generate-config-out=generated.tf"]);
        assert.is(localPlan.code, 0, localPlan.stdout + localPlan.stderr);
        assert.is(generated, await readFile(join(local, "generated.tf"), "utf8"));
      } finally {
        await rm(local, { recursive: true, force: true });
      }
    },
    {
      runner: true,
      project: { configuration: IMPORT_CONFIGURATION, cli: cli.binary },
      // The CLI's own init installs the random provider from the mirror too.
      beforeInit: async (project: CliProject) =>
        appendFile(join(dirname(project.dir), "tofu.rc"), await mirrorConfig(cli, dirname(project.dir))),
    },
  );
}

for (const cli of CLIS) {
  if (!existsSync(cli.binary)) {
    skipTest(
      test,
      `${cli.name}: the structured-output and -generate-config-out scenarios`,
      `no ${cli.binary}: run scripts/bootstrap-tools --with-test-tools`,
    );
    continue;
  }
  renderingScenario(cli);
  for (const structured of [false, true]) importScenario(cli, structured);
}

test.run();
