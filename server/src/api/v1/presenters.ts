import type { RecoveryEvidence } from "../../commands/recovery.ts";
import type {
  ApiToken,
  ConfigurationVersion,
  Organization,
  Project,
  Run,
  RunSource,
  Workspace,
  WorkspaceVariable,
} from "../../domain/records.ts";
import type { S } from "./types.ts";

const ref = (type: string, id: string) => ({ data: { type, id } });

/** The v1 organization resource. */
export function presentOrganization(organization: Organization): S["Organization"] {
  return {
    type: "organizations",
    id: organization.id,
    attributes: { name: organization.name, created_at: organization.createdAt },
    links: { self: `/v1/organizations/${organization.name}` },
  };
}

/** The v1 project resource. */
export function presentProject(project: Project): S["Project"] {
  return {
    type: "projects",
    id: project.id,
    attributes: { name: project.name, created_at: project.createdAt },
    relationships: { organization: ref("organizations", project.organizationId) },
  };
}

/** The v1 workspace resource. */
export function presentWorkspace(workspace: Workspace): S["Workspace"] {
  return {
    type: "workspaces",
    id: workspace.id,
    attributes: {
      name: workspace.name,
      description: workspace.description,
      tracked_branch: workspace.trackedBranch,
      working_directory: workspace.workingDirectory,
      opentofu_version: workspace.opentofuVersion,
      execution_region: workspace.executionRegion,
      approval_ttl_seconds: workspace.approvalTtlSeconds,
      plan_requires_credential: workspace.planRequiresCredential,
      structured_run_output_enabled: workspace.structuredRunOutputEnabled,
      created_at: workspace.createdAt,
      updated_at: workspace.updatedAt,
    },
    relationships: {
      organization: ref("organizations", workspace.organizationId),
      project: ref("projects", workspace.projectId),
    },
    links: { self: `/v1/workspaces/${workspace.id}` },
  };
}

/** The v1 variable resource; a sensitive value is never presented. */
export function presentVariable(variable: WorkspaceVariable): S["Variable"] {
  return {
    type: "variables",
    id: variable.id,
    attributes: {
      key: variable.key,
      value: variable.sensitive ? null : variable.value,
      category: variable.category,
      hcl: variable.hcl,
      sensitive: variable.sensitive,
      description: variable.description,
      created_at: variable.createdAt,
    },
    relationships: { workspace: ref("workspaces", variable.workspaceId) },
  };
}

/** The v1 configuration version resource; `upload_url` only while it is pending. */
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
      source: configurationVersion.source as "api" | "tfe-api" | "github",
      config_digest: configurationVersion.configDigest,
      size_bytes: configurationVersion.sizeBytes,
      upload_url: uploadUrl,
      created_at: configurationVersion.createdAt,
      uploaded_at: configurationVersion.uploadedAt,
    },
    relationships: { workspace: ref("workspaces", configurationVersion.workspaceId) },
  };
}

/** The recovery evidence of a run (commands/recovery.ts) in its wire shape. */
export function presentRecovery(evidence: RecoveryEvidence): S["RunRecovery"] {
  const { attempt, pendingStateVersion: version, lock } = evidence;
  return {
    attempt: attempt
      ? {
          id: attempt.id,
          attempt_number: attempt.attemptNumber,
          status: attempt.status,
          terminal_classification: attempt.terminalClassification,
          sandbox_id: attempt.sandboxId,
          runner_id: attempt.runnerId,
          started_at: attempt.startedAt,
          finished_at: attempt.finishedAt,
        }
      : null,
    last_log_lines: evidence.lastLogLines,
    pending_state_version: version
      ? { id: version.id, serial: version.serial, lineage: version.lineage, sha256: version.sha256 }
      : null,
    lock: lock ? { holder_kind: lock.holder.kind, holder_id: lock.holder.id, fence: lock.fence } : null,
    predecessor_state_digest: evidence.predecessorStateDigest,
  };
}

/** The v1 run resource; `recovery` is the evidence read by recoveryEvidence() (null when none). */
export function presentRun(
  run: Run,
  recovery: RecoveryEvidence | null,
  createdBy: S["Run"]["attributes"]["created_by"],
): S["Run"] {
  return {
    type: "runs",
    id: run.id,
    attributes: {
      kind: run.kind,
      status: run.status,
      message: run.message,
      source: run.source as RunSource,
      commit: run.commit,
      auto_apply: false,
      is_destroy: false,
      config_digest: run.configDigest,
      input_digest: run.inputDigest,
      opentofu_version: run.opentofuVersion,
      execution_region: run.executionRegion,
      platform: run.platform,
      status_reason: run.execution.statusReason,
      plan_status: run.execution.planStatus,
      apply_status: run.execution.applyStatus,
      has_changes: run.execution.hasChanges,
      plan_counts: run.execution.planCounts,
      plan_digest: run.execution.planDigest,
      dependency_bundle_digest: run.execution.dependencyBundleDigest,
      policy_outcome: run.execution.policyOutcome,
      policy_result_digest: run.execution.policyResultDigest,
      predecessor_state_digest: run.execution.predecessorStateDigest,
      approval_expires_at: run.execution.approvalExpiresAt,
      finished_at: run.execution.finishedAt,
      recovery: recovery && presentRecovery(recovery),
      created_by: createdBy,
      created_at: run.createdAt,
      updated_at: run.updatedAt,
    },
    relationships: {
      organization: ref("organizations", run.organizationId),
      workspace: ref("workspaces", run.workspaceId),
      configuration_version: ref("configuration-versions", run.configurationVersionId),
    },
    links: { self: `/v1/runs/${run.id}` },
  };
}

/** What every presentation of a token shows. */
function tokenAttributes(
  token: ApiToken,
): Pick<S["Token"]["attributes"], "role" | "description" | "created_at" | "expires_at"> {
  return {
    role: token.role ?? "viewer",
    description: token.description,
    created_at: token.createdAt,
    expires_at: token.expiresAt,
  };
}

/** The v1 token document; the only place a token secret is ever presented. */
export function presentNewToken(token: ApiToken, secret: string): S["TokenDocument"] {
  return {
    data: {
      type: "tokens",
      id: token.id,
      attributes: { ...tokenAttributes(token), secret },
      relationships: { organization: ref("organizations", token.organizationId ?? "") },
    },
  };
}

/** A token in the organization's token list: never its secret. */
export function presentToken(token: ApiToken, now: Date): S["Token"] {
  return {
    type: "tokens",
    id: token.id,
    attributes: {
      ...tokenAttributes(token),
      last_used_at: token.lastUsedAt,
      expired: token.expiresAt !== null && Date.parse(token.expiresAt) <= now.getTime(),
    },
  };
}
