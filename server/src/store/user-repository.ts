import { permissionsForRole, type Role, type ScopeKind } from "../domain/authorization.ts";
import { newId } from "../domain/ids.ts";
import type { PermissionGrant } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import { translating } from "./translate-error.ts";
import type { DbBoolean } from "./rows.ts";
import { isoForWrite } from "./values.ts";
import { announce } from "./run-events.ts";

export type { Membership, Session, User } from "../domain/records.ts";
import type { Membership, Session, User } from "../domain/records.ts";
import { rowMapper } from "./columns.ts";

interface UserRow {
  id: string;
  email: string;
  display_name: string;
  password_hash: string;
  site_admin: DbBoolean;
  created_at: string | Date;
  disabled_at: string | Date | null;
}

interface MembershipRow {
  id: string;
  organization_id: string;
  user_id: string;
  role: string;
  scope_kind: string;
  scope_id: string;
  created_at: string | Date;
}

interface SessionRow {
  id: string;
  user_id: string;
  token_hash: string;
  csrf_token_hash: string;
  created_at: string | Date;
  expires_at: string | Date;
  stepped_up_at: string | Date | null;
  revoked_at: string | Date | null;
}

/** Users, their memberships and their sessions. */
export class UserRepository extends Repository {
  /** Creates a user; an email already taken (in any case) throws CONSTRAINT_VIOLATION. */
  async createUser(input: {
    email: string;
    displayName: string;
    passwordHash: string;
    siteAdmin: boolean;
    createdAt: Date | string;
  }): Promise<User> {
    const row = toUser.write({ ...input, id: newId("user"), email: input.email.toLowerCase(), disabledAt: null });
    return translating(this.dialect, async () => {
      await this.db<UserRow>("users").insert(row);
      return toUser(row);
    });
  }

