import { createHash, timingSafeEqual } from "node:crypto";
import type { Context } from "koa";
import { DomainError } from "../../domain/errors.ts";
import type { Stores } from "../../store/index.ts";
import type { AuthenticatedPrincipal } from "../principal.ts";

/** The stored form of a token secret. Secrets are 256-bit random, so a plain SHA-256 suffices. */
export function hashTokenSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** The bootstrap administrator's fixed principal id (it has no row; audit events name it). */
export const BOOTSTRAP_PRINCIPAL_ID = "prn-bootstrap0000000";

/** The prefix of run-token secrets (organization API tokens start `ss1.`). */
export const RUN_TOKEN_SECRET_PREFIX = "ssr.";

const UNKNOWN_TOKEN = "The API token is unknown or has been revoked.";

/**
 * Resolves `Authorization: Bearer <token>` to a principal: the deployment-wide bootstrap token
 * (STACKSHIP_BOOTSTRAP_TOKEN), a stored organization token, or a run token (scoped to one run's
 * phase and workspace, refused once expired or revoked). Anything else is 401.
 */
export async function authenticate(ctx: Context, stores: Stores, bootstrapToken: string | null, now: Date = new Date()): Promise<AuthenticatedPrincipal> {
  const header = ctx.get("authorization");
  const match = /^Bearer\s+([A-Za-z0-9._~+/=-]{16,512})\s*$/i.exec(header);
  if (!match) {
    throw new DomainError("UNAUTHENTICATED", header ? "The Authorization header is not a valid bearer token." : "Send an API token as 'Authorization: Bearer <token>'.", {
      source: { header: "Authorization" },
    });
  }
  const secret = match[1];
  const hash = hashTokenSecret(secret);
  if (bootstrapToken && timingSafeEqual(Buffer.from(hash, "hex"), Buffer.from(hashTokenSecret(bootstrapToken), "hex"))) {
    return { kind: "bootstrap", id: BOOTSTRAP_PRINCIPAL_ID, siteAdmin: true, grants: [], organizationId: null, tokenId: null };
  }
  if (secret.startsWith(RUN_TOKEN_SECRET_PREFIX)) return authenticateRunToken(stores, hash, now);
  const found = await stores.tokens.findByTokenHash(hash);
  if (!found) throw new DomainError("UNAUTHENTICATED", UNKNOWN_TOKEN, { source: { header: "Authorization" } });
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
  const refuse = (detail: string) => new DomainError("UNAUTHENTICATED", detail, { source: { header: "Authorization" } });
  if (!found) throw refuse(UNKNOWN_TOKEN);
  const { token, workspaceId, organizationId } = found;
  if (token.revokedAt !== null) throw refuse("This run token has been revoked: its run's phase is over.");
  if (Date.parse(token.expiresAt) <= now.getTime()) throw refuse("This run token has expired.");
  return {
    kind: "run",
    id: token.runId,
    siteAdmin: false,
    grants: [{ scopeKind: "workspace", scopeId: workspaceId, permission: "workspace:read" }],
    organizationId,
    tokenId: token.id,
    run: { runId: token.runId, phase: token.phase, workspaceId, fence: token.fence },
  };
}
