import { timingSafeEqual } from "node:crypto";
import type { Context } from "koa";
import { DomainError } from "../../domain/errors.ts";
import { RUN_TOKEN_SECRET_PREFIX, hashTokenSecret } from "../../domain/token-secrets.ts";
import { csrfTokenFor, hashSessionSecret } from "../../commands/users.ts";
import { CSRF_HEADER, SESSION_COOKIE } from "../../domain/sessions.ts";
import type { Services } from "../../commands/services.ts";
import { grantsOfMemberships, type Session, type Stores, type User } from "../../store/index.ts";
import { RUN_TOKEN_PERMISSIONS, type AuthenticatedPrincipal } from "../../domain/principal.ts";

/** The bootstrap administrator's fixed principal id (it has no row; audit events name it). */
export const BOOTSTRAP_PRINCIPAL_ID = "prn-bootstrap0000000";

const UNSAFE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Whether an `Origin` header names this server or an allow-listed dashboard origin. */
export function isAllowedOrigin(
  origin: string,
  ownOrigin: string,
  config: { publicUrl: string | null; allowedOrigins: readonly string[] },
): boolean {
  const allowed = [
    ownOrigin,
    ...(config.publicUrl ? [new URL(config.publicUrl).origin] : []),
    ...config.allowedOrigins,
  ];
  return allowed.includes(origin);
}

/** The dashboard session a `stackship_session` cookie value names: live, unexpired and not signed out; else 401. */
async function liveSession(services: Services, secret: string, now: Date): Promise<{ session: Session; user: User }> {
  const refuse = (detail: string) => new DomainError("UNAUTHENTICATED", detail, { source: { header: "Cookie" } });
  if (!/^sss\.[A-Za-z0-9_-]{43}$/.test(secret)) throw refuse("The session cookie is malformed; sign in again.");
  const found = await services.stores.users.findSessionByTokenHash(hashSessionSecret(secret));
  if (!found) throw refuse("The session is unknown; sign in again.");
  const { session } = found;
  if (session.revokedAt !== null) throw refuse("The session was signed out; sign in again.");
  // Disabling a user ends its sessions in the same transaction; this is the second line.
  if (found.user.disabledAt !== null) throw refuse("The session was signed out; sign in again.");
  if (Date.parse(session.expiresAt) <= now.getTime()) throw refuse("The session has expired; sign in again.");
  return found;
}

async function principalOfSession(
  services: Services,
  secret: string,
  { session, user }: { session: Session; user: User },
): Promise<AuthenticatedPrincipal> {
  return {
    kind: "user",
    id: user.id,
    siteAdmin: user.siteAdmin,
    grants: grantsOfMemberships(await services.stores.users.membershipsOf(user.id)),
    organizationId: null,
    tokenId: null,
    session: {
      id: session.id,
      steppedUpAt: session.steppedUpAt,
      createdAt: session.createdAt,
      expiresAt: session.expiresAt,
      csrfToken: csrfTokenFor(services, secret),
      user,
    },
  };
}

/**
 * The `user` principal of a session cookie value under the same rules as every cookie request
 * (live, unexpired, not signed out; 401 otherwise), for callers outside Koa such as the live
 * WebSocket upgrade. It checks no CSRF token: use it only where nothing changes.
 */
export async function sessionPrincipal(services: Services, secret: string, now: Date): Promise<AuthenticatedPrincipal> {
  return principalOfSession(services, secret, await liveSession(services, secret, now));
}

/**
 * A dashboard session from its cookie: live, unexpired and not signed out. A change (POST, PUT,
 * PATCH, DELETE) also needs the session's CSRF token in `X-CSRF-Token` and, when the browser
 * sends an `Origin`, an allowed one; SameSite=Strict is the second line, not the only one.
 */
async function authenticateSession(
  ctx: Context,
  services: Services,
  secret: string,
  now: Date,
): Promise<AuthenticatedPrincipal> {
  const found = await liveSession(services, secret, now);
  const { session } = found;
  if (UNSAFE_METHODS.has(ctx.method)) {
    const origin = ctx.get("origin");
    if (origin && !isAllowedOrigin(origin, `${ctx.protocol}://${ctx.host}`, services.config)) {
      throw new DomainError("SESSION_CSRF_INVALID", `Requests from origin ${origin} may not use this session.`, {
        source: { header: "Origin" },
      });
    }
    const token = ctx.get(CSRF_HEADER);
    const expected = Buffer.from(session.csrfTokenHash, "hex");
    const given = Buffer.from(hashSessionSecret(token), "hex");
    if (!token || expected.length !== given.length || !timingSafeEqual(expected, given)) {
      throw new DomainError(
        "SESSION_CSRF_INVALID",
        "Send the session's CSRF token (from POST /v1/auth/sessions or GET /v1/auth/sessions/current) as X-CSRF-Token.",
        {
          source: { header: "X-CSRF-Token" },
        },
      );
    }
  }
  return principalOfSession(services, secret, found);
}

