import type { Run } from "../domain/records.ts";
import { readStateBytes } from "../commands/state-versions.ts";
import type { Services } from "../commands/services.ts";
import { planFileEntry, withCloudBackend } from "./plan-backend.ts";
import { sha256Hex } from "../domain/canonical-json.ts";

/**
 * The plan phase without the `cloud` backend. The runner hands the plan sandbox the state
 * version the plan is made against (the run's recorded predecessor, whose digest approval binds
 * to) as a local state file in a read-only directory, and tofu plans with the local backend
 * (`localBackendOverride` replaces whatever backend or `cloud` block the configuration has, for
 * the plan only, with `-lock=false`: the run's own workspace lock is the lock). Nothing in that
 * directory is ever read back. The apply keeps the `cloud` block (the plan file's recorded backend
 * is set to it before the plan is stored, plan-backend.ts).
 */

/** Where the plan sandbox sees its read-only state directory. */
export const PLAN_STATE_DIR = "/opt/stackship/state";
/** The state file in it (absent for a workspace without state). */
export const PLAN_STATE_FILE = "terraform.tfstate";

/** The override that points the plan at the read-only local state file (same file name as the apply's `cloud` override). */
export function localBackendOverride(): string {
  return `terraform {
  backend "local" {
    path = "${PLAN_STATE_DIR}/${PLAN_STATE_FILE}"
  }
}
`;
}

/** The environment the plan's tofu needs besides the common one: the default workspace of the local backend, whatever the variables say. */
export const PLAN_STATE_ENV: Readonly<Record<string, string>> = { TF_WORKSPACE: "default" };

/** A state version that does not verify: the plan does not run. */
export class PlanStateError extends Error {}

/** The state a plan is made against: parsed (redaction) and its exact bytes (the sandbox's state file); none for a workspace without state. */
export interface PlanState {
  priorState: unknown;
  file: Buffer | null;
}

/**
 * Reads the run's predecessor state version and verifies it: the version the run recorded at
 * plan start, uploaded, its stored bytes matching the recorded digest (and the run's), and its
 * serial and lineage those the version records. Throws PlanStateError with the reason otherwise.
 */
export async function loadPlanState(services: Services, run: Run): Promise<PlanState> {
  const id = run.execution.predecessorStateVersionId;
  const digest = run.execution.predecessorStateDigest;
  if (id === null) {
    if (digest !== null) throw new PlanStateError("the run records a state digest without a state version");
    return { priorState: undefined, file: null };
  }
  const version = await services.stores.stateVersions.getById(id);
  if (!version || version.workspaceId !== run.workspaceId) throw new PlanStateError(`state version ${id} is missing`);
  if (version.sha256 === null || version.sha256 !== digest)
    throw new PlanStateError(`state version ${id} does not have the digest the run recorded`);
  let bytes: Buffer;
  try {
    bytes = await readStateBytes(services, version);
  } catch (error) {
    throw new PlanStateError(`state version ${id} could not be read intact (${(error as Error).message})`);
  }
  if (sha256Hex(bytes) !== digest) throw new PlanStateError(`state version ${id} does not match its recorded digest`);
  let parsed: { serial?: unknown; lineage?: unknown } | null;
  try {
    parsed = JSON.parse(bytes.toString("utf8")) as { serial?: unknown; lineage?: unknown } | null;
  } catch {
    throw new PlanStateError(`state version ${id} is not a state file`);
  }
  if (parsed?.serial !== version.serial || parsed?.lineage !== version.lineage)
    throw new PlanStateError(`state version ${id} does not have the serial and lineage it records`);
  return { priorState: parsed, file: bytes };
}

/**
 * The saved plan as the apply uses it: its recorded backend the workspace's `cloud` block
 * (plan-backend.ts). Refused unless the state the plan was made against (its `tfstate` entry,
 * the prior state tofu's apply checks against the backend's current state) has the serial and
 * lineage of the state handed over (serial 0 and no lineage for none): a configuration cannot
 * plan against a state of its own choosing.
 */
export async function planForApply(
  services: Services,
  run: Run,
  planFile: Buffer,
  handedOver: PlanState,
): Promise<Buffer> {
  const workspace = await services.stores.workspaces.getById(run.workspaceId);
  const organization = workspace && (await services.stores.organizations.getById(workspace.organizationId));
  if (!workspace || !organization) throw new Error(`run ${run.id}: its workspace is missing`);
  const expected = handedOver.priorState as { serial?: unknown; lineage?: unknown } | undefined;
  let prior: { serial?: unknown; lineage?: unknown } | null;
  try {
    prior = JSON.parse(planFileEntry(planFile, "tfstate").toString("utf8")) as {
      serial?: unknown;
      lineage?: unknown;
    } | null;
  } catch (error) {
    throw new Error(`the plan's prior state could not be read (${(error as Error).message})`);
  }
  if (prior?.serial !== (expected?.serial ?? 0) || prior?.lineage !== (expected?.lineage ?? "")) {
    throw new Error("the plan was not made against the workspace's current state version");
  }
  return withCloudBackend(planFile, organization.name, workspace.name);
}
