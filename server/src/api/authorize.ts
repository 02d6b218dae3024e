import { isAllowed, type AuthorizationTarget, type Permission } from "../domain/authorization.ts";
import { DomainError } from "../domain/errors.ts";
import type { RequestContext } from "../http/app.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Run, Workspace } from "../domain/records.ts";

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

/** A workspace's authorization target: its organization, its project and itself. */
export function workspaceTarget(workspace: Workspace): AuthorizationTarget {
  return { organizationId: workspace.organizationId, projectId: workspace.projectId, workspaceId: workspace.id };
}

/** A run's authorization target: the organization, project and workspace it belongs to. */
export function runTarget(run: Pick<Run, "organizationId" | "projectId" | "workspaceId">): AuthorizationTarget {
  return { organizationId: run.organizationId, projectId: run.projectId, workspaceId: run.workspaceId };
}

/**
 * `found` once the caller holds `permission` on `target` (its boundary); a missing object, or a
 * missing target (the workspace it belongs to), is 404 exactly like a hidden one.
 */
export function authorizeFound<T extends object>(
  ctx: RequestContext,
  permission: Permission,
  found: T | undefined,
  target: AuthorizationTarget | undefined,
  what: string,
): T {
  if (!found || !target) throw notFound(what);
  authorize(ctx, permission, target, what);
  return found;
}
