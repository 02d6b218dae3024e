import { isAllowedSomewhereIn, type Permission } from "../domain/authorization.ts";
import type {
  ConfigurationVersion,
  Organization,
  Project,
  Run,
  Workspace,
  WorkspaceVariable,
} from "../domain/records.ts";
import { DomainError } from "../domain/errors.ts";
import { DEFAULT_PROJECT_NAME } from "../commands/organizations.ts";
import type { RequestContext } from "../http/app.ts";
import { authorize, authorizeFound, notFound, principalOf, runTarget, workspaceTarget } from "./authorize.ts";

/** Loads an organization by name and checks `permission` on it (hidden ones are 404). */
export async function loadOrganization(
  ctx: RequestContext,
  name: string,
  permission: Permission,
): Promise<Organization> {
  const organization = await ctx.services.stores.organizations.getByName(name);
  return authorizeFound(
    ctx,
    permission,
    organization,
    organization && { organizationId: organization.id },
    `Organization '${name}'`,
  );
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

/** The organizations the caller belongs to: all for a deployment administrator, a token's own for an organization token. */
export async function callerOrganizations(ctx: RequestContext): Promise<Organization[]> {
  const principal = principalOf(ctx);
  let ids: string[] | null;
  if (principal.siteAdmin) ids = null;
  else if (principal.kind === "user")
    ids = [...new Set((await ctx.services.stores.users.membershipsOf(principal.id)).map((m) => m.organizationId))];
  else ids = principal.organizationId ? [principal.organizationId] : [];
  return ctx.services.stores.organizations.list(ids);
}

/** Loads a workspace by id and checks `permission` on it. */
export async function loadWorkspace(ctx: RequestContext, id: string, permission: Permission): Promise<Workspace> {
  const workspace = await ctx.services.stores.workspaces.getById(id);
  return authorizeFound(ctx, permission, workspace, workspace && workspaceTarget(workspace), `Workspace ${id}`);
}

/** Loads a configuration version and checks `permission` on its workspace. */
export async function loadConfigurationVersion(
  ctx: RequestContext,
  id: string,
  permission: Permission,
): Promise<ConfigurationVersion> {
  const configurationVersion = await ctx.services.stores.configurationVersions.getById(id);
  const workspace =
    configurationVersion && (await ctx.services.stores.workspaces.getById(configurationVersion.workspaceId));
  const target = workspace && workspaceTarget(workspace);
  return authorizeFound(ctx, permission, configurationVersion, target, `Configuration version ${id}`);
}

/** Loads a run and checks `permission` on its workspace. */
export async function loadRun(ctx: RequestContext, id: string, permission: Permission): Promise<Run> {
  const run = await ctx.services.stores.runs.getById(id);
  return authorizeFound(ctx, permission, run, run && runTarget(run), `Run ${id}`);
}

/**
 * Loads a workspace by id (checking `permission` on it) and one of its variables; another
 * workspace's variable reads as missing.
 */
export async function loadVariable(
  ctx: RequestContext,
  path: { workspace_id: string; variable_id: string },
  permission: Permission,
): Promise<{ workspace: Workspace; variable: WorkspaceVariable }> {
  const workspace = await loadWorkspace(ctx, path.workspace_id, permission);
  const variable = await ctx.services.stores.variables.getById(path.variable_id);
  if (!variable || variable.workspaceId !== workspace.id) throw notFound(`Variable ${path.variable_id}`);
  return { workspace, variable };
}

/** Refuses a document whose `data.id`, when it has one, is not the id of the object the path names (`what`). */
export function refuseOtherId(documentId: string | undefined, id: string, what: string): void {
  if (documentId !== undefined && documentId !== id)
    throw new DomainError("DOCUMENT_INVALID", `data.id does not match ${what} in the path.`, {
      source: { pointer: "/data/id" },
    });
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
