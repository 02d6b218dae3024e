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

/**
 * Resolves `Authorization: Bearer <token>` to a principal: the deployment-wide bootstrap token
 * (STACKSHIP_BOOTSTRAP_TOKEN) or a stored organization token. Anything else is 401.
 */
export async function authenticate(ctx: Context, stores: Stores, bootstrapToken: string | null): Promise<AuthenticatedPrincipal> {
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
    return { id: BOOTSTRAP_PRINCIPAL_ID, siteAdmin: true, grants: [], organizationId: null, tokenId: null };
  }
  const found = await stores.tokens.findByTokenHash(hash);
  if (!found) throw new DomainError("UNAUTHENTICATED", "The API token is unknown or has been revoked.", { source: { header: "Authorization" } });
  return {
    id: found.principal.id,
    siteAdmin: false,
    grants: found.grants,
    organizationId: found.principal.organizationId,
    tokenId: found.token.id,
  };
}
