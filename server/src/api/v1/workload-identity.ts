import type { RequestContext } from "../../http/app.ts";
import { authorize, notFound, principalOf, workspaceTarget } from "../authorize.ts";
import { loadWorkspace, refuseOtherId } from "../lookup.ts";
import { DomainError } from "../../domain/errors.ts";
import { isAllowed } from "../../domain/authorization.ts";
import { isVerified, type FederationProfile } from "../../domain/workload-identity.ts";
import {
  createFederationProfile,
  deleteFederationProfile,
  updateFederationProfile,
  verifyFederationProfile,
  type Actor,
} from "../../commands/federation-profiles.ts";
import { jsonWebKeySet, openIdConfiguration } from "../../commands/signing-keys.ts";
import type { H, S } from "./types.ts";

/** The caller as a profile's `verified_by` names it: a user's email, otherwise the token (or principal) id. */
export function actorOf(ctx: RequestContext): Actor {
  const principal = principalOf(ctx);
  return { id: principal.id, label: principal.session?.user.email ?? principal.tokenId ?? principal.id };
}

/** The v1 federation profile resource. `verified_at` is shown only while the verification still holds. */
export function presentFederationProfile(profile: FederationProfile): S["FederationProfile"] {
  const verified = isVerified(profile);
  return {
    type: "federation-profiles",
    id: profile.id,
    attributes: {
      name: profile.name,
      provider: profile.provider,
      audience: profile.audience,
      target: profile.target,
      phases: profile.phases,
      verified_at: verified ? profile.verifiedAt : null,
      verified_by: verified ? profile.verifiedBy : null,
      created_at: profile.createdAt,
      updated_at: profile.updatedAt,
    },
    relationships: { workspace: { data: { type: "workspaces", id: profile.workspaceId } } },
    links: { self: `/v1/workspaces/${profile.workspaceId}/federation-profiles/${profile.id}` },
  };
}

async function loadProfile(ctx: RequestContext, workspaceId: string, profileId: string): Promise<FederationProfile> {
  const profile = await ctx.services.stores.federationProfiles.getById(profileId);
  if (!profile || profile.workspaceId !== workspaceId) throw notFound(`Federation profile ${profileId}`);
  return profile;
}

/** The issuer's discovery and keys, and the workspaces' federation profiles. */
export const workloadIdentityHandlers = {
  async getOpenIdConfiguration({ ctx }) {
    return { status: 200, body: openIdConfiguration(ctx.services) };
  },

  async getJsonWebKeySet({ ctx }) {
    return { status: 200, body: await jsonWebKeySet(ctx.services) };
  },

  async listFederationProfiles({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:read");
    const profiles = await ctx.services.stores.federationProfiles.listByWorkspace(workspace.id);
    return { status: 200, body: { data: profiles.map(presentFederationProfile) } };
  },

  async createFederationProfile({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const a = body.data.attributes;
    const profile = await createFederationProfile(ctx.services, actorOf(ctx), workspace, {
      name: a.name,
      provider: a.provider,
      audience: a.audience,
      target: a.target,
      phases: a.phases,
    });
    return { status: 201, body: { data: presentFederationProfile(profile) } };
  },

  async getFederationProfile({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:read");
    return {
      status: 200,
      body: { data: presentFederationProfile(await loadProfile(ctx, workspace.id, path.profile_id)) },
    };
  },

  async updateFederationProfile({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const profile = await loadProfile(ctx, workspace.id, path.profile_id);
    refuseOtherId(body.data.id, profile.id, "the federation profile");
    const updated = await updateFederationProfile(ctx.services, actorOf(ctx), profile, body.data.attributes);
    return { status: 200, body: { data: presentFederationProfile(updated) } };
  },

  async deleteFederationProfile({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const profile = await loadProfile(ctx, workspace.id, path.profile_id);
    await deleteFederationProfile(ctx.services, actorOf(ctx), profile);
    return { status: 204, body: undefined };
  },

  async verifyFederationProfile({ path, ctx }) {
    const profile = await ctx.services.stores.federationProfiles.getById(path.profile_id);
    const workspace = profile && (await ctx.services.stores.workspaces.getById(profile.workspaceId));
    const what = `Federation profile ${path.profile_id}`;
    if (!profile || !workspace) throw notFound(what);
    // Verification vouches for the profile on the organization's behalf: organization admins
    // only (an admin role on a project or workspace is not enough); others who see it get 403.
    if (!isAllowed(principalOf(ctx), "org:admin", { organizationId: workspace.organizationId })) {
      authorize(ctx, "workspace:read", workspaceTarget(workspace), what);
      throw new DomainError("FORBIDDEN", `Only an organization admin may verify ${what}.`);
    }
    return {
      status: 200,
      body: { data: presentFederationProfile(await verifyFederationProfile(ctx.services, actorOf(ctx), profile)) },
    };
  },
} satisfies Partial<H>;
