import type { RequestContext } from "../../http/app.ts";
import { authorize, notFound, principalOf, workspaceTarget } from "../authorize.ts";
import { createVariable, updateVariable } from "../../commands/variables.ts";
import { variableDeletionHandler } from "../variables.ts";
import { createWorkspace, setStructuredRunOutput, updateWorkspaceSettings } from "../../commands/workspaces.ts";
import {
  loadOrganization,
  loadOrganizationToList,
  loadProjectForNewWorkspace,
  loadVariable,
  loadWorkspace,
  refuseOtherId,
} from "../lookup.ts";
import { isAllowed } from "../../domain/authorization.ts";
import { decodeWorkspaceCursor, encodeWorkspaceCursor } from "../../domain/workspace-cursor.ts";
import type { Workspace } from "../../domain/records.ts";
import { presentVariable, presentWorkspace } from "./presenters.ts";
import { setPlanRequiresCredential } from "../../commands/federation-profiles.ts";
import { actorOf } from "./workload-identity.ts";
import type { H } from "./types.ts";

/** How many published state versions the state summary lists (then `truncated`). */
export const STATE_SUMMARY_LIMIT = 100;

/** Workspaces and their variables. */
export const workspaceHandlers = {
  async createWorkspace({ path, body, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "workspace:read");
    const project = await loadProjectForNewWorkspace(ctx, organization, body.data.relationships?.project?.data.id);
    const a = body.data.attributes;
    const workspace = await createWorkspace(ctx.services, principalOf(ctx), organization, project, {
      name: a.name,
      description: a.description,
      trackedBranch: a.tracked_branch,
      workingDirectory: a.working_directory,
      opentofuVersion: a.opentofu_version,
      executionRegion: a.execution_region,
      approvalTtlSeconds: a.approval_ttl_seconds,
      planRequiresCredential: a.plan_requires_credential,
      structuredRunOutputEnabled: a.structured_run_output_enabled,
    });
    return { status: 201, body: { data: presentWorkspace(workspace), meta: workspaceMeta(ctx, workspace) } };
  },

  async listWorkspaces({ path, query, ctx }) {
    // A project or workspace member sees the organization and, below, only its own workspaces.
    const organization = await loadOrganizationToList(ctx, path.organization_name, "workspace:read");
    const principal = principalOf(ctx);
    const after =
      query.cursor === undefined
        ? undefined
        : decodeWorkspaceCursor(query.cursor, ctx.services.keys.cursor, organization.id);
    const needle = query.name?.toLowerCase();
    const workspaces = (await ctx.services.stores.workspaces.listByOrganization(organization.id)).filter(
      (w) =>
        isAllowed(principal, "workspace:read", workspaceTarget(w)) &&
        (needle === undefined || w.name.toLowerCase().includes(needle)) &&
        (after === undefined || w.name > after),
    );
    // Pages follow code-unit order (names are unique in an organization), whatever the database's collation.
    workspaces.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (query.limit === undefined) return { status: 200, body: { data: workspaces.map(presentWorkspace) } };
    const page = workspaces.slice(0, query.limit);
    const last = page.at(-1);
    const nextCursor =
      workspaces.length > query.limit && last
        ? encodeWorkspaceCursor({ organizationId: organization.id, name: last.name }, ctx.services.keys.cursor)
        : null;
    return {
      status: 200,
      body: { data: page.map(presentWorkspace), meta: { page: { limit: query.limit, next_cursor: nextCursor } } },
    };
  },

  async getWorkspace({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:read");
    return { status: 200, body: { data: presentWorkspace(workspace), meta: workspaceMeta(ctx, workspace) } };
  },

  async updateWorkspace({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    refuseOtherId(body.data.id, workspace.id, "the workspace");
    const { name, description, working_directory: workingDirectory, project_id: projectId } = body.data.attributes;
    if (projectId !== undefined) {
      // A move changes who reaches the workspace through project-scoped roles: the organization's administrators decide it.
      authorize(ctx, "org:admin", workspaceTarget(workspace), `Workspace ${workspace.name}`);
      const project = await ctx.services.stores.projects.getById(projectId);
      if (!project || project.organizationId !== workspace.organizationId) throw notFound(`Project ${projectId}`);
    }
    let updated = workspace;
    const value = body.data.attributes.plan_requires_credential;
    if (value !== undefined) updated = await setPlanRequiresCredential(ctx.services, actorOf(ctx), workspace, value);
    const structured = body.data.attributes.structured_run_output_enabled;
    if (structured !== undefined)
      updated = await setStructuredRunOutput(ctx.services, actorOf(ctx), updated, structured);
    if (name !== undefined || description !== undefined || workingDirectory !== undefined || projectId !== undefined) {
      updated = await updateWorkspaceSettings(ctx.services, principalOf(ctx), updated, {
        name,
        description,
        workingDirectory,
        projectId,
      });
    }
    return { status: 200, body: { data: presentWorkspace(updated), meta: workspaceMeta(ctx, updated) } };
  },

  async getWorkspaceStateSummary({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:read");
    const stores = ctx.services.stores;
    // Published versions only (pending and discarded uploads never became state), newest serial first.
    const published = (await stores.stateVersions.listByWorkspace(workspace.id)).filter(
      (v) => v.status === "finalized" && v.publishedAt !== null && v.sha256 !== null,
    );
    const lock = await stores.workspaceLocks.current(workspace.id);
    return {
      status: 200,
      body: {
        data: {
          type: "workspace-state-summaries" as const,
          id: workspace.id,
          attributes: {
            current_state_version_id: published[0]?.id ?? null,
            state_versions: published.slice(0, STATE_SUMMARY_LIMIT).map((v) => ({
              id: v.id,
              serial: v.serial,
              run_id: v.runId,
              published_at: v.publishedAt!,
              digest: v.sha256!,
              size_bytes: v.sizeBytes ?? 0,
            })),
            truncated: published.length > STATE_SUMMARY_LIMIT,
            lock: lock
              ? {
                  holder_kind: lock.holder.kind,
                  holder_id: lock.holder.id,
                  reason: lock.reason,
                  locked_at: lock.lockedAt,
                }
              : null,
          },
        },
      },
    };
  },

  async listVariables({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:read");
    const variables = await ctx.services.stores.variables.listByWorkspace(workspace.id);
    return { status: 200, body: { data: variables.map(presentVariable) } };
  },

  async createVariable({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const a = body.data.attributes;
    const variable = await createVariable(ctx.services, principalOf(ctx), workspace, {
      key: a.key,
      value: a.value,
      category: a.category ?? "terraform",
      hcl: a.hcl ?? false,
      sensitive: a.sensitive ?? false,
      description: a.description,
    });
    return { status: 201, body: { data: presentVariable(variable) } };
  },

  async updateVariable({ path, body, ctx }) {
    const { workspace, variable } = await loadVariable(ctx, path, "workspace:write");
    refuseOtherId(body.data.id, variable.id, "the variable");
    const updated = await updateVariable(
      ctx.services,
      principalOf(ctx),
      workspace,
      variable,
      body.data.attributes ?? {},
    );
    return { status: 200, body: { data: presentVariable(updated) } };
  },

  ...variableDeletionHandler,
} satisfies Partial<H>;

/** What the caller may do with the workspace (the dashboard shows only those controls). */
function workspaceMeta(ctx: RequestContext, workspace: Workspace) {
  const principal = principalOf(ctx);
  return {
    permissions: {
      write: isAllowed(principal, "workspace:write", workspaceTarget(workspace)),
      verify_federation_profiles: isAllowed(principal, "org:admin", { organizationId: workspace.organizationId }),
    },
  };
}
