import { createConfigurationVersion, uploadUrl } from "../commands/configuration-versions.ts";
import { isAllowed, type Permission } from "../domain/authorization.ts";
import type { ConfigurationVersion } from "../domain/records.ts";
import type { RequestContext } from "../http/app.ts";
import { principalOf, workspaceTarget } from "./authorize.ts";
import { loadConfigurationVersion, loadWorkspace } from "./lookup.ts";

/** A configuration version and its signed upload URL (null when there is none to give): what both surfaces present. */
type WithUploadUrl = [configurationVersion: ConfigurationVersion, uploadUrl: string | null];

/**
 * Creates a pending configuration version in the workspace a path names, for a caller holding
 * `permission` on it, with its signed upload URL.
 */
export async function startConfigurationVersion(
  ctx: RequestContext,
  workspaceId: string,
  permission: Permission,
  input: Parameters<typeof createConfigurationVersion>[3],
): Promise<WithUploadUrl> {
  const workspace = await loadWorkspace(ctx, workspaceId, permission);
  const configurationVersion = await createConfigurationVersion(ctx.services, principalOf(ctx), workspace, input);
  return [configurationVersion, uploadUrl(ctx.services, ctx.baseUrl, configurationVersion)];
}

/**
 * The configuration version a path names (`workspace:read`), with its signed upload URL for a
 * caller holding `uploadPermission` on its workspace (the URL is a write capability); null
 * otherwise, or once uploaded.
 */
export async function readConfigurationVersion(
  ctx: RequestContext,
  id: string,
  uploadPermission: Permission,
): Promise<WithUploadUrl> {
  const configurationVersion = await loadConfigurationVersion(ctx, id, "workspace:read");
  const workspace = await ctx.services.stores.workspaces.getById(configurationVersion.workspaceId);
  const mayUpload =
    workspace !== undefined && isAllowed(principalOf(ctx), uploadPermission, workspaceTarget(workspace));
  return [configurationVersion, mayUpload ? uploadUrl(ctx.services, ctx.baseUrl, configurationVersion) : null];
}
