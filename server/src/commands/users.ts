import { createHmac, randomBytes } from "node:crypto";
import type { Role, ScopeKind } from "../domain/authorization.ts";
import { DomainError } from "../domain/errors.ts";
import type { Organization } from "../domain/records.ts";
import {
  DECOY_PASSWORD_HASH,
  hashPassword,
  MAX_SESSIONS_PER_USER,
  MIN_PASSWORD_LENGTH,
  SESSION_TTL_MS,
  verifyPassword,
} from "../domain/sessions.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { inTransaction, type Membership, type Session, type Stores, type User } from "../store/index.ts";
import { attemptKeys, auditFailedAttempt, reserveAttempt, type FailedAttempt } from "./password-attempts.ts";
import { audited } from "./audited.ts";
import { sha256Hex } from "../domain/canonical-json.ts";

/** The stored form of a session or CSRF secret (256-bit random, so a plain SHA-256 suffices). */
export function hashSessionSecret(secret: string): string {
  return sha256Hex(secret);
}

/**
 * A session's CSRF token: an HMAC of its cookie secret, so the dashboard can fetch it again
 * (GET /v1/auth/sessions/current) while only its hash is stored.
 */
export function csrfTokenFor(services: Services, sessionSecret: string): string {
  return createHmac("sha256", services.keys.csrf).update(sessionSecret).digest("base64url");
}

/** Creates a user with a password, audited. */
export async function createUser(
  services: Services,
  actor: AuthenticatedPrincipal | null,
  input: { email: string; displayName: string | null; password: string; siteAdmin: boolean },
): Promise<User> {
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new DomainError("DOCUMENT_INVALID", `A password needs at least ${MIN_PASSWORD_LENGTH} characters.`, {
      source: { pointer: "/data/attributes/password" },
    });
  }
  const passwordHash = await hashPassword(input.password);
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const user = await stores.users.createUser({
      email: input.email,
      displayName: input.displayName ?? input.email.split("@")[0],
      passwordHash,
      siteAdmin: input.siteAdmin,
      createdAt: now,
    });
    await stores.audit.recordAction(
      { organizationId: null, actorId: actor?.id ?? user.id, createdAt: now },
      "user.created",
      ["users", user.id],
      { site_admin: user.siteAdmin },
    );
    return user;
  });
}

/**
 * STACKSHIP_BOOTSTRAP_ADMIN_EMAIL / _PASSWORD: the first deployment administrator, created on
 * start when no user has that email yet (an existing user, and their password, are left alone).
 */
export async function ensureBootstrapAdmin(
  services: Services,
  email: string,
  password: string,
): Promise<{ created: boolean; user: User }> {
  const existing = await services.stores.users.findByEmail(email);
  if (existing) return { created: false, user: existing };
  try {
    return {
      created: true,
      user: await createUser(services, null, { email, displayName: "Administrator", password, siteAdmin: true }),
    };
  } catch (error) {
    // Another process started at the same moment and created it first.
    const raced =
      error instanceof DomainError && error.code === "USER_EMAIL_TAKEN"
        ? await services.stores.users.findByEmail(email)
        : undefined;
    if (raced) return { created: false, user: raced };
    throw error;
  }
}

/**
 * Adds an existing user (by email) to the organization with a role, at organization scope or at
 * one of its projects or workspaces. A scope outside the organization is refused as if missing.
 */
