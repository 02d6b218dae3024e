import { isAllowed, isAllowedSomewhereIn, type Permission } from "../domain/authorization.ts";
import type { ConfigurationVersion, Organization, Project, Run, Workspace } from "../domain/records.ts";
import { DEFAULT_PROJECT_NAME } from "../commands/organizations.ts";
import type { RequestContext } from "../http/app.ts";
import { authorize, notFound, principalOf } from "./authorize.ts";
import { uploadUrl } from "../commands/configuration-versions.ts";

/** Loads an organization by name and checks `permission` on it (hidden ones are 404). */
export async function loadOrganization(
  ctx: RequestContext,
  name: string,
  permission: Permission,
): Promise<Organization> {
  const organization = await ctx.services.stores.organizations.getByName(name);
  const what = `Organization '${name}'`;
  if (!organization) throw notFound(what);
  authorize(ctx, permission, { organizationId: organization.id }, what);
  return organization;
}

/**
 * Loads an organization by name for an organization-level list whose items are each checked
 * with `permission`: visible to whoever holds it on the organization or on any project or
 * workspace of it (a scoped member); 404 otherwise, exactly like a missing one.
 */
export async function loadOrganizationToList(
  ctx: RequestContext,
  name: string,
  permission: Permission,
): Promise<Organization> {
  const organization = await ctx.services.stores.organizations.getByName(name);
  const what = `Organization '${name}'`;
  if (!organization || !isAllowedSomewhereIn(principalOf(ctx), permission, organization.id)) throw notFound(what);
  return organization;
}

/** Loads a workspace by id and checks `permission` on it. */
export async function loadWorkspace(ctx: RequestContext, id: string, permission: Permission): Promise<Workspace> {
  const workspace = await ctx.services.stores.workspaces.getById(id);
  const what = `Workspace ${id}`;
  if (!workspace) throw notFound(what);
  authorize(
    ctx,
    permission,
    { organizationId: workspace.organizationId, projectId: workspace.projectId, workspaceId: workspace.id },
    what,
  );
  return workspace;
}

/** Loads a configuration version and checks `permission` on its workspace. */
export async function loadConfigurationVersion(
  ctx: RequestContext,
  id: string,
  permission: Permission,
): Promise<ConfigurationVersion> {
  const configurationVersion = await ctx.services.stores.configurationVersions.getById(id);
  const what = `Configuration version ${id}`;
  if (!configurationVersion) throw notFound(what);
  const workspace = await ctx.services.stores.workspaces.getById(configurationVersion.workspaceId);
  if (!workspace) throw notFound(what);
  authorize(
    ctx,
    permission,
    { organizationId: workspace.organizationId, projectId: workspace.projectId, workspaceId: workspace.id },
    what,
  );
  return configurationVersion;
}

/** Loads a run and checks `permission` on its workspace. */
export async function loadRun(ctx: RequestContext, id: string, permission: Permission): Promise<Run> {
  const run = await ctx.services.stores.runs.getById(id);
  const what = `Run ${id}`;
  if (!run) throw notFound(what);
  authorize(
    ctx,
    permission,
    { organizationId: run.organizationId, projectId: run.projectId, workspaceId: run.workspaceId },
    what,
  );
  return run;
}

/**
 * The project a new workspace goes into: the named one, or the organization's Default Project;
 * the caller needs `workspace:write` on it. Another organization's project reads as missing.
 */
export async function loadProjectForNewWorkspace(
  ctx: RequestContext,
  organization: Organization,
  projectId: string | undefined,
): Promise<Project> {
  const project = projectId
    ? await ctx.services.stores.projects.getById(projectId)
    : await ctx.services.stores.projects.getByName(organization.id, DEFAULT_PROJECT_NAME);
  if (!project || project.organizationId !== organization.id)
    throw notFound(`Project ${projectId ?? DEFAULT_PROJECT_NAME}`);
  authorize(
    ctx,
    "workspace:write",
    { organizationId: organization.id, projectId: project.id },
    `Project ${project.name}`,
  );
  return project;
}

/**
 * The signed upload URL of a configuration version, for a caller holding `permission` on its
 * workspace (the URL is a write capability); null otherwise, or once uploaded.
 */
export async function uploadUrlFor(
  ctx: RequestContext,
  configurationVersion: ConfigurationVersion,
  permission: Permission,
): Promise<string | null> {
  const workspace = await ctx.services.stores.workspaces.getById(configurationVersion.workspaceId);
  const mayUpload =
    workspace !== undefined &&
    isAllowed(principalOf(ctx), permission, {
      organizationId: workspace.organizationId,
      projectId: workspace.projectId,
      workspaceId: workspace.id,
    });
  return mayUpload ? uploadUrl(ctx.services, ctx.baseUrl, configurationVersion) : null;
}
