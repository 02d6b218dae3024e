import { SANDBOX_API_URL } from "./api-channel.ts";
import { SANDBOX_TOOLS_DIR, SANDBOX_WORK_DIR } from "./sandbox.ts";

/** The hostname tofu inside the sandbox knows StackShip by (mapped by the CLI config's host block). */
export const SANDBOX_STACKSHIP_HOSTNAME = "stackship.internal";

/** The override file name; `zzzz` sorts it after the configuration's own override files. */
export const CLOUD_OVERRIDE_FILE = "zzzz_stackship_override.tf";

function hclString(value: string): string {
  // JSON string escapes are valid HCL; `${` and `%{` would start a template, so they are doubled.
  return JSON.stringify(value).replace(/\$\{/g, "$${").replace(/%\{/g, "%%{");
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

/** The script a phase runs inside the sandbox (POSIX sh; every step's output is the phase log). */
export function phaseScript(options: { phase: "plan" | "apply"; workingDirectory: string; speculative: boolean }): string {
  const dir = options.workingDirectory.replace(/^\/+|\/+$/g, "");
  const cd = dir ? `cd ${shellQuote(dir)}` : ":";
  const common = [
    "set -eu",
    "umask 077",
    `mkdir -p ${SANDBOX_WORK_DIR}/cfg`,
    `tar -xzf ${SANDBOX_WORK_DIR}/config.tar.gz -C ${SANDBOX_WORK_DIR}/cfg --no-same-owner --no-same-permissions`,
    `cd ${SANDBOX_WORK_DIR}/cfg`,
    cd,
    `cp ${SANDBOX_WORK_DIR}/${CLOUD_OVERRIDE_FILE} ./${CLOUD_OVERRIDE_FILE}`,
    `cp ${SANDBOX_WORK_DIR}/stackship.auto.tfvars ./zzzz_stackship.auto.tfvars`,
  ];
  if (options.phase === "plan") {
    return [
      ...common,
      "tofu init -input=false -no-color",
      `tofu plan -input=false -no-color ${options.speculative ? "-lock=false " : ""}-out=${SANDBOX_WORK_DIR}/plan.tfplan`,
      `tofu show -json ${SANDBOX_WORK_DIR}/plan.tfplan > ${SANDBOX_WORK_DIR}/plan.json`,
      `if [ -f .terraform.lock.hcl ]; then cp .terraform.lock.hcl ${SANDBOX_WORK_DIR}/lock.hcl; fi`,
      `if [ -f .terraform/modules/modules.json ]; then cp .terraform/modules/modules.json ${SANDBOX_WORK_DIR}/modules.json; fi`,
    ].join("\n");
  }
  return [
    ...common,
    // The plan's own dependency lock file; -lockfile=readonly refuses any provider it does not pin.
    `if [ -f ${SANDBOX_WORK_DIR}/lock.hcl ]; then cp ${SANDBOX_WORK_DIR}/lock.hcl .terraform.lock.hcl; fi`,
    "tofu init -input=false -no-color -lockfile=readonly",
    `tofu apply -input=false -no-color ${SANDBOX_WORK_DIR}/plan.tfplan`,
  ].join("\n");
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

