import type { OperationDescriptor } from "../../../generated/operation-table.ts";
import { recordSensitiveDownloadRefusal } from "../commands/sensitive-download-refusals.ts";
import { holdsAnywhere, isSensitivePermission, type Permission } from "../domain/authorization.ts";
import { DomainError } from "../domain/errors.ts";
import type { Services } from "../commands/services.ts";
import { isRunPrincipal, type AuthenticatedPrincipal } from "../domain/principal.ts";

/** Permissions that make an object visible: a caller holding neither anywhere can see nothing. */
const VISIBILITY: ReadonlySet<Permission> = new Set(["workspace:read", "run:read"]);

/** The sentence every token gets from the raw-plan and emergency-state downloads. */
export const SENSITIVE_DOWNLOAD_NEEDS_SESSION =
  "Raw plans and emergency state are downloaded only by a person: sign in to the dashboard with an account that holds the permission, confirm your password (POST /v1/auth/step-up), and download within 15 minutes. API tokens and run tokens cannot use these downloads.";

/** A validated path parameter as the not-found message names it (the placeholder when absent). */
function pathValue(value: unknown, name: string): string {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : name;
}

/**
 * The operation's `x-stackship-permission`, enforced before its handler runs, for `/v1` and
 * `/api/v2` alike. It looks at the caller only, never at the addressed object, so the answer is
 * the same whether that object exists or not; the handler then checks the object itself.
 *
 * - `none`, `authenticated`: nothing more to check here (the handler filters what it lists).
 * - `session`: a signed-in dashboard session, else 403 SESSION_REQUIRED.
 * - `site:admin`: a deployment administrator, else 403 FORBIDDEN.
 * - a permission: held somewhere (any scope), else 403 FORBIDDEN; for the visibility permissions
 *   (`workspace:read`, `run:read`) 404 NOT_FOUND, since to such a caller every object is hidden.
 *   A run token passes an operation marked `x-stackship-run-token` (the handler applies the run
 *   rules) and otherwise holds only its grants. The sensitive permissions
 *   (`artifact:read_sensitive`, `state:recover`) need a dashboard session first: any token
 *   (API, bootstrap, run), whatever its grants, is refused 403 STEP_UP_REQUIRED and the refusal
 *   is audited (the session's step-up age is the handler's check, after the object).
 */
export async function authorizeOperation(
  services: Services,
  op: Pick<OperationDescriptor, "operationId" | "permission" | "runToken" | "path">,
  principal: AuthenticatedPrincipal,
  path: Record<string, unknown>,
): Promise<void> {
  const requirement = op.permission;
  switch (requirement) {
    case "none":
    case "authenticated":
      return;
    case "session":
      if (principal.kind !== "user" || !principal.session) {
        throw new DomainError(
          "SESSION_REQUIRED",
          "This needs a signed-in dashboard session (POST /v1/auth/sessions), not an API token.",
        );
      }
      return;
    case "site:admin":
      if (!principal.siteAdmin) {
        throw new DomainError(
          "FORBIDDEN",
          "Only a deployment administrator (STACKSHIP_BOOTSTRAP_TOKEN, or a user created as site admin) may do this.",
        );
      }
      return;
    default: {
      const permission: Permission = requirement;
      if (op.runToken && isRunPrincipal(principal)) return;
      // First, whatever the token may otherwise do: these bytes go to people only.
      if (isSensitivePermission(permission) && principal.kind !== "user") {
        const runId = typeof path.run_id === "string" ? path.run_id : null;
        await recordSensitiveDownloadRefusal(services, principal, { operationId: op.operationId, permission, runId });
        throw new DomainError("STEP_UP_REQUIRED", SENSITIVE_DOWNLOAD_NEEDS_SESSION);
      }
      if (!holdsAnywhere(principal, permission)) {
        if (VISIBILITY.has(permission)) {
          throw new DomainError(
            "NOT_FOUND",
            `${op.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => pathValue(path[name], name))} does not exist, or this caller may not see it.`,
          );
        }
        throw new DomainError(
          "FORBIDDEN",
          `This ${principal.kind === "user" ? "account" : "token"} lacks the '${permission}' permission.`,
        );
      }
    }
  }
}
