import type { Permission } from "../domain/authorization.ts";
import { DomainError } from "../domain/errors.ts";
import type { Run } from "../domain/records.ts";
import { isStepUpFresh } from "../domain/sessions.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import type { StateVersion } from "../store/index.ts";
import type { ArtifactRef } from "../domain/artifacts.ts";
import { runArtifact } from "./run-artifacts.ts";
import { stateArtifact } from "./state-versions.ts";

/** The guarded downloads: what each is called in the audit trail. */
export type SensitiveDownload = "raw_plan" | "emergency_state";

/**
 * The guard every sensitive download passes before any byte is read: no query string, a typed
 * reason, and a dashboard session with a step-up no older than 15 minutes. (The operation binding
 * already refused tokens, audited, and the permission was checked when the run was loaded.)
 */
export function checkSensitiveDownload(
  services: Services,
  principal: AuthenticatedPrincipal,
  querystring: string,
  reason: string,
): string {
  if (querystring !== "") {
    throw new DomainError(
      "DOWNLOAD_QUERY_FORBIDDEN",
      "Sensitive downloads take no query string: send the request again without one (the reason goes in the request body).",
      {
        source: { parameter: querystring.split("=")[0].split("&")[0] },
      },
    );
  }
  const trimmed = reason.trim();
  if (trimmed === "") {
    throw new DomainError(
      "DOWNLOAD_REASON_REQUIRED",
      "Say why you need these sensitive bytes in data.attributes.reason; it is kept in the audit trail.",
      {
        source: { pointer: "/data/attributes/reason" },
      },
    );
  }
  if (principal.kind !== "user" || !isStepUpFresh(principal.session?.steppedUpAt ?? null, services.clock())) {
    throw new DomainError(
      "STEP_UP_REQUIRED",
      "Confirm your password (POST /v1/auth/step-up) and try again within 15 minutes.",
    );
  }
  return trimmed;
}

/**
 * The run's redacted plan-diff artifact (verified against its record), or why it has none:
 * RUN_PLAN_CHANGES_NOT_READY while the plan runs, RUN_PLAN_CHANGES_UNAVAILABLE once it ended without one.
 */
export async function readPlanChanges(services: Services, run: Run): Promise<{ bytes: Buffer; sha256: string }> {
  const x = run.execution;
  const ref = await runArtifact(services, run, "plan_diff");
  if (!ref) {
    if (x.planStatus === "pending" || x.planStatus === "running") {
      throw new DomainError(
        "RUN_PLAN_CHANGES_NOT_READY",
        `The plan of run ${run.id} has not finished yet (plan status ${x.planStatus}); its changes are available once it has.`,
      );
    }
    throw new DomainError(
      "RUN_PLAN_CHANGES_UNAVAILABLE",
      `The plan of run ${run.id} ended (plan status ${x.planStatus}) without producing redacted plan changes.`,
    );
  }
  return { bytes: await services.artifacts.read(ref, run.workspaceId), sha256: ref.sha256 };
}

/** Commits the audit event of a download, with its reason, before anything is sent. */
export async function auditDownload(
  services: Services,
  actor: AuthenticatedPrincipal,
  run: Run,
  download: SensitiveDownload | "redacted_plan",
  data: Record<string, unknown>,
): Promise<void> {
  await services.stores.audit.record({
    organizationId: run.organizationId,
    actorId: actor.id,
    action: `run.download.${download}`,
    targetType: "runs",
    targetId: run.id,
    data: { workspace_id: run.workspaceId, ...data },
    createdAt: services.clock(),
  });
}

/**
 * The state the run's apply uploaded: an unconfirmed (pending) version first, which is the
 * recovery case, then the one it published, then one a recovery discarded; the highest serial
 * within each. Only versions whose bytes arrived count.
 */
export async function emergencyStateOf(
  services: Services,
  run: Run,
): Promise<{ version: StateVersion; ref: ArtifactRef }> {
  const uploaded = (await services.stores.stateVersions.listByWorkspace(run.workspaceId)).flatMap((version) => {
    const ref = version.runId === run.id ? stateArtifact(version) : null;
    return ref ? [{ version, ref }] : [];
  });
  const rank = { pending: 0, finalized: 1, discarded: 2 } as const;
  const candidate = uploaded.sort(
    (a, b) => rank[a.version.status] - rank[b.version.status] || b.version.serial - a.version.serial,
  )[0];
  if (!candidate)
    throw new DomainError(
      "EMERGENCY_STATE_UNAVAILABLE",
      `Run ${run.id} uploaded no state, so there is nothing to recover from it.`,
    );
  return candidate;
}

/** The permission each guarded download needs. */
export const DOWNLOAD_PERMISSIONS: Record<SensitiveDownload | "redacted_plan", Permission> = {
  redacted_plan: "artifact:read",
  raw_plan: "artifact:read_sensitive",
  emergency_state: "state:recover",
};
