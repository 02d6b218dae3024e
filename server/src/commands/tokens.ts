import { randomBytes } from "node:crypto";
import { permissionsForRole, type Role } from "../domain/authorization.ts";
import { DomainError } from "../domain/errors.ts";
import type { ApiToken, Organization } from "../domain/records.ts";
import { hashTokenSecret } from "../domain/token-secrets.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { inTransaction } from "../store/index.ts";

/**
 * Creates an organization API token: a principal, its role's grants at organization scope, and
 * the token row holding only the secret's hash. The secret is returned to the caller once. An
 * expiry, when given, must be in the future (422 TOKEN_EXPIRY_INVALID).
 */
export function createOrganizationToken(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
  input: { role: Role; description: string | null; expiresAt?: string | null },
): Promise<{ token: ApiToken; secret: string }> {
  const now = services.clock();
  if (input.expiresAt && Date.parse(input.expiresAt) <= now.getTime()) {
    throw new DomainError("TOKEN_EXPIRY_INVALID", `expires_at ${input.expiresAt} is not in the future.`, {
      source: { pointer: "/data/attributes/expires_at" },
    });
  }
  const secret = `ss1.${randomBytes(32).toString("base64url")}`;
  return inTransaction(services.db, async (stores) => {
    const principal = await stores.principals.createPrincipal({
      kind: "api_token",
      organizationId: organization.id,
      name: input.description ?? `${input.role} token`,
      createdAt: now,
    });
    for (const permission of permissionsForRole(input.role)) {
      await stores.grants.grant({
        principalId: principal.id,
        scopeKind: "organization",
        scopeId: organization.id,
        permission,
        createdAt: now,
      });
    }
    const token = await stores.tokens.createToken({
      principalId: principal.id,
      organizationId: organization.id,
      role: input.role,
      description: input.description,
      tokenHash: hashTokenSecret(secret),
      createdAt: now,
      expiresAt: input.expiresAt ?? null,
    });
    await stores.audit.record({
      organizationId: organization.id,
      actorId: actor.id,
      action: "token.created",
      targetType: "tokens",
      targetId: token.id,
      data: { role: input.role, expires_at: token.expiresAt },
      createdAt: now,
    });
    return { token, secret };
  });
}
