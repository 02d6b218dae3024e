import type { Role } from "../domain/authorization.ts";
import { DomainError } from "../domain/errors.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Organization } from "../domain/records.ts";
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from "../domain/sessions.ts";
import { inTransaction, type Membership, type Stores, type User } from "../store/index.ts";
import { attemptKeys, auditFailedAttempt, reserveAttempt, type FailedAttempt } from "./password-attempts.ts";
import type { Services } from "./services.ts";
import type { AttemptOrigin } from "./users.ts";
import { audited } from "./audited.ts";

// Taking access away, at once. Every change here is one transaction with its audit event and an
// access-change announcement (store/run-events.ts), so the user's live sockets re-check their
// session and authorization as soon as it commits, in every API process. HTTP requests need
// nothing more: each one reads the session, the user and the memberships afresh.

const membershipMissing = (id: string) =>
  new DomainError("NOT_FOUND", `Membership ${id} does not exist, or this token may not see it.`);

/** Changes a membership's role, audited with the old and the new one. */
export async function changeMembershipRole(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
  membershipId: string,
  role: Role,
): Promise<Membership> {
  return audited(services, { organizationId: organization.id, actorId: actor.id }, async (stores, record) => {
    const before = await stores.users.getMembership(organization.id, membershipId);
    if (!before) throw membershipMissing(membershipId);
    const after = (await stores.users.setMembershipRole(before.id, role))!;
    await record("membership.role_changed", ["memberships", before.id], {
      user_id: before.userId,
      from: before.role,
      to: role,
      scope_kind: before.scopeKind,
      scope_id: before.scopeId,
    });
    await stores.users.announceAccessChange(before.userId);
    return after;
  });
}

/** Removes a membership, audited. */
export async function removeMembership(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
  membershipId: string,
): Promise<void> {
  await audited(services, { organizationId: organization.id, actorId: actor.id }, async (stores, record) => {
    const membership = await stores.users.getMembership(organization.id, membershipId);
    if (!membership || !(await stores.users.removeMembership(membership.id))) throw membershipMissing(membershipId);
    await record("membership.removed", ["memberships", membership.id], {
      user_id: membership.userId,
      role: membership.role,
      scope_kind: membership.scopeKind,
      scope_id: membership.scopeId,
    });
    await stores.users.announceAccessChange(membership.userId);
  });
}

/**
 * Ends every session of the user (but `exceptSessionId`), audited as one event naming them.
 * Runs inside the caller's transaction.
 */
async function endSessions(
  stores: Stores,
  actorId: string,
  userId: string,
  now: Date,
  reason: string,
  exceptSessionId: string | null = null,
): Promise<void> {
  const ended = await stores.users.revokeSessionsOf(userId, now, exceptSessionId);
  await stores.audit.recordAction(
    { organizationId: null, actorId, createdAt: now },
    "user.sessions_ended",
    ["users", userId],
    { reason, session_ids: ended },
  );
  await stores.users.announceAccessChange(userId);
}

/** Signs the user out everywhere (the user itself, or a deployment administrator for anyone). */
export async function signOutEverywhere(
  services: Services,
  actor: AuthenticatedPrincipal,
  userId: string,
): Promise<void> {
  const user = await services.stores.users.getById(userId);
  if (!user) throw new DomainError("NOT_FOUND", `User ${userId} does not exist.`);
  const now = services.clock();
  await inTransaction(services.db, (stores) =>
    endSessions(
      stores,
      actor.id,
      user.id,
      now,
      actor.id === user.id ? "signed_out_everywhere" : "ended_by_administrator",
    ),
  );
}

/** Disables a user (every session ends, sign-in is refused) or enables it again; audited. */
export async function setUserDisabled(
  services: Services,
  actor: AuthenticatedPrincipal,
  userId: string,
  disabled: boolean,
): Promise<User> {
  return audited(services, { organizationId: null, actorId: actor.id }, async (stores, record, now) => {
    const before = await stores.users.getById(userId);
    if (!before) throw new DomainError("NOT_FOUND", `User ${userId} does not exist.`);
    if ((before.disabledAt !== null) === disabled) return before;
    const after = (await stores.users.setDisabled(userId, disabled ? now : null))!;
    await record(disabled ? "user.disabled" : "user.enabled", ["users", userId], {});
    if (disabled) await endSessions(stores, actor.id, userId, now, "user_disabled");
    return after;
  });
}

/**
 * Changes the session user's password: the current one is checked under the sign-in throttle (a
 * wrong one is audited and answered 403 PASSWORD_CURRENT_INVALID), then the new hash is stored,
 * the session is stamped as stepped up, and every OTHER session of the user ends.
 */
export async function changePassword(
  services: Services,
  session: { id: string; user: User },
  input: { currentPassword: string; newPassword: string },
  origin: AttemptOrigin,
): Promise<void> {
  const { user } = session;
  if (input.newPassword.length < MIN_PASSWORD_LENGTH) {
    throw new DomainError("DOCUMENT_INVALID", `A password needs at least ${MIN_PASSWORD_LENGTH} characters.`, {
      source: { pointer: "/data/attributes/new_password" },
    });
  }
  const keys = attemptKeys(user.email, origin.clientAddress);
  const failed = (refusal: FailedAttempt["refusal"]): FailedAttempt => ({
    action: "user.password_change_failed",
    userId: user.id,
    targetType: "users",
    targetId: user.id,
    email: user.email,
    clientAddress: origin.clientAddress,
    refusal,
  });
  await reserveAttempt(services, keys, () => auditFailedAttempt(services, failed("AUTH_THROTTLED")));
  if (!(await verifyPassword(input.currentPassword, user.passwordHash))) {
    await auditFailedAttempt(services, failed("PASSWORD_CURRENT_INVALID"));
    throw new DomainError("PASSWORD_CURRENT_INVALID", "The current password is wrong; nothing changed.", {
      source: { pointer: "/data/attributes/current_password" },
    });
  }
  await services.stores.authThrottles.succeeded(keys);
  if (input.newPassword.normalize("NFC") === input.currentPassword.normalize("NFC")) {
    throw new DomainError("PASSWORD_UNCHANGED", "The new password is the current one; choose another.", {
      source: { pointer: "/data/attributes/new_password" },
    });
  }
  const passwordHash = await hashPassword(input.newPassword);
  await audited(services, { organizationId: null, actorId: user.id }, async (stores, record, now) => {
    await stores.users.setPasswordHash(user.id, passwordHash);
    await stores.users.stepUp(session.id, now);
    await record("user.password_changed", ["users", user.id], { session_id: session.id });
    await endSessions(stores, user.id, user.id, now, "password_changed", session.id);
  });
}

/** Revokes an organization API token: 401 from its next request on. Audited. */
export async function revokeOrganizationToken(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
  tokenId: string,
): Promise<void> {
  const now = services.clock();
  await inTransaction(services.db, async (stores) => {
    if (!(await stores.tokens.revoke(tokenId, organization.id, now)))
      throw new DomainError("NOT_FOUND", `Token ${tokenId} does not exist, or this token may not see it.`);
    await stores.audit.record({
      organizationId: organization.id,
      actorId: actor.id,
      action: "token.revoked",
      targetType: "tokens",
      targetId: tokenId,
      createdAt: now,
    });
  });
}
