import { isAllowed, isAllowedSomewhereIn } from "../../domain/authorization.ts";
import type { ConfigurationVersion, Organization, Run, Workspace, WorkspaceVariable } from "../../domain/records.ts";
import type { RunStatus } from "../../domain/run.ts";
import { isRunPrincipal, type AuthenticatedPrincipal } from "../../domain/principal.ts";
import type { StateVersion, StateVersionOutput, WorkspaceLock } from "../../store/index.ts";
import {
  applyStatusTimestamps,
  confirmedBy,
  planStatusTimestamps,
  runStatusTimestamps,
  tfeApplyStatus,
  tfePlanStatus,
  tfeRunSource,
  tfeRunStatus,
  type RunTimeline,
} from "./run-status.ts";
import { runTarget, workspaceTarget } from "../authorize.ts";
import type { S } from "./types.ts";

const CANCELABLE = new Set<RunStatus>(["pending", "planning", "policy_checking", "applying"]);
const DISCARDABLE = new Set<RunStatus>(["awaiting_approval", "policy_soft_failed"]);

/** A run's plan and apply share its suffix, as in TFE (`run-X` → `plan-X`, `apply-X`). */
export function phaseId(runId: string, phase: "plan" | "apply"): string {
  return `${phase}-${runId.slice("run-".length)}`;
}

/**
 * The compatibility workspace: never destroyable, never auto-applying, structured output as set;
 * `locked` while anyone holds the workspace lock. A run token may lock and unlock its run's
 * workspace (re-entrantly); force-unlock is for organization administrators.
 */
export function presentWorkspace(
  workspace: Workspace,
  organizationName: string,
  principal: AuthenticatedPrincipal,
  lock: WorkspaceLock | undefined,
  tags: readonly string[],
  currentRunId: string | null = null,
): S["Workspace"] {
  const target = workspaceTarget(workspace);
  const canWrite = isAllowed(principal, "workspace:write", target);
  const canRun = isAllowed(principal, "run:create", target);
  const ownRun = isRunPrincipal(principal) && principal.run.workspaceId === workspace.id;
  return {
    type: "workspaces",
    id: workspace.id,
    attributes: {
      name: workspace.name,
      description: workspace.description,
      "execution-mode": "remote",
      "terraform-version": workspace.opentofuVersion,
      locked: lock !== undefined,
      "working-directory": workspace.workingDirectory,
      "structured-run-output-enabled": workspace.structuredRunOutputEnabled,
      "tag-names": [...tags],
      "vcs-repo": null,
      "auto-apply": false,
      "allow-destroy-plan": false,
      // The settings StackShip fixes, as it behaves (api/tfe/workspaces.ts FIXED_SETTINGS).
      "queue-all-runs": true,
      "auto-apply-run-trigger": false,
      "file-triggers-enabled": true,
      "speculative-enabled": true,
      "trigger-prefixes": [],
      "trigger-patterns": [],
      "global-remote-state": false,
      "assessments-enabled": false,
      operations: true,
      "created-at": workspace.createdAt,
      "updated-at": workspace.updatedAt,
      permissions: {
        "can-queue-run": canRun,
        "can-queue-apply": canRun,
        "can-queue-destroy": false,
        "can-update": canWrite,
        "can-destroy": false,
        "can-force-delete": isAllowed(principal, "org:admin", target),
        "can-lock": canWrite || ownRun,
        "can-unlock": canWrite || ownRun,
        "can-force-unlock": isAllowed(principal, "org:admin", target),
        "can-read-state-versions": isAllowed(principal, "workspace:read", target),
      },
      actions: { "is-destroyable": false },
    },
    relationships: {
      organization: { data: { type: "organizations", id: organizationName } },
      project: { data: { type: "projects", id: workspace.projectId } },
      "current-run": { data: currentRunId ? { type: "runs", id: currentRunId } : null },
      "locked-by": { data: lock ? { type: lock.holder.kind === "run" ? "runs" : "users", id: lock.holder.id } : null },
    },
  };
}

/** A `users` resource for a principal (a user, or a token's principal, then a service account). */
export function presentUser(id: string, username: string, serviceAccount: boolean): S["User"] {
  return { type: "users", id, attributes: { username, "is-service-account": serviceAccount } };
}

