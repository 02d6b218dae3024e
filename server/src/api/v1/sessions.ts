import { SESSION_COOKIE, SESSION_TTL_MS, stepUpFreshUntil } from "../../domain/sessions.ts";
import type { RequestContext } from "../../http/app.ts";
import type { AuthenticatedPrincipal, SessionScope } from "../../domain/principal.ts";
import type { Membership, User } from "../../store/index.ts";
import { principalOf } from "../authorize.ts";
import { addMembership, createUser, signIn, signOut, stepUp } from "../../commands/users.ts";
import {
  changeMembershipRole,
  changePassword,
  removeMembership,
  setUserDisabled,
  signOutEverywhere,
} from "../../commands/access.ts";
import { loadOrganization } from "../lookup.ts";
import { DomainError } from "../../domain/errors.ts";
import type { H, S } from "./types.ts";

/**
 * The session cookie: HttpOnly, SameSite=Strict, and Secure when this request came over TLS or the
 * public URL is https (either one: a cookie set on the HTTPS listener must never travel in clear).
 */
export function sessionCookie(ctx: RequestContext, value: string, maxAgeSeconds: number): string {
  const secure = ctx.secureConnection || ctx.baseUrl.startsWith("https:") ? "; Secure" : "";
  return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
}

/** The answer to a sign-in (here or at the end of setup): the new session, and its cookie. */
export function newSessionResponse(
  ctx: RequestContext,
  signedIn: { session: Omit<SessionScope, "user" | "csrfToken">; user: User; secret: string; csrfToken: string },
) {
  return {
    status: 201 as const,
    body: presentSession({ ...signedIn.session, csrfToken: signedIn.csrfToken }, signedIn.user),
    headers: {
      "Set-Cookie": sessionCookie(ctx, signedIn.secret, Math.floor(SESSION_TTL_MS / 1000)),
      "Cache-Control": "no-store",
    },
  };
}

export function presentSession(session: Omit<SessionScope, "user">, user: User): S["SessionDocument"] {
  return {
    data: {
      type: "sessions",
      id: session.id,
      attributes: {
        csrf_token: session.csrfToken,
        created_at: session.createdAt,
        expires_at: session.expiresAt,
        stepped_up_at: session.steppedUpAt,
        step_up_fresh_until: stepUpFreshUntil(session.steppedUpAt),
        user: { id: user.id, email: user.email, display_name: user.displayName, site_admin: user.siteAdmin },
      },
      relationships: { user: { data: { type: "users", id: user.id } } },
    },
  };
}

function presentUser(user: User): S["UserDocument"] {
  return {
    data: {
      type: "users",
      id: user.id,
      attributes: {
        email: user.email,
        display_name: user.displayName,
        site_admin: user.siteAdmin,
        disabled: user.disabledAt !== null,
        created_at: user.createdAt,
      },
    },
  };
}

function presentMembership(membership: Membership, user?: User): S["Membership"] {
  return {
    type: "memberships",
    id: membership.id,
    attributes: {
      user_id: membership.userId,
      ...(user ? { email: user.email, display_name: user.displayName } : {}),
      role: membership.role,
      scope_kind: membership.scopeKind,
      scope_id: membership.scopeId,
      created_at: membership.createdAt,
    },
  };
}

/**
 * The caller's session. The operation binding already refused anything else (x-stackship-permission
 * `session`, http/operation-access.ts), so this only narrows the type; reaching the throw is a bug.
 */
function sessionOf(principal: AuthenticatedPrincipal): SessionScope {
  if (principal.kind !== "user" || !principal.session)
    throw new Error(
      "a session operation ran without a session: the operation binding did not enforce x-stackship-permission",
    );
  return principal.session;
}

