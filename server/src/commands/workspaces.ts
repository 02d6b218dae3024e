import { DomainError } from "../domain/errors.ts";
import type { Organization, Project, Workspace } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { RUN_STATUSES, isTerminalRunStatus } from "../domain/run.ts";
import { inTransaction } from "../store/index.ts";
import { auditWorkspace } from "./workspace-audit.ts";

/**
 * Resolves a requested OpenTofu version to an exact version this deployment provides: an exact
 * `x.y.z`, a `x.y` prefix (newest match) or `latest`; nothing given means the newest provided.
 */
export function resolveOpenTofuVersion(requested: string | undefined, provided: readonly string[]): string {
  const wanted = requested?.trim().replace(/^v/, "");
  if (!wanted || wanted === "latest") return provided[0];
  const match = provided.find((version) => version === wanted || version.startsWith(`${wanted}.`));
  if (match) return match;
  throw new DomainError(
    "OPENTOFU_VERSION_UNAVAILABLE",
    `OpenTofu ${requested} is not available here. Available: ${provided.join(", ")} (or 'latest').`,
    {
      source: { pointer: "/data/attributes/opentofu_version" },
    },
  );
}

/** The deployment's execution region; any other is refused. */
export function resolveExecutionRegion(requested: string | undefined, region: string): string {
  if (requested === undefined || requested === region) return region;
  throw new DomainError(
    "EXECUTION_REGION_UNAVAILABLE",
    `Execution region '${requested}' is not offered here; this deployment runs in '${region}'.`,
    {
      source: { pointer: "/data/attributes/execution_region" },
    },
  );
}

/** What a new workspace may set. */
export interface NewWorkspace {
  name: string;
  description?: string;
  trackedBranch?: string;
  workingDirectory?: string;
  opentofuVersion?: string;
  executionRegion?: string;
  approvalTtlSeconds?: number;
  /** Whether a plan needs a cloud credential from a federation profile (default false). */
  planRequiresCredential?: boolean;
  /** Structured run output (issue 29; default false until the plan and apply logs are JSON lines). */
  structuredRunOutputEnabled?: boolean;
  /** Tags (the CLI's tags strategy creates workspaces with its configured tags). */
  tags?: readonly string[];
}

/** Creates a workspace in a project, audited, in one transaction. */
export function createWorkspace(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
  project: Project,
  input: NewWorkspace,
): Promise<Workspace> {
  const opentofuVersion = resolveOpenTofuVersion(input.opentofuVersion, services.opentofuVersions);
  const executionRegion = resolveExecutionRegion(input.executionRegion, services.config.region);
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const workspace = await stores.workspaces.create({
      organizationId: organization.id,
      projectId: project.id,
      name: input.name,
      description: input.description ?? null,
      trackedBranch: input.trackedBranch,
      workingDirectory: input.workingDirectory,
      opentofuVersion,
      executionRegion,
      approvalTtlSeconds: input.approvalTtlSeconds,
      planRequiresCredential: input.planRequiresCredential,
      structuredRunOutputEnabled: input.structuredRunOutputEnabled,
      createdAt: now,
    });
    const tags = [...new Set(input.tags ?? [])].sort();
    await stores.workspaces.addTags(workspace.id, tags, now);
    await auditWorkspace(stores, workspace, actor.id, "workspace.created", now, {
      name: workspace.name,
      project_id: project.id,
      ...(tags.length > 0 ? { tags } : {}),
    });
    return workspace;
  });
}

/** Adds tags to a workspace (names already there are kept once), audited, in one transaction. */
export function addWorkspaceTags(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  names: readonly string[],
): Promise<void> {
  return changeWorkspaceTags(services, actor, workspace, names, "added");
}

/** Removes tags from a workspace (names it does not carry are ignored), audited, in one transaction. */
export function removeWorkspaceTags(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  names: readonly string[],
): Promise<void> {
  return changeWorkspaceTags(services, actor, workspace, names, "removed");
}

/** addWorkspaceTags and removeWorkspaceTags: the change, audited as `workspace.tags_<change>`. */
function changeWorkspaceTags(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  names: readonly string[],
  change: "added" | "removed",
): Promise<void> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    if (change === "added") await stores.workspaces.addTags(workspace.id, [...names], now);
    else await stores.workspaces.removeTags(workspace.id, [...names]);
    await auditWorkspace(stores, workspace, actor.id, `workspace.tags_${change}`, now, {
      tags: [...new Set(names)].sort(),
    });
  });
}

/** Settings of an existing workspace a client may change; members left out stay as they are. */
export interface WorkspaceSettingsChange {
  name?: string;
  description?: string | null;
  workingDirectory?: string;
  /** Another project of the workspace's organization (the caller checked both). */
  projectId?: string;
}

