import type { Readable } from "node:stream";
import { FRAMED_FORMAT } from "../../artifacts/framed.ts";
import type { ArtifactRef } from "../../domain/artifacts.ts";
import { isAllowed, type Permission } from "../../domain/authorization.ts";
import { DomainError } from "../../domain/errors.ts";
import type { Run } from "../../domain/records.ts";
import type { RequestContext } from "../../http/app.ts";
import { runArtifact } from "../../commands/run-artifacts.ts";
import { principalOf, runTarget } from "../authorize.ts";
import type { H } from "./types.ts";

/** The largest plan JSON served (100 MiB). */
export const PLAN_JSON_LIMIT_BYTES = 100 * 1024 * 1024;

/**
 * One answer for every reason (no such plan, not visible to this token, no descriptor, too large,
 * descriptor and object disagree), so the response tells a caller nothing about which it was.
 */
function unavailable(planId: string): DomainError {
  return new DomainError(
    "PLAN_JSON_UNAVAILABLE",
    `The JSON of plan ${planId} is not available: it does not exist, this token may not read it, or it cannot be served.`,
  );
}

/** How one of the plan's JSON documents is served. */
interface PlanJsonVariant {
  /** The run artifact served. */
  artifact: "plan_json" | "plan_json_redacted";
  /** What the caller needs on the run's exact organization, project and workspace. */
  permissions: readonly Permission[];
  /** The document as the warnings name it. */
  what: string;
  /** Records the read (after the object was checked, before anything is sent); the stream is destroyed if it fails. */
  audit?: (ctx: RequestContext, run: Run, ref: ArtifactRef) => Promise<unknown>;
}

/**
 * A plan's JSON document, streamed and verified on the way out: the plan's run, the caller's
 * permissions on it, its workspace and the artifact's descriptor are checked first, and any
 * failure before the first byte gets the one unavailable answer.
 */
async function servePlanJson(ctx: RequestContext, planId: string, variant: PlanJsonVariant) {
  const principal = principalOf(ctx);
  const match = /^plan-([0-9a-z]{16})$/.exec(planId);
  const run = match ? await ctx.services.stores.runs.getById(`run-${match[1]}`) : undefined;
  if (!run) throw unavailable(planId);
  const target = runTarget(run);
  if (!variant.permissions.every((permission) => isAllowed(principal, permission, target))) throw unavailable(planId);
  const workspace = await ctx.services.stores.workspaces.getById(run.workspaceId);
  if (!workspace || workspace.organizationId !== run.organizationId) throw unavailable(planId);
  const ref = await runArtifact(ctx.services, run, variant.artifact);
  if (!ref || ref.format !== FRAMED_FORMAT || ref.sizeBytes > PLAN_JSON_LIMIT_BYTES) throw unavailable(planId);
  let stream: Readable;
  try {
    // Checks the object's header and size against the ref before anything is sent. The stream
    // goes straight to the HTTP writer, which gives lent chunks back.
    stream = await ctx.services.artifacts.open(ref, run.workspaceId, { lend: true });
  } catch (error) {
    ctx.log.warn(
      { runId: run.id, err: (error as Error).message },
      `${variant.what} does not match its descriptor; it is not served`,
    );
    throw unavailable(planId);
  }
  try {
    await variant.audit?.(ctx, run, ref);
  } catch (error) {
    stream.destroy();
    throw error;
  }
  // A first batch that fails before anything was sent still gets the one unavailable answer.
  if (stream.errored) {
    ctx.log.warn(
      { runId: run.id, err: stream.errored.message },
      `${variant.what} failed verification before the first byte; it is not served`,
    );
    throw unavailable(planId);
  }
  stream.once("error", (error) =>
    ctx.log.warn({ runId: run.id, err: error.message }, `${variant.what} stream was canceled`),
  );
  return {
    status: 200 as const,
    body: stream,
    headers: { "Cache-Control": "private, no-store", "Content-Length": String(ref.sizeBytes) },
  };
}

/** GET /api/v2/plans/{plan_id}/json-output and json-output-redacted. */
export const planJsonHandlers = {
  /**
   * The stored (unredacted) plan JSON, for holders of artifact:read_sensitive, audited. run:read
   * inside the run's exact organization, project and workspace, and the sensitive permission
   * there: the plan JSON is the raw plan in another encoding (sensitive variables in clear, the
   * whole prior state). API tokens are welcome (no step-up); every read is audited.
   */
  async getPlanJsonOutput({ path, ctx }) {
    return servePlanJson(ctx, path.plan_id, {
      artifact: "plan_json",
      permissions: ["run:read", "artifact:read_sensitive"],
      what: "the plan JSON",
      audit: (ctx, run, ref) =>
        ctx.services.stores.audit.record({
          organizationId: run.organizationId,
          actorId: principalOf(ctx).id,
          action: "plan.json_output_read",
          targetType: "runs",
          targetId: run.id,
          data: { size_bytes: ref.sizeBytes, sha256: ref.sha256 },
          createdAt: ctx.services.clock(),
        }),
    });
  },

  /**
   * The redacted plan the CLI renders itself (structured run output, -generate-config-out), to
   * any caller with run:read on the run, streamed and verified like json-output. Not audited: it
   * holds nothing a viewer may not see.
   */
  async getPlanJsonOutputRedacted({ path, ctx }) {
    return servePlanJson(ctx, path.plan_id, {
      artifact: "plan_json_redacted",
      permissions: ["run:read"],
      what: "the redacted plan",
    });
  },
} satisfies Pick<H, "getPlanJsonOutput" | "getPlanJsonOutputRedacted">;