export async function addMembership(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
  input: { email: string; role: Role; projectId?: string; workspaceId?: string },
): Promise<{ membership: Membership; user: User }> {
  if (input.projectId && input.workspaceId) {
    throw new DomainError("MEMBERSHIP_SCOPE_INVALID", "Give project_id or workspace_id, not both.", {
      source: { pointer: "/data/attributes/workspace_id" },
    });
  }
  const user = await services.stores.users.findByEmail(input.email);
  if (!user)
    throw new DomainError(
      "MEMBERSHIP_USER_UNKNOWN",
      "No user has this email; a deployment administrator creates users with POST /v1/users.",
      {
        source: { pointer: "/data/attributes/email" },
      },
    );
  let scope: { kind: ScopeKind; id: string } = { kind: "organization", id: organization.id };
  if (input.projectId) {
    const project = await services.stores.projects.getById(input.projectId);
    if (!project || project.organizationId !== organization.id) {
      throw new DomainError(
        "MEMBERSHIP_SCOPE_INVALID",
        `Project ${input.projectId} is not in organization '${organization.name}'.`,
        {
          source: { pointer: "/data/attributes/project_id" },
        },
      );
    }
    scope = { kind: "project", id: project.id };
  }
  if (input.workspaceId) {
    const workspace = await services.stores.workspaces.getById(input.workspaceId);
    if (!workspace || workspace.organizationId !== organization.id) {
      throw new DomainError(
        "MEMBERSHIP_SCOPE_INVALID",
        `Workspace ${input.workspaceId} is not in organization '${organization.name}'.`,
        {
          source: { pointer: "/data/attributes/workspace_id" },
        },
      );
    }
    scope = { kind: "workspace", id: workspace.id };
  }
  return audited(services, { organizationId: organization.id, actorId: actor.id }, async (stores, record, now) => {
    const membership = await stores.users.addMembership({
      organizationId: organization.id,
      userId: user.id,
      role: input.role,
      scopeKind: scope.kind,
      scopeId: scope.id,
      createdAt: now,
    });
    await record("membership.created", ["memberships", membership.id], {
      user_id: user.id,
      role: input.role,
      scope_kind: scope.kind,
      scope_id: scope.id,
    });
    return { membership, user };
  });
}

/** A new session and the two secrets only its holder learns: the cookie value and the CSRF token. */
export interface NewSession {
  session: Session;
  user: User;
  secret: string;
  csrfToken: string;
}

/** A new session's cookie secret and CSRF token (only their hashes are stored). */
export function newSessionSecrets(services: Services): { secret: string; csrfToken: string } {
  const secret = `sss.${randomBytes(32).toString("base64url")}`;
  return { secret, csrfToken: csrfTokenFor(services, secret) };
}

/** Stores a signed-in (and stepped-up) session for the user, audited, in the caller's transaction. */
export async function openSession(
  stores: Stores,
  user: User,
  secrets: { secret: string; csrfToken: string },
  now: Date,
): Promise<Session> {
  const created = await stores.users.createSession({
    userId: user.id,
    tokenHash: hashSessionSecret(secrets.secret),
    csrfTokenHash: hashSessionSecret(secrets.csrfToken),
    createdAt: now,
    expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
    steppedUpAt: now,
  });
  await stores.audit.record({
    organizationId: null,
    actorId: user.id,
    action: "session.created",
    targetType: "sessions",
    targetId: created.id,
    createdAt: now,
  });
  return created;
}

const CREDENTIALS_INVALID = "The email or the password is wrong.";

/** Where a password attempt comes from, for throttling and the audit trail. */
export interface AttemptOrigin {
  clientAddress: string;
  /** The session cookie the request carried, if any: a successful sign-in revokes it. */
  presentedSessionSecret?: string | null;
}

/**
 * Signs in: the attempt is throttled per account and per client address (429 AUTH_THROTTLED),
 * then the password is checked (an unknown email costs the same scrypt work against a decoy hash
 * and gets the same answer, audited the same way). Success clears the account's failures, revokes
 * a session cookie presented with the request (rotation: a sign-in always starts a new session),
 * and creates the session, audited. Signing in counts as a step-up.
 */