/** The compatibility run document; the actions are exactly what the CLI needs to prompt, discard or cancel. */
export function presentRun(
  run: Run,
  principal: AuthenticatedPrincipal | null = null,
  timeline?: RunTimeline,
): S["Run"] {
  const target = runTarget(run);
  const may = (permission: Parameters<typeof isAllowed>[1]) =>
    principal !== null && isAllowed(principal, permission, target);
  const timestamps = runStatusTimestamps(run, timeline);
  return {
    type: "runs",
    id: run.id,
    attributes: {
      status: tfeRunStatus(run),
      "has-changes": run.execution.hasChanges ?? false,
      "is-destroy": false,
      "auto-apply": false,
      "plan-only": run.kind === "speculative",
      // StackShip always refreshes, never runs refresh-only, targeted or replacing plans, and
      // applies only plans with changes (run creation refuses the others).
      refresh: true,
      "refresh-only": false,
      "allow-empty-apply": false,
      "target-addrs": [],
      "replace-addrs": [],
      "canceled-at": timestamps["canceled-at"] ?? null,
      message: run.message,
      source: tfeRunSource(run),
      "terraform-version": run.opentofuVersion,
      "created-at": run.createdAt,
      "status-timestamps": timestamps,
      actions: {
        "is-cancelable": CANCELABLE.has(run.status),
        "is-confirmable": run.status === "awaiting_approval",
        "is-discardable": DISCARDABLE.has(run.status),
        "is-force-cancelable": false,
      },
      permissions: {
        "can-apply": may("run:approve"),
        "can-cancel": may("run:cancel"),
        "can-discard": may("run:approve"),
        "can-force-cancel": false,
        "can-override-policy": false,
      },
    },
    relationships: {
      workspace: { data: { type: "workspaces", id: run.workspaceId } },
      plan: { data: { type: "plans", id: phaseId(run.id, "plan") } },
      apply: { data: { type: "applies", id: phaseId(run.id, "apply") } },
      "configuration-version": { data: { type: "configuration-versions", id: run.configurationVersionId } },
      "created-by": { data: run.createdBy ? { type: "users", id: run.createdBy } : null },
      "confirmed-by": { data: confirmedBy(timeline) ? { type: "users", id: confirmedBy(timeline)! } : null },
      "cost-estimate": { data: null },
      "policy-checks": { data: [] },
      "task-stages": { data: [] },
    },
  };
}

/** The resource counts of a plan or apply phase (zero where there are none). */
function phaseCounts(counts: Run["execution"]["planCounts"]) {
  return {
    "resource-additions": counts?.create ?? 0,
    "resource-changes": counts?.change ?? 0,
    "resource-destructions": counts?.destroy ?? 0,
    "resource-imports": 0,
  };
}

/** A run's plan phase, with the absolute signed log URL; queued when the run was created. */
export function presentPlan(run: Run, logReadUrl: string, timeline?: RunTimeline): S["Plan"] {
  return {
    type: "plans",
    id: phaseId(run.id, "plan"),
    attributes: {
      status: tfePlanStatus(run),
      "has-changes": run.execution.hasChanges ?? false,
      "log-read-url": logReadUrl,
      ...phaseCounts(run.execution.planCounts),
      "resource-imports": run.execution.planImports ?? 0,
      // The CLI's -generate-config-out writes the configuration from json-output-redacted when this is true.
      "generated-configuration": run.execution.planGeneratedConfiguration ?? false,
      "status-timestamps": planStatusTimestamps(run, timeline),
    },
  };
}

/** A run's apply phase, with the absolute signed log URL (the counts are the approved plan's); queued when it was approved. */
export function presentApply(run: Run, logReadUrl: string, timeline?: RunTimeline): S["Apply"] {
  const counts = run.execution.applyStatus === "finished" ? run.execution.planCounts : null;
  return {
    type: "applies",
    id: phaseId(run.id, "apply"),
    attributes: {
      status: tfeApplyStatus(run),
      "log-read-url": logReadUrl,
      ...phaseCounts(counts),
      "status-timestamps": applyStatusTimestamps(run, timeline),
    },
  };
}

/** A configuration version; the upload URL only while pending and only for those who may queue runs. */
export function presentConfigurationVersion(
  configurationVersion: ConfigurationVersion,
  uploadUrl: string | null,
): S["ConfigurationVersion"] {
  return {
    type: "configuration-versions",
    id: configurationVersion.id,
    attributes: {
      status: configurationVersion.status,
      speculative: configurationVersion.speculative,
      provisional: false,
      "auto-queue-runs": false,
      source: configurationVersion.source,
      "upload-url": uploadUrl,
      error: null,
      "error-message": null,
    },
  };
}

/** The relative download path the CLI resolves against the API base (and sends its token to). */
export function stateDownloadPath(stateVersionId: string): string {
  return `/api/v2/state-versions/${stateVersionId}/download`;
}

