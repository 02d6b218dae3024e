import { principalOf } from "../authorize.ts";
import { createOrganization } from "../../commands/organizations.ts";
import { createProject } from "../../commands/projects.ts";
import { createOrganizationToken } from "../../commands/tokens.ts";
import { callerOrganizations, loadOrganization, loadOrganizationToList } from "../lookup.ts";
import { revokeOrganizationToken } from "../../commands/access.ts";
import { presentNewToken, presentOrganization, presentProject, presentToken } from "./presenters.ts";
import type { H } from "./types.ts";

/** Organizations, their tokens and projects. */
export const organizationHandlers = {
  async listOrganizations({ ctx }) {
    return { status: 200, body: { data: (await callerOrganizations(ctx)).map(presentOrganization) } };
  },

  // site:admin is enforced by the operation binding (x-stackship-permission); no object to check.
  async createOrganization({ body, ctx }) {
    const { organization } = await createOrganization(ctx.services, principalOf(ctx), body.data.attributes.name);
    return { status: 201, body: { data: presentOrganization(organization) } };
  },

  async getOrganization({ path, ctx }) {
    // Readable by project and workspace members too: listOrganizations names it for them.
    const organization = await loadOrganizationToList(ctx, path.organization_name, "workspace:read");
    return { status: 200, body: { data: presentOrganization(organization) } };
  },

  async createOrganizationToken({ path, body, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    const { role, description, expires_at } = body.data.attributes;
    const { token, secret } = await createOrganizationToken(ctx.services, principalOf(ctx), organization, {
      role,
      description: description ?? null,
      expiresAt: expires_at ?? null,
    });
    return { status: 201, body: presentNewToken(token, secret) };
  },

  async listOrganizationTokens({ path, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    const tokens = await ctx.services.stores.tokens.listByOrganization(organization.id);
    const now = ctx.services.clock();
    return { status: 200, body: { data: tokens.map((token) => presentToken(token, now)) } };
  },

  async deleteOrganizationToken({ path, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    await revokeOrganizationToken(ctx.services, principalOf(ctx), organization, path.token_id);
    return { status: 204, body: undefined };
  },

  async listProjects({ path, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "workspace:read");
    const projects = await ctx.services.stores.projects.listByOrganization(organization.id);
    return { status: 200, body: { data: projects.map(presentProject) } };
  },

  async createProject({ path, body, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    const project = await createProject(ctx.services, principalOf(ctx), organization, body.data.attributes.name);
    return { status: 201, body: { data: presentProject(project) } };
  },
} satisfies Partial<H>;
