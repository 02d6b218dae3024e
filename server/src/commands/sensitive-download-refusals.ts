import type { Permission } from "../domain/authorization.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";

/**
 * Records that a token (API, bootstrap or run token) asked for a sensitive download (raw plan,
 * emergency state), which only a dashboard session with a fresh step-up may use. The target is
 * the run the request named, whether or not it exists or the token may see it: the record is
 * about the attempt, and the refusal reads the same either way.
 */
export async function recordSensitiveDownloadRefusal(
  services: Services,
  principal: AuthenticatedPrincipal,
  request: { operationId: string; permission: Permission; runId: string | null },
): Promise<void> {
  await services.stores.audit.record({
    organizationId: principal.organizationId,
    actorId: principal.id,
    action: "run.download.refused",
    targetType: "runs",
    targetId: request.runId ?? "",
    data: {
      operation: request.operationId,
      permission: request.permission,
      principal_kind: principal.kind,
      refusal: "STEP_UP_REQUIRED",
      token_id: principal.tokenId,
    },
    createdAt: services.clock(),
  });
}