/**
 * Applies the settings that differ from the workspace's, audited as `workspace.updated` with
 * each changed member's before and after, in one transaction; nothing changes, nothing is written.
 */
export async function updateWorkspaceSettings(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  input: WorkspaceSettingsChange,
): Promise<Workspace> {
  const change: WorkspaceSettingsChange = {};
  const changed: Record<string, { from: unknown; to: unknown }> = {};
  if (input.name !== undefined && input.name !== workspace.name) {
    change.name = input.name;
    changed.name = { from: workspace.name, to: input.name };
  }
  if (input.description !== undefined && input.description !== workspace.description) {
    change.description = input.description;
    changed.description = { from: workspace.description, to: input.description };
  }
  if (input.workingDirectory !== undefined && input.workingDirectory !== workspace.workingDirectory) {
    change.workingDirectory = input.workingDirectory;
    changed.working_directory = { from: workspace.workingDirectory, to: input.workingDirectory };
  }
  if (input.projectId !== undefined && input.projectId !== workspace.projectId) {
    change.projectId = input.projectId;
    changed.project_id = { from: workspace.projectId, to: input.projectId };
  }
  if (Object.keys(changed).length === 0) return workspace;
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const updated = await stores.workspaces.updateSettings(workspace.id, change, now);
    if (!updated) throw new DomainError("NOT_FOUND", `Workspace ${workspace.id} was not found.`);
    await auditWorkspace(stores, workspace, actor.id, "workspace.updated", now, changed);
    return updated;
  });
}

/** How a workspace is deleted: `safe` also refuses while the workspace has state. */
export type WorkspaceDeletion = "safe" | "force";

/**
 * Deletes a workspace (marks it deleted: see WorkspaceRepository.markDeleted), audited as
 * `workspace.deleted` with its name and the mode, in one transaction. Both modes refuse with 409
 * while the workspace has a run that has not ended (CONSTRAINT_VIOLATION): deleting under a
 * running apply would orphan its state publication. `safe` also refuses while the workspace is
 * locked (WORKSPACE_LOCKED) or has a current state version (CONSTRAINT_VIOLATION): StackShip
 * never runs destroy plans, so a state it published may still manage resources. `force` releases
 * a lock left by a user or an ended run, with the workspace.
 */
export function deleteWorkspace(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  mode: WorkspaceDeletion,
): Promise<void> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const lock = await stores.workspaceLocks.current(workspace.id, { forUpdate: true });
    if (lock && mode === "safe") {
      const holder = `${lock.holder.kind === "run" ? "Run" : "User"} ${lock.holder.id}`;
      throw new DomainError(
        "WORKSPACE_LOCKED",
        `Workspace ${workspace.name} is locked by ${holder}; unlock it before deleting it.`,
      );
    }
    const active = await stores.runs.listByWorkspace(workspace.id, {
      limit: 1,
      statuses: RUN_STATUSES.filter((status) => !isTerminalRunStatus(status)),
    });
    if (active.runs.length > 0) {
      throw new DomainError(
        "CONSTRAINT_VIOLATION",
        `Workspace ${workspace.name} has run ${active.runs[0].id} in progress (${active.runs[0].status}); cancel or finish it before deleting the workspace.`,
      );
    }
    if (mode === "safe" && (await stores.stateVersions.current(workspace.id))) {
      throw new DomainError(
        "CONSTRAINT_VIOLATION",
        `Workspace ${workspace.name} has state that may still manage resources; StackShip does not run destroy plans, so destroy them outside StackShip and ask an organization administrator to force-delete the workspace.`,
      );
    }
    // A force delete releases a lock nobody's run needs any more (a user's, or an ended run's).
    if (lock) await stores.workspaceLocks.forceRelease(workspace.id);
    if (!(await stores.workspaces.markDeleted(workspace.id, now)))
      throw new DomainError("NOT_FOUND", `Workspace ${workspace.id} was not found.`);
    await auditWorkspace(stores, workspace, actor.id, "workspace.deleted", now, { name: workspace.name, mode });
  });
}

/**
 * Sets the workspace's structured run output (issue 29), audited as `workspace.updated`. Runs
 * created afterwards record it (`Run.structuredRunOutput`); a run already created keeps its own.
 */
export function setStructuredRunOutput(
  services: Services,
  actor: { id: string },
  workspace: Workspace,
  value: boolean,
): Promise<Workspace> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const updated = await stores.workspaces.updateStructuredRunOutput(workspace.id, value, now);
    if (!updated) throw new DomainError("NOT_FOUND", `Workspace ${workspace.id} does not exist.`);
    if (value !== workspace.structuredRunOutputEnabled) {
      await auditWorkspace(stores, workspace, actor.id, "workspace.updated", now, {
        structured_run_output_enabled: value,
      });
    }
    return updated;
  });
}