/** A state version; the upload URLs only in the create response. */
export function presentStateVersion(
  stateVersion: StateVersion,
  uploadUrls: { state: string; json: string } | null = null,
): S["StateVersion"] {
  const attributes: S["StateVersion"]["attributes"] = {
    serial: stateVersion.serial,
    lineage: stateVersion.lineage,
    md5: stateVersion.md5,
    status: stateVersion.status,
    "created-at": stateVersion.createdAt,
    "hosted-state-download-url": stateDownloadPath(stateVersion.id),
    sha256: stateVersion.sha256,
    "size-bytes": stateVersion.sizeBytes,
    fence: stateVersion.fence,
    "uploaded-at": stateVersion.uploadedAt,
    "published-at": stateVersion.publishedAt,
  };
  if (uploadUrls) {
    attributes["hosted-state-upload-url"] = uploadUrls.state;
    attributes["hosted-json-state-upload-url"] = uploadUrls.json;
  }
  return {
    type: "state-versions",
    id: stateVersion.id,
    attributes,
    relationships: { run: { data: stateVersion.runId ? { type: "runs", id: stateVersion.runId } : null } },
  };
}

/** The id of a state version's output: the version's suffix and the output's position by name. */
export function stateVersionOutputId(stateVersionId: string, index: number): string {
  return `svo-${stateVersionId.slice("sv-".length)}-${index}`;
}

/** The state version and position an output id names, if it is well-formed. */
export function parseStateVersionOutputId(id: string): { stateVersionId: string; index: number } | undefined {
  const match = /^svo-([0-9a-z]{16})-([0-9]{1,6})$/.exec(id);
  return match ? { stateVersionId: `sv-${match[1]}`, index: Number(match[2]) } : undefined;
}

/** The kind of a cty type JSON (`"string"`, `["list","string"]` → `list`); go-tfe decodes `type` as a string. */
function typeKind(type: unknown): string {
  if (typeof type === "string") return type;
  if (Array.isArray(type) && typeof type[0] === "string") return type[0];
  return "unknown";
}

/**
 * One output of a state version; a sensitive output's value is null (it is never stored), and so
 * is every value when `showValue` is false (a caller without state:read sees names and types).
 */
export function presentStateVersionOutput(
  stateVersion: StateVersion,
  output: StateVersionOutput,
  index: number,
  showValue = true,
): S["StateVersionOutput"] {
  return {
    type: "state-version-outputs",
    id: stateVersionOutputId(stateVersion.id, index),
    attributes: {
      name: output.name,
      sensitive: output.sensitive,
      type: typeKind(output.type),
      value: output.sensitive || !showValue ? null : output.value,
      "detailed-type": output.type,
    },
  };
}

/**
 * An organization as go-tfe decodes it (its JSON:API id is its name). StackShip keeps no
 * organization email, so `email` is always empty; the permissions are the caller's own.
 */
export function presentOrganization(
  organization: Organization,
  defaultProjectId: string | null,
  principal: AuthenticatedPrincipal,
): S["Organization"] {
  const admin = isAllowed(principal, "org:admin", { organizationId: organization.id });
  return {
    type: "organizations",
    id: organization.name,
    attributes: {
      name: organization.name,
      email: "",
      "created-at": organization.createdAt,
      "external-id": organization.id,
      "default-execution-mode": "remote",
      "allow-force-delete-workspaces": false,
      "cost-estimation-enabled": false,
      permissions: {
        // StackShip serves no organization update or deletion, teams, run tasks or Sentinel.
        "can-update": false,
        "can-destroy": false,
        "can-traverse": true,
        "can-create-workspace": isAllowedSomewhereIn(principal, "workspace:write", organization.id),
        "can-create-project": admin,
        "can-create-team": false,
        "can-update-api-token": admin,
        "can-manage-run-tasks": false,
        "can-update-sentinel": false,
      },
    },
    relationships: {
      "default-project": { data: defaultProjectId ? { type: "projects", id: defaultProjectId } : null },
    },
    links: { self: `/api/v2/organizations/${encodeURIComponent(organization.name)}` },
  };
}

/** A workspace variable as go-tfe decodes it (`vars`); a sensitive value is write-only: always null. */
export function presentVariable(variable: WorkspaceVariable): S["Variable"] {
  return {
    type: "vars",
    id: variable.id,
    attributes: {
      key: variable.key,
      value: variable.sensitive ? null : variable.value,
      description: variable.description,
      category: variable.category,
      hcl: variable.hcl,
      sensitive: variable.sensitive,
      "created-at": variable.createdAt,
    },
    relationships: { configurable: { data: { type: "workspaces", id: variable.workspaceId } } },
    links: { self: `/api/v2/workspaces/${variable.workspaceId}/vars/${variable.id}` },
  };
}