/** Sign-in, sign-out (here or everywhere), step-up, password changes, users and memberships. */
export const sessionHandlers = {
  async createSession({ body, ctx }) {
    const { email, password } = body.data.attributes;
    const signedIn = await signIn(ctx.services, email, password, {
      clientAddress: ctx.clientAddress ?? "unknown",
      presentedSessionSecret: ctx.presentedSessionCookie ?? null,
    });
    return newSessionResponse(ctx, signedIn);
  },

  async getCurrentSession({ ctx }) {
    const session = sessionOf(principalOf(ctx));
    return { status: 200, body: presentSession(session, session.user), headers: { "Cache-Control": "no-store" } };
  },

  async deleteCurrentSession({ ctx }) {
    const session = sessionOf(principalOf(ctx));
    await signOut(ctx.services, session.id, session.user.id);
    return { status: 204, body: undefined, headers: { "Set-Cookie": sessionCookie(ctx, "", 0) } };
  },

  async stepUp({ body, ctx }) {
    const session = sessionOf(principalOf(ctx));
    await stepUp(ctx.services, session.id, session.user, body.data.attributes.password, {
      clientAddress: ctx.clientAddress ?? "unknown",
    });
    const steppedUpAt = ctx.services.clock().toISOString();
    return {
      status: 200,
      body: presentSession({ ...session, steppedUpAt }, session.user),
      headers: { "Cache-Control": "no-store" },
    };
  },

  // site:admin is enforced by the operation binding (x-stackship-permission); no object to check.
  async createUser({ body, ctx }) {
    const { email, display_name, password, site_admin } = body.data.attributes;
    const user = await createUser(ctx.services, principalOf(ctx), {
      email,
      displayName: display_name ?? null,
      password,
      siteAdmin: site_admin ?? false,
    });
    return { status: 201, body: presentUser(user) };
  },

  async updateUser({ path, body, ctx }) {
    const { disabled } = body.data.attributes;
    const user =
      disabled === undefined
        ? await ctx.services.stores.users.getById(path.user_id)
        : await setUserDisabled(ctx.services, principalOf(ctx), path.user_id, disabled);
    if (!user) throw new DomainError("NOT_FOUND", `User ${path.user_id} does not exist.`);
    return { status: 200, body: presentUser(user) };
  },

  async deleteUserSessions({ path, ctx }) {
    await signOutEverywhere(ctx.services, principalOf(ctx), path.user_id);
    return { status: 204, body: undefined };
  },

  async deleteAllSessions({ ctx }) {
    const session = sessionOf(principalOf(ctx));
    await signOutEverywhere(ctx.services, principalOf(ctx), session.user.id);
    return { status: 204, body: undefined, headers: { "Set-Cookie": sessionCookie(ctx, "", 0) } };
  },

  async changePassword({ body, ctx }) {
    const session = sessionOf(principalOf(ctx));
    const { current_password, new_password } = body.data.attributes;
    await changePassword(
      ctx.services,
      session,
      { currentPassword: current_password, newPassword: new_password },
      { clientAddress: ctx.clientAddress ?? "unknown" },
    );
    const steppedUpAt = ctx.services.clock().toISOString();
    return {
      status: 200,
      body: presentSession({ ...session, steppedUpAt }, session.user),
      headers: { "Cache-Control": "no-store" },
    };
  },

  async listMemberships({ path, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    const memberships = await ctx.services.stores.users.membershipsIn(organization.id);
    const users = new Map<string, User>();
    for (const id of new Set(memberships.map((m) => m.userId))) {
      const user = await ctx.services.stores.users.getById(id);
      if (user) users.set(id, user);
    }
    return { status: 200, body: { data: memberships.map((m) => presentMembership(m, users.get(m.userId))) } };
  },

  async createMembership({ path, body, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    const { email, role, project_id, workspace_id } = body.data.attributes;
    const { membership, user } = await addMembership(ctx.services, principalOf(ctx), organization, {
      email,
      role,
      projectId: project_id,
      workspaceId: workspace_id,
    });
    return { status: 201, body: { data: presentMembership(membership, user) } };
  },

  async updateMembership({ path, body, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    const membership = await changeMembershipRole(
      ctx.services,
      principalOf(ctx),
      organization,
      path.membership_id,
      body.data.attributes.role,
    );
    return {
      status: 200,
      body: { data: presentMembership(membership, await ctx.services.stores.users.getById(membership.userId)) },
    };
  },

  async deleteMembership({ path, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    await removeMembership(ctx.services, principalOf(ctx), organization, path.membership_id);
    return { status: 204, body: undefined };
  },
} satisfies Partial<H>;
