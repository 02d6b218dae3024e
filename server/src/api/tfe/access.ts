import type { Permission } from "../../domain/authorization.ts";
import type { Organization, Workspace } from "../../domain/records.ts";
import type { RequestContext } from "../../http/app.ts";
import { isRunPrincipal } from "../../domain/principal.ts";
import { notFound, principalOf } from "../authorize.ts";
import { loadOrganization, loadWorkspace } from "../lookup.ts";

// Lookups of the compatibility surface that also understand run tokens. A run token sees exactly
// its run's organization (for the entitlement set the CLI reads at every start) and its run's
// workspace; anything else is 404, as if it did not exist. Other callers go through the ordinary
// permission checks.

/** The organization by name, for the bootstrap calls every `tofu` command makes. */
export async function loadOrganizationForCli(ctx: RequestContext, name: string): Promise<Organization> {
  const principal = principalOf(ctx);
  if (!isRunPrincipal(principal)) return loadOrganization(ctx, name, "workspace:read");
  const organization = await ctx.services.stores.organizations.getByName(name);
  if (!organization || organization.id !== principal.organizationId) throw notFound(`Organization '${name}'`);
  return organization;
}

/** Whether a run token may see this workspace (it is its run's). */
export function runMaySee(ctx: RequestContext, workspace: Workspace): boolean {
  const principal = principalOf(ctx);
  return isRunPrincipal(principal) && principal.run.workspaceId === workspace.id;
}

/**
 * The workspace by id. A run token: its run's workspace only (the run rules of each operation
 * apply afterwards). Anyone else: `permission` on the workspace.
 */
export async function loadWorkspaceForCli(ctx: RequestContext, id: string, permission: Permission): Promise<Workspace> {
  const principal = principalOf(ctx);
  if (!isRunPrincipal(principal)) return loadWorkspace(ctx, id, permission);
  const workspace = principal.run.workspaceId === id ? await ctx.services.stores.workspaces.getById(id) : undefined;
  if (!workspace) throw notFound(`Workspace ${id}`);
  return workspace;
}

/** The organization a workspace belongs to (its name is the id of the `organization` relationship). */
export async function organizationOf(ctx: RequestContext, workspace: Workspace): Promise<Organization> {
  const organization = await ctx.services.stores.organizations.getById(workspace.organizationId);
  if (!organization) throw notFound(`Workspace ${workspace.id}`);
  return organization;
}
