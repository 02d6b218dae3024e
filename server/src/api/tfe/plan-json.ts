import type { Readable } from "node:stream";
import { FRAMED_FORMAT } from "../../artifacts/framed.ts";
import { isAllowed } from "../../domain/authorization.ts";
import { DomainError } from "../../domain/errors.ts";
import { runArtifact } from "../../commands/run-artifacts.ts";
import { principalOf } from "../authorize.ts";
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

/** GET /api/v2/plans/{plan_id}/json-output: the stored (unredacted) plan JSON, for holders of artifact:read_sensitive, audited, streamed and verified on the way out. */
export const planJsonHandlers = {
  async getPlanJsonOutput({ path, ctx }) {
    const principal = principalOf(ctx);
    const planId = path.plan_id;
    const match = /^plan-([0-9a-z]{16})$/.exec(planId);
    const run = match ? await ctx.services.stores.runs.getById(`run-${match[1]}`) : undefined;
    if (!run) throw unavailable(planId);
    // run:read inside the run's exact organization, project and workspace, and the sensitive
    // permission there: the plan JSON is the raw plan in another encoding (sensitive variables in
    // clear, the whole prior state). API tokens are welcome (no step-up); every read is audited.
    const target = { organizationId: run.organizationId, projectId: run.projectId, workspaceId: run.workspaceId };
    if (!isAllowed(principal, "run:read", target) || !isAllowed(principal, "artifact:read_sensitive", target))
      throw unavailable(planId);
    const workspace = await ctx.services.stores.workspaces.getById(run.workspaceId);
    if (!workspace || workspace.organizationId !== run.organizationId) throw unavailable(planId);
    const ref = await runArtifact(ctx.services, run, "plan_json");
    if (!ref || ref.format !== FRAMED_FORMAT || ref.sizeBytes > PLAN_JSON_LIMIT_BYTES) throw unavailable(planId);
    let stream: Readable;
    try {
      // Checks the object's header and size against the ref before anything is sent. The stream
      // goes straight to the HTTP writer, which gives lent chunks back.
      stream = await ctx.services.artifacts.open(ref, run.workspaceId, { lend: true });
    } catch (error) {
      ctx.log.warn(
        { runId: run.id, err: (error as Error).message },
        "the plan JSON does not match its descriptor; it is not served",
      );
      throw unavailable(planId);
    }
    try {
      await ctx.services.stores.audit.record({
        organizationId: run.organizationId,
        actorId: principal.id,
        action: "plan.json_output_read",
        targetType: "runs",
        targetId: run.id,
        data: { size_bytes: ref.sizeBytes, sha256: ref.sha256 },
        createdAt: ctx.services.clock(),
      });
    } catch (error) {
      stream.destroy();
      throw error;
    }
    // A first batch that fails before anything was sent still gets the one unavailable answer.
    if (stream.errored) {
      ctx.log.warn(
        { runId: run.id, err: stream.errored.message },
        "the plan JSON failed verification before the first byte; it is not served",
      );
      throw unavailable(planId);
    }
    stream.once("error", (error) =>
      ctx.log.warn({ runId: run.id, err: error.message }, "the plan JSON stream was canceled"),
    );
    return {
      status: 200,
      body: stream,
      headers: { "Cache-Control": "private, no-store", "Content-Length": String(ref.sizeBytes) },
    };
  },

  /**
   * GET /api/v2/plans/{plan_id}/json-output-redacted: the redacted plan the CLI renders itself
   * (structured run output, -generate-config-out), to any caller with run:read on the run,
   * streamed and verified like json-output. Not audited: it holds nothing a viewer may not see.
   */
  async getPlanJsonOutputRedacted({ path, ctx }) {
    const principal = principalOf(ctx);
    const planId = path.plan_id;
    const match = /^plan-([0-9a-z]{16})$/.exec(planId);
    const run = match ? await ctx.services.stores.runs.getById(`run-${match[1]}`) : undefined;
    if (!run) throw unavailable(planId);
    const target = { organizationId: run.organizationId, projectId: run.projectId, workspaceId: run.workspaceId };
    if (!isAllowed(principal, "run:read", target)) throw unavailable(planId);
    const workspace = await ctx.services.stores.workspaces.getById(run.workspaceId);
    if (!workspace || workspace.organizationId !== run.organizationId) throw unavailable(planId);
    const ref = await runArtifact(ctx.services, run, "plan_json_redacted");
    if (!ref || ref.format !== FRAMED_FORMAT || ref.sizeBytes > PLAN_JSON_LIMIT_BYTES) throw unavailable(planId);
    let stream: Readable;
    try {
      stream = await ctx.services.artifacts.open(ref, run.workspaceId, { lend: true });
    } catch (error) {
      ctx.log.warn(
        { runId: run.id, err: (error as Error).message },
        "the redacted plan does not match its descriptor; it is not served",
      );
      throw unavailable(planId);
    }
    if (stream.errored) {
      ctx.log.warn(
        { runId: run.id, err: stream.errored.message },
        "the redacted plan failed verification before the first byte; it is not served",
      );
      throw unavailable(planId);
    }
    stream.once("error", (error) =>
      ctx.log.warn({ runId: run.id, err: error.message }, "the redacted plan stream was canceled"),
    );
    return {
      status: 200,
      body: stream,
      headers: { "Cache-Control": "private, no-store", "Content-Length": String(ref.sizeBytes) },
    };
  },
} satisfies Pick<H, "getPlanJsonOutput" | "getPlanJsonOutputRedacted">;