  /** The user with this email (compared case-insensitively), if any. */
  async findByEmail(email: string): Promise<User | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<UserRow>("users").where({ email: email.toLowerCase() }).first();
      return row && toUser(row);
    });
  }

  /** The user with this id, if any. */
  async getById(id: string): Promise<User | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<UserRow>("users").where({ id }).first();
      return row && toUser(row);
    });
  }

  /** Disables the user (at `at`) or enables it again (null); the user after the change, if it exists. */
  async setDisabled(userId: string, at: Date | string | null): Promise<User | undefined> {
    return translating(this.dialect, async () => {
      await this.db<UserRow>("users")
        .where({ id: userId })
        .update({ disabled_at: at === null ? null : isoForWrite(at) });
      const row = await this.db<UserRow>("users").where({ id: userId }).first();
      return row && toUser(row);
    });
  }

  /** Replaces the user's password hash. */
  async setPasswordHash(userId: string, passwordHash: string): Promise<void> {
    return translating(this.dialect, async () => {
      await this.db<UserRow>("users").where({ id: userId }).update({ password_hash: passwordHash });
    });
  }

  /** The display names of these users, by id (unknown ids are left out). */
  async displayNames(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    return translating(this.dialect, async () => {
      const rows = await this.db<UserRow>("users")
        .whereIn("id", [...new Set(ids)])
        .select("id", "display_name");
      return new Map(rows.map((row) => [row.id, row.display_name]));
    });
  }

  /** Adds a membership; the same user at the same scope twice throws CONSTRAINT_VIOLATION. */
  async addMembership(input: {
    organizationId: string;
    userId: string;
    role: Role;
    scopeKind: ScopeKind;
    scopeId: string;
    createdAt: Date | string;
  }): Promise<Membership> {
    const row = toMembership.write({ id: newId("membership"), ...input });
    return translating(this.dialect, async () => {
      await this.db<MembershipRow>("memberships").insert(row);
      return toMembership(row);
    });
  }

  /** The organization's membership with this id, if any. */
  async getMembership(organizationId: string, membershipId: string): Promise<Membership | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<MembershipRow>("memberships")
        .where({ id: membershipId, organization_id: organizationId })
        .first();
      return row && toMembership(row);
    });
  }

  /** Changes a membership's role; the membership after the change. */
  async setMembershipRole(membershipId: string, role: Role): Promise<Membership | undefined> {
    return translating(this.dialect, async () => {
      await this.db<MembershipRow>("memberships").where({ id: membershipId }).update({ role });
      const row = await this.db<MembershipRow>("memberships").where({ id: membershipId }).first();
      return row && toMembership(row);
    });
  }

  /** Removes a membership; false when there was none. */
  async removeMembership(membershipId: string): Promise<boolean> {
    return translating(
      this.dialect,
      async () => (await this.db<MembershipRow>("memberships").where({ id: membershipId }).delete()) > 0,
    );
  }

  /** Announces, with the transaction's commit, that the user's access changed (live sockets re-check now). */
  async announceAccessChange(userId: string): Promise<void> {
    return translating(this.dialect, () => announce(this.db, this.dialect, { kind: "access", userId }));
  }

  /** The user's memberships in every organization, oldest first. */
  async membershipsOf(userId: string): Promise<Membership[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<MembershipRow>("memberships")
        .where({ user_id: userId })
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return rows.map(toMembership);
    });
  }

  /** An organization's memberships, oldest first. */
  async membershipsIn(organizationId: string): Promise<Membership[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<MembershipRow>("memberships")
        .where({ organization_id: organizationId })
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return rows.map(toMembership);
    });
  }

  /** Creates a session. */
  async createSession(input: {
    userId: string;
    tokenHash: string;
    csrfTokenHash: string;
    createdAt: Date | string;
    expiresAt: Date | string;
    steppedUpAt: Date | string | null;
  }): Promise<Session> {
    const row = toSession.write({ id: newId("session"), ...input, revokedAt: null });
    return translating(this.dialect, async () => {
      await this.db<SessionRow>("sessions").insert(row);
      return toSession(row);
    });
  }

  /** The session with this cookie-secret hash, with its user, if any. */
  async findSessionByTokenHash(tokenHash: string): Promise<{ session: Session; user: User } | undefined> {
    return translating(this.dialect, async () => {
      const sessionRow = await this.db<SessionRow>("sessions").where({ token_hash: tokenHash }).first();
      if (!sessionRow) return undefined;
      const userRow = await this.db<UserRow>("users").where({ id: sessionRow.user_id }).first();
      return userRow && { session: toSession(sessionRow), user: toUser(userRow) };
    });
  }

  /** Stamps a fresh step-up on a live session. */
  async stepUp(sessionId: string, at: Date | string): Promise<void> {
    return translating(this.dialect, async () => {
      await this.db<SessionRow>("sessions")
        .where({ id: sessionId })
        .whereNull("revoked_at")
        .update({ stepped_up_at: isoForWrite(at) });
    });
  }

  /** The user's sessions that are neither signed out nor expired at `now`, oldest first. */
  async liveSessionsOf(userId: string, now: Date | string): Promise<Session[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<SessionRow>("sessions")
        .where({ user_id: userId })
        .whereNull("revoked_at")
        .where("expires_at", ">", isoForWrite(now))
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return rows.map(toSession);
    });
  }

  /** Ends every session of the user not ended yet, but `exceptSessionId`; the ids it ended. */
  async revokeSessionsOf(userId: string, at: Date | string, exceptSessionId: string | null = null): Promise<string[]> {
    return translating(this.dialect, async () => {
      const query = () => {
        const q = this.db<SessionRow>("sessions").where({ user_id: userId }).whereNull("revoked_at");
        return exceptSessionId === null ? q : q.whereNot({ id: exceptSessionId });
      };
      const ids = (await query().select("id")).map((row) => row.id);
      if (ids.length > 0)
        await query()
          .whereIn("id", ids)
          .update({ revoked_at: isoForWrite(at) });
      return ids;
    });
  }

  /** Ends a session (logout); ending it twice changes nothing. */
  async revokeSession(sessionId: string, at: Date | string): Promise<void> {
    return translating(this.dialect, async () => {
      await this.db<SessionRow>("sessions")
        .where({ id: sessionId })
        .whereNull("revoked_at")
        .update({ revoked_at: isoForWrite(at) });
    });
  }
}

/**
 * The grants a user's memberships carry: each membership's role, expanded at its scope, naming
 * the membership's organization (so a project or workspace member can see that organization and
 * list what it may read in it, domain/authorization.ts isAllowedSomewhereIn).
 */
export function grantsOfMemberships(
  memberships: readonly Membership[],
): Array<PermissionGrant & { organizationId: string }> {
  return memberships.flatMap((membership) =>
    permissionsForRole(membership.role, membership.scopeKind).map((permission) => ({
      id: membership.id,
      principalId: membership.userId,
      scopeKind: membership.scopeKind,
      scopeId: membership.scopeId,
      permission,
      createdAt: membership.createdAt,
      organizationId: membership.organizationId,
    })),
  );
}

const toUser = rowMapper<UserRow, User>()(
  "id email display_name password_hash site_admin:boolean created_at:iso disabled_at:iso?",
);

const toMembership = rowMapper<MembershipRow, Membership>()(
  "id organization_id user_id role:as scope_kind:as scope_id created_at:iso",
);

const toSession = rowMapper<SessionRow, Session>()(
  "id user_id token_hash csrf_token_hash created_at:iso expires_at:iso stepped_up_at:iso? revoked_at:iso?",
);