export async function signIn(
  services: Services,
  email: string,
  password: string,
  origin: AttemptOrigin,
): Promise<NewSession> {
  const keys = attemptKeys(email, origin.clientAddress);
  const user = await services.stores.users.findByEmail(email);
  const failed = (refusal: FailedAttempt["refusal"]): FailedAttempt => ({
    action: "session.sign_in_failed",
    userId: user?.id ?? null,
    targetType: "users",
    targetId: user?.id ?? "",
    email,
    clientAddress: origin.clientAddress,
    refusal,
  });
  await reserveAttempt(services, keys, () => auditFailedAttempt(services, failed("AUTH_THROTTLED")));
  const matches = await verifyPassword(password, user?.passwordHash ?? DECOY_PASSWORD_HASH);
  // A disabled user gets exactly the answer of a wrong password (after the same work).
  if (!user || !matches || user.disabledAt !== null) {
    await auditFailedAttempt(services, failed("CREDENTIALS_INVALID"));
    throw new DomainError("CREDENTIALS_INVALID", CREDENTIALS_INVALID, {
      source: { pointer: "/data/attributes/password" },
    });
  }
  await services.stores.authThrottles.succeeded(keys);
  const { secret, csrfToken } = newSessionSecrets(services);
  const previous = origin.presentedSessionSecret
    ? await services.stores.users.findSessionByTokenHash(hashSessionSecret(origin.presentedSessionSecret))
    : undefined;
  const session = await audited(services, { organizationId: null, actorId: user.id }, async (stores, record, now) => {
    const created = await openSession(stores, user, { secret, csrfToken }, now);
    if (previous && previous.session.revokedAt === null) {
      await stores.users.revokeSession(previous.session.id, now);
      await record("session.ended", ["sessions", previous.session.id], {
        reason: "replaced_by_sign_in",
        replaced_by: created.id,
        user_id: previous.user.id,
      });
      await stores.users.announceAccessChange(previous.user.id);
    }
    // At most MAX_SESSIONS_PER_USER live sessions: the oldest beyond that end now.
    const live = await stores.users.liveSessionsOf(user.id, now);
    for (const oldest of live.slice(0, Math.max(0, live.length - MAX_SESSIONS_PER_USER))) {
      await stores.users.revokeSession(oldest.id, now);
      await record("session.ended", ["sessions", oldest.id], {
        reason: "session_limit",
        limit: MAX_SESSIONS_PER_USER,
        replaced_by: created.id,
      });
    }
    if (live.length > MAX_SESSIONS_PER_USER) await stores.users.announceAccessChange(user.id);
    return created;
  });
  return { session, user, secret, csrfToken };
}

/**
 * Re-checks the password of the session's user and stamps the session, throttled like sign-in
 * (the same account and address counts). A wrong password changes nothing but the counts and
 * the audit trail.
 */
export async function stepUp(
  services: Services,
  sessionId: string,
  user: User,
  password: string,
  origin: AttemptOrigin,
): Promise<void> {
  const keys = attemptKeys(user.email, origin.clientAddress);
  const failed = (refusal: FailedAttempt["refusal"]): FailedAttempt => ({
    action: "session.step_up_failed",
    userId: user.id,
    targetType: "sessions",
    targetId: sessionId,
    email: user.email,
    clientAddress: origin.clientAddress,
    refusal,
  });
  await reserveAttempt(services, keys, () => auditFailedAttempt(services, failed("AUTH_THROTTLED")));
  if (!(await verifyPassword(password, user.passwordHash))) {
    await auditFailedAttempt(services, failed("STEP_UP_PASSWORD_INVALID"));
    throw new DomainError("STEP_UP_PASSWORD_INVALID", "The password is wrong; the session is unchanged.", {
      source: { pointer: "/data/attributes/password" },
    });
  }
  await services.stores.authThrottles.succeeded(keys);
  const now = services.clock();
  await inTransaction(services.db, async (stores) => {
    await stores.users.stepUp(sessionId, now);
    await stores.audit.record({
      organizationId: null,
      actorId: user.id,
      action: "session.stepped_up",
      targetType: "sessions",
      targetId: sessionId,
      createdAt: now,
    });
  });
}

/** Ends the session (sign-out), audited. */
export async function signOut(services: Services, sessionId: string, userId: string): Promise<void> {
  const now = services.clock();
  await inTransaction(services.db, async (stores) => {
    await stores.users.revokeSession(sessionId, now);
    await stores.audit.record({
      organizationId: null,
      actorId: userId,
      action: "session.ended",
      targetType: "sessions",
      targetId: sessionId,
      createdAt: now,
    });
    // Its live sockets close now, not at the next heartbeat.
    await stores.users.announceAccessChange(userId);
  });
}