const UNKNOWN_TOKEN = "The API token is unknown or has been revoked.";
const LAST_USED_GRANULARITY_MS = 60_000;

/**
 * Resolves the caller. `Authorization: Bearer <token>` names the deployment-wide bootstrap token
 * (STACKSHIP_BOOTSTRAP_TOKEN), a stored organization token, or a run token (scoped to one run's
 * phase and workspace, refused once expired or revoked). Without that header, where sessions are
 * accepted, the `stackship_session` cookie names a dashboard session. Anything else is 401.
 */
export async function authenticate(
  ctx: Context,
  services: Services,
  { sessions }: { sessions: boolean },
): Promise<AuthenticatedPrincipal> {
  const { stores } = services;
  const bootstrapToken = services.config.bootstrapToken;
  const now = services.clock();
  const header = ctx.get("authorization");
  if (!header && sessions) {
    const cookie = ctx.cookies.get(SESSION_COOKIE);
    if (cookie !== undefined) return authenticateSession(ctx, services, cookie, now);
  }
  const match = /^Bearer\s+([A-Za-z0-9._~+/=-]{16,512})\s*$/i.exec(header);
  if (!match) {
    throw new DomainError(
      "UNAUTHENTICATED",
      header
        ? "The Authorization header is not a valid bearer token."
        : "Send an API token as 'Authorization: Bearer <token>'.",
      {
        source: { header: "Authorization" },
      },
    );
  }
  const secret = match[1];
  const hash = hashTokenSecret(secret);
  if (
    bootstrapToken &&
    timingSafeEqual(Buffer.from(hash, "hex"), Buffer.from(hashTokenSecret(bootstrapToken), "hex"))
  ) {
    return {
      kind: "bootstrap",
      id: BOOTSTRAP_PRINCIPAL_ID,
      siteAdmin: true,
      grants: [],
      organizationId: null,
      tokenId: null,
    };
  }
  if (secret.startsWith(RUN_TOKEN_SECRET_PREFIX)) return authenticateRunToken(stores, hash, now);
  const found = await stores.tokens.findByTokenHash(hash);
  if (!found || found.token.revokedAt !== null)
    throw new DomainError("UNAUTHENTICATED", UNKNOWN_TOKEN, { source: { header: "Authorization" } });
  if (found.token.expiresAt !== null && Date.parse(found.token.expiresAt) <= now.getTime()) {
    throw new DomainError("UNAUTHENTICATED", "The API token has expired.", { source: { header: "Authorization" } });
  }
  // `last_used_at` in the token list (so an admin sees what to revoke), written at most once a minute per token.
  if (
    found.token.lastUsedAt === null ||
    now.getTime() - Date.parse(found.token.lastUsedAt) >= LAST_USED_GRANULARITY_MS
  ) {
    await stores.tokens.touchLastUsed(found.token.id, now);
  }
  return {
    kind: "token",
    id: found.principal.id,
    siteAdmin: false,
    grants: found.grants,
    organizationId: found.principal.organizationId,
    tokenId: found.token.id,
  };
}

/**
 * A run token acts as its run. Its only grant is `workspace:read` on the run's workspace, so the
 * v1 surface lets it read that workspace and nothing else; the compatibility state and lock
 * handlers recognise `kind: "run"` and apply the run rules (phase, lock, fence) themselves.
 */
async function authenticateRunToken(stores: Stores, hash: string, now: Date): Promise<AuthenticatedPrincipal> {
  const found = await stores.runTokens.findByTokenHash(hash);
  const refuse = (detail: string) =>
    new DomainError("UNAUTHENTICATED", detail, { source: { header: "Authorization" } });
  if (!found) throw refuse(UNKNOWN_TOKEN);
  const { token, workspaceId, organizationId } = found;
  if (token.revokedAt !== null) throw refuse("This run token has been revoked: its run's phase is over.");
  if (Date.parse(token.expiresAt) <= now.getTime()) throw refuse("This run token has expired.");
  return {
    kind: "run",
    id: token.runId,
    siteAdmin: false,
    grants: RUN_TOKEN_PERMISSIONS.map((permission) => ({
      scopeKind: "workspace" as const,
      scopeId: workspaceId,
      permission,
    })),
    organizationId,
    tokenId: token.id,
    run: { runId: token.runId, phase: token.phase, workspaceId, fence: token.fence },
  };
}
