import { isAllowed, type AuthorizationTarget, type Permission } from "../domain/authorization.ts";
import { DomainError } from "../domain/errors.ts";
import type { RequestContext } from "../http/app.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";

/** The caller of an authenticated operation. */
export function principalOf(ctx: RequestContext): AuthenticatedPrincipal {
  if (!ctx.principal)
    throw new DomainError("UNAUTHENTICATED", "Send an API token as 'Authorization: Bearer <token>', or sign in.");
  return ctx.principal;
}

/** A 404 that reads the same whether the object is missing or hidden. */
export function notFound(what: string): DomainError {
  return new DomainError("NOT_FOUND", `${what} does not exist, or this token may not see it.`);
}

/**
 * Checks `permission` on an object. A caller who cannot even read the object gets 404, exactly
 * as if it did not exist; one who can read it but lacks the permission gets 403.
 */
export function authorize(
  ctx: RequestContext,
  permission: Permission,
  target: AuthorizationTarget,
  what: string,
): void {
  const principal = principalOf(ctx);
  if (isAllowed(principal, permission, target)) return;
  const visible = isAllowed(principal, "workspace:read", target) || isAllowed(principal, "run:read", target);
  if (!visible) throw notFound(what);
  throw new DomainError("FORBIDDEN", `This token lacks the '${permission}' permission on ${what}.`);
}
