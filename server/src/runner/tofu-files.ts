import path from "node:path";
import { fileURLToPath } from "node:url";
import { SANDBOX_API_URL } from "./api-channel.ts";
import { SANDBOX_TOOLS_DIR, SANDBOX_WORK_DIR, type ReadOnlyBind } from "./sandbox.ts";
import type { EvidenceRequest } from "./plan-evidence.ts";
import { shellQuote } from "./shell.ts";

/** Where the plan-diff builder is mounted read-only inside the sandbox (the server package's layout below it). */
export const SANDBOX_PLAN_DIFF_DIR = "/opt/stackship/plan-diff";
const PLAN_DIFF_BUILDER = "src/domain/plan-diff/plan-diff.mjs";
/**
 * The modules the builder imports (redaction by value and the value matcher it imports, redaction
 * by mask, safe JSON member access; nothing else), and the redacted plan's builder beside it,
 * which the launcher loads with it (it imports only the redaction modules).
 */
const PLAN_DIFF_IMPORTS = [
  "src/domain/redaction/sensitive-values.mjs",
  "src/domain/redaction/value-matcher.mjs",
  "src/domain/redaction/plain-json.mjs",
  "src/domain/plan-diff/redact-change.mjs",
  "src/domain/plan-diff/redacted-plan.mjs",
];
/** The builder's path inside the sandbox, which the launcher loads (`SandboxShape.planDiffBuilder`). */
export const SANDBOX_PLAN_DIFF_BUILDER = `${SANDBOX_PLAN_DIFF_DIR}/${PLAN_DIFF_BUILDER}`;

/**
 * The read-only mounts of the dependency-free plan-diff builder (and the modules it imports),
 * the file the `stackship-plan-diff` command imports on the host: the plan sandbox's launcher runs it.
 */
export function planDiffBinds(): ReadOnlyBind[] {
  const server = new URL("../../", import.meta.url);
  return [PLAN_DIFF_BUILDER, ...PLAN_DIFF_IMPORTS].map((file) => ({
    source: fileURLToPath(new URL(file, server)),
    target: `${SANDBOX_PLAN_DIFF_DIR}/${file}`,
  }));
}

/**
 * The plan's evidence, derived by the plan sandbox's launcher once the plan script (init, plan)
 * succeeded and every other process of the sandbox is gone (plan-evidence.ts): the saved plan,
 * `tofu show -json` of it, the redacted plan changes of that JSON (a failure only leaves that
 * artifact out and says so in the log; the message never quotes the plan), and the dependency
 * lock file and module manifest, all sent over its control channel.
 */
export function planEvidenceRequest(
  runId: string,
  secretEnv: readonly string[],
  workingDirectory: string,
  structuredRunOutput = false,
): EvidenceRequest {
  const dir = path.posix.join(CONFIG_DIR, relativeWorkingDirectory(workingDirectory));
  const plan = `${SANDBOX_WORK_DIR}/plan.tfplan`;
  return {
    plan,
    show: ["tofu", "show", "-json", "-no-color", plan],
    cwd: dir,
    planDiff: { runId, secretEnv },
    // The CLI's redacted plan: always with structured output, else only for imports (-generate-config-out).
    redactedPlan: { schemas: ["tofu", "providers", "schema", "-json"], always: structuredRunOutput, secretEnv },
    // With structured output the plan's log is `-json` lines: tofu's own rendering of the plan goes in its human form.
    ...(structuredRunOutput ? { humanShow: ["tofu", "show", "-no-color", plan] } : {}),
    files: [
      { name: "lock.hcl", from: `${dir}/.terraform.lock.hcl` },
      { name: "modules.json", from: `${SANDBOX_TF_DATA_DIR}/modules/modules.json` },
    ],
  };
}

/**
 * tofu's data directory (TF_DATA_DIR: installed providers, modules, backend) in every phase: in
 * /work, outside the configuration, so that a `.terraform` directory a configuration carries is
 * never used (its providers would be "previously installed" and run). Providers then come only
 * from the read-only mirror (cliConfig), checked against the lock file's hashes.
 */
export const SANDBOX_TF_DATA_DIR = `${SANDBOX_WORK_DIR}/.stackship-tf-data`;

