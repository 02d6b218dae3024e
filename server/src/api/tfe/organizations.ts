import { isAllowed } from "../../domain/authorization.ts";
import { DomainError } from "../../domain/errors.ts";
import type { Organization } from "../../domain/records.ts";
import type { RequestContext } from "../../http/app.ts";
import { createOrganization, DEFAULT_PROJECT_NAME } from "../../commands/organizations.ts";
import { principalOf } from "../authorize.ts";
import { callerOrganizations, loadOrganizationToList } from "../lookup.ts";
import { loadOrganizationForCli } from "./access.ts";
import { presentOrganization } from "./presenters.ts";
import { paginate, refuseUnknownFilters } from "./query.ts";
import type { H, S } from "./types.ts";

/** The organization with the caller's permissions and its Default Project. */
async function organizationResource(ctx: RequestContext, organization: Organization): Promise<S["Organization"]> {
  const defaultProject = await ctx.services.stores.projects.getByName(organization.id, DEFAULT_PROJECT_NAME);
  return presentOrganization(organization, defaultProject?.id ?? null, principalOf(ctx));
}

/** The caller as a `users` resource (go-tfe's `Users.ReadCurrent`). */
async function accountOf(ctx: RequestContext): Promise<S["AccountDetailsDocument"]["data"]> {
  const principal = principalOf(ctx);
  let username = principal.id;
  let email = "";
  let serviceAccount = true;
  if (principal.kind === "user") {
    const user = principal.session?.user ?? (await ctx.services.stores.users.getById(principal.id));
    username = user?.displayName ?? principal.id;
    email = user?.email ?? "";
    serviceAccount = false;
  } else if (principal.kind === "bootstrap") {
    username = "bootstrap-administrator";
  } else if (principal.kind === "token") {
    username = (await ctx.services.stores.principals.getById(principal.id))?.name ?? principal.id;
  }
  const organizationAdmin =
    principal.organizationId !== null &&
    isAllowed(principal, "org:admin", { organizationId: principal.organizationId });
  return {
    type: "users",
    id: principal.id,
    attributes: {
      username,
      email,
      "is-service-account": serviceAccount,
      "is-site-admin": principal.siteAdmin,
      "is-admin": principal.siteAdmin || organizationAdmin,
      "avatar-url": "",
      "v2-only": true,
      "two-factor": { enabled: false, verified: false },
      permissions: {
        "can-create-organizations": principal.siteAdmin,
        "can-change-email": false,
        "can-change-username": false,
        "can-manage-user-tokens": false,
      },
    },
  };
}

/** Organizations and the caller's account (issue 26, part 2). */
export const organizationHandlers = {
  async getEntitlementSet({ path, ctx }) {
    const organization = await loadOrganizationForCli(ctx, path.organization_name);
    return {
      status: 200,
      body: {
        data: {
          type: "entitlement-sets",
          id: organization.id,
          attributes: {
            operations: true,
            "state-storage": true,
            "private-module-registry": false,
            sentinel: false,
            teams: false,
            "vcs-integrations": false,
          },
        },
      },
    };
  },

  async listOrganizations({ query, ctx }) {
    refuseUnknownFilters(query, []);
    if ("q[email]" in query) {
      throw new DomainError(
        "REQUEST_INVALID",
        "The query parameter 'q[email]' is not supported: StackShip keeps no organization email.",
        { source: { parameter: "q[email]" } },
      );
    }
    const needle = query.q?.trim().toLowerCase();
    const all = await callerOrganizations(ctx);
    const matching = needle ? all.filter((organization) => organization.name.toLowerCase().includes(needle)) : all;
    const { data, meta } = paginate(matching, query["page[number]"], query["page[size]"]);
    return {
      status: 200,
      body: { data: await Promise.all(data.map((organization) => organizationResource(ctx, organization))), meta },
    };
  },

  // site:admin is enforced by the operation binding (x-stackship-permission), as on /v1.
  async createOrganization({ body, ctx }) {
    const { organization } = await createOrganization(ctx.services, principalOf(ctx), body.data.attributes.name);
    return { status: 201, body: { data: await organizationResource(ctx, organization) } };
  },

  async getOrganization({ path, ctx }) {
    // Readable by project and workspace members too, as on /v1: the list names it for them.
    const organization = await loadOrganizationToList(ctx, path.organization_name, "workspace:read");
    return { status: 200, body: { data: await organizationResource(ctx, organization) } };
  },

  async getAccountDetails({ ctx }) {
    return { status: 200, body: { data: await accountOf(ctx) } };
  },
} satisfies Partial<H>;