/**
 * Where tofu takes its CLI configuration (cliConfig: providers only from the mirror, no `direct`)
 * and its data directory, with no plugin cache: set after the workspace's own environment
 * variables, which cannot change them.
 */
export const PROVIDER_SOURCE_ENV: Readonly<Record<string, string>> = {
  TF_CLI_CONFIG_FILE: `${SANDBOX_WORK_DIR}/cli.tfrc`,
  TF_DATA_DIR: SANDBOX_TF_DATA_DIR,
  TF_PLUGIN_CACHE_DIR: "",
};

/** The hostname tofu inside the sandbox knows StackShip by (mapped by the CLI config's host block). */
export const SANDBOX_STACKSHIP_HOSTNAME = "stackship.internal";

/** The override file name; `zzzz` sorts it after the configuration's own override files. */
export const CLOUD_OVERRIDE_FILE = "zzzz_stackship_override.tf";
/** The tfvars file name in the configuration directory; `zzzz` sorts it after the configuration's own. */
export const TFVARS_FILE = "zzzz_stackship.auto.tfvars";
/** Where the runner puts the files the script copies into the configuration directory, under their final names. */
export const STAGED_DIR = "stackship";

function hclString(value: string): string {
  // JSON string escapes are valid HCL; `${` and `%{` would start a template, so they are doubled.
  // Function replacements: in a replacement string `$$` is one `$`, which would undo the escape.
  return JSON.stringify(value)
    .replace(/\$\{/g, () => "$${")
    .replace(/%\{/g, () => "%%{");
}

/**
 * The CLI configuration: the StackShip API through the sandbox's channel (no discovery, no TLS),
 * the run's phase-scoped token, and providers only from the offline mirror.
 */
export function cliConfig(token: string): string {
  return `host ${hclString(SANDBOX_STACKSHIP_HOSTNAME)} {
  services = {
    "tfe.v2" = ${hclString(`${SANDBOX_API_URL}/api/v2/`)}
  }
}

credentials ${hclString(SANDBOX_STACKSHIP_HOSTNAME)} {
  token = ${hclString(token)}
}

provider_installation {
  filesystem_mirror {
    path    = ${hclString(`${SANDBOX_TOOLS_DIR}/providers`)}
    include = ["registry.opentofu.org/*/*", "registry.terraform.io/*/*"]
  }
}

disable_checkpoint = true
`;
}

/** The `cloud` block that points the configuration's state at its StackShip workspace. */
export function cloudOverride(organization: string, workspace: string): string {
  return `terraform {
  cloud {
    hostname     = ${hclString(SANDBOX_STACKSHIP_HOSTNAME)}
    organization = ${hclString(organization)}
    workspaces {
      name = ${hclString(workspace)}
    }
  }
}
`;
}

/** A terraform-category variable from the input snapshot, with its value materialized. */
export interface MaterializedVariable {
  key: string;
  value: string;
  hcl: boolean;
}

/** `*.auto.tfvars` content: HCL values verbatim, strings quoted. */
export function tfvars(variables: readonly MaterializedVariable[]): string {
  return variables.map((v) => `${v.key} = ${v.hcl ? v.value : hclString(v.value)}\n`).join("");
}

/**
 * The script a phase runs inside the sandbox (POSIX sh; every step's output is the phase log).
 * `mark` names each step on fd 3 (the launcher's step pipe, a shell builtin write, no fork) for
 * the attempt's timings; tofu itself does not get that descriptor.
 */
/** Where the phase's configuration tarball is written (relative to the work dir) and unpacked. */
export const CONFIG_ARCHIVE = "config.tar.gz";
const CONFIG_DIR = `${SANDBOX_WORK_DIR}/cfg`;
/** The staged files copied into the configuration's working directory after it is unpacked (so that they win). */
const STAGED_FILES = [
  `${SANDBOX_WORK_DIR}/${STAGED_DIR}/${CLOUD_OVERRIDE_FILE}`,
  `${SANDBOX_WORK_DIR}/${STAGED_DIR}/${TFVARS_FILE}`,
];

/** A run's or workspace's working directory as a path below the configuration root (no leading or trailing slash). */
function relativeWorkingDirectory(workingDirectory: string): string {
  return workingDirectory.replace(/^\/+|\/+$/g, "");
}

/** What the launcher unpacks before the phase script (sandbox.ts SandboxRun.unpack); the script does it itself otherwise. */
export function phaseUnpack(workingDirectory: string): {
  archive: string;
  into: string;
  workingDirectory: string;
  copy: readonly string[];
} {
  return {
    archive: `${SANDBOX_WORK_DIR}/${CONFIG_ARCHIVE}`,
    into: CONFIG_DIR,
    workingDirectory: relativeWorkingDirectory(workingDirectory),
    copy: STAGED_FILES,
  };
}

export function phaseScript(options: {
  phase: "plan" | "apply";
  workingDirectory: string;
  json?: boolean;
  generateConfig?: boolean;
}): string {
  const dir = relativeWorkingDirectory(options.workingDirectory);
  // Structured run output: the plan and apply print OpenTofu's machine-readable UI lines, which
  // the CLI renders itself (the runner keeps a human rendering beside them, phase-log.ts); init
  // stays human text, which the CLI prints as it is.
  const json = options.json ? " -json" : "";
  // The CLI's -generate-config-out: the plan writes configuration for import blocks without one
  // (into a file nobody reads: the CLI writes its own from the redacted plan's generated_config).
  const generate = options.generateConfig ? ` -generate-config-out=${SANDBOX_WORK_DIR}/generated.tf` : "";
  const cd = dir ? `cd ${shellQuote(dir)}` : ":";
  const common = [
    "set -eu",
    "umask 077",
    'mark() { echo "$1" 2>/dev/null >&3 || :; }',
    // The launcher unpacked the configuration and copied the staged files in (phaseUnpack); when
    // it could not, the script does it with tar (whose error then reaches the log).
    `if [ -d ${CONFIG_DIR} ]; then`,
    `  cd ${CONFIG_DIR}`,
    `  ${cd}`,
    "else",
    "  mark unpack",
    `  mkdir -p ${CONFIG_DIR}`,
    `  tar -xzf ${SANDBOX_WORK_DIR}/${CONFIG_ARCHIVE} -C ${CONFIG_DIR} --no-same-owner --no-same-permissions`,
    `  cd ${CONFIG_DIR}`,
    `  ${cd}`,
    // Both in one cp (a process less), after the configuration's own files so that these win.
    `  cp ${STAGED_FILES.join(" ")} ./`,
    "fi",
    // The modules the CLI's `tofu init` installed travel in its upload (.terraform/modules/, the only
    // part of .terraform an upload may carry): their manifest goes to the data directory, outside
    // the configuration (PROVIDER_SOURCE_ENV), so that init reuses them offline.
    `if [ -f .terraform/modules/modules.json ]; then mkdir -p ${SANDBOX_TF_DATA_DIR}/modules && cp .terraform/modules/modules.json ${SANDBOX_TF_DATA_DIR}/modules/; fi`,
  ];
  if (options.phase === "plan") {
    return [
      ...common,
      "mark init",
      "tofu init -input=false -no-color 3>&-",
      "mark plan",
      // The local backend's read-only state (plan-state.ts): the run's own workspace lock is the lock.
      `tofu plan${json}${generate} -input=false -no-color -lock=false -out=${SANDBOX_WORK_DIR}/plan.tfplan 3>&-`,
      // The launcher then shows the plan itself, with nothing of this script left (planEvidenceRequest).
    ].join("\n");
  }
  return [
    ...common,
    // The plan's own dependency lock file; -lockfile=readonly refuses any provider it does not pin.
    `if [ -f ${SANDBOX_WORK_DIR}/lock.hcl ]; then cp ${SANDBOX_WORK_DIR}/lock.hcl .terraform.lock.hcl; fi`,
    "mark init",
    "tofu init -input=false -no-color -lockfile=readonly 3>&-",
    "mark apply",
    `tofu apply${json} -input=false -no-color ${SANDBOX_WORK_DIR}/plan.tfplan 3>&-`,
  ].join("\n");
}
