import { type Readable } from "node:stream";
import type { components } from "../../../../generated/v1/types.gen.ts";
import { DomainError } from "../../domain/errors.ts";
import type { Run } from "../../domain/records.ts";
import type { RequestContext } from "../../http/app.ts";
import { principalOf } from "../authorize.ts";
import {
  auditDownload,
  checkSensitiveDownload,
  DOWNLOAD_PERMISSIONS,
  emergencyStateOf,
  readPlanChanges,
} from "../../commands/downloads.ts";
import { runArtifact } from "../../commands/run-artifacts.ts";
import type { ArtifactRef } from "../../domain/artifacts.ts";
import { loadRun } from "../lookup.ts";
import type { H } from "./types.ts";

function attachment(filename: string, sha256: string): Record<string, string> {
  return {
    "Content-Disposition": `attachment; filename="${filename}"`,
    "Cache-Control": "private, no-store",
    ETag: `"${sha256}"`,
  };
}

/** The run's plan JSON, streamed and verified frame by frame (checked against its ref before anything is sent). */
async function openPlanJson(ctx: RequestContext, run: Run, ref: ArtifactRef): Promise<Readable> {
  const stream = await ctx.services.artifacts.open(ref, run.workspaceId);
  stream.once("error", (error: Error) =>
    ctx.log.warn({ runId: run.id, err: error.message }, "the raw plan download was canceled"),
  );
  return stream;
}

/**
 * Guarded downloads. The sensitive ones check, in this order: the permission (404 for a run the
 * caller cannot see), no query string, a reason, a fresh step-up for sessions, that the bytes
 * exist; then the audit event with the reason is committed; only then are bytes sent.
 */
export const downloadHandlers = {
  async downloadRedactedPlan({ path, ctx }) {
    const run = await loadRun(ctx, path.run_id, DOWNLOAD_PERMISSIONS.redacted_plan);
    const { bytes, sha256 } = await readPlanChanges(ctx.services, run);
    await auditDownload(ctx.services, principalOf(ctx), run, "redacted_plan", { sha256 });
    return {
      status: 200,
      body: JSON.parse(bytes.toString("utf8")) as components["schemas"]["PlanDiff"],
      headers: attachment(`${run.id}-plan-changes.json`, sha256),
    };
  },

  async downloadRawPlan({ path, body, ctx }) {
    const principal = principalOf(ctx);
    const run = await loadRun(ctx, path.run_id, DOWNLOAD_PERMISSIONS.raw_plan);
    const reason = checkSensitiveDownload(ctx.services, principal, ctx.querystring, body.data.attributes.reason);
    const ref = await runArtifact(ctx.services, run, "plan_json");
    if (!ref)
      throw new DomainError(
        "RAW_PLAN_UNAVAILABLE",
        `Run ${run.id} has no stored plan JSON (plan status ${run.execution.planStatus}).`,
      );
    const plan = await openPlanJson(ctx, run, ref);
    try {
      await auditDownload(ctx.services, principal, run, "raw_plan", { reason, sha256: ref.sha256 });
    } catch (error) {
      plan.destroy();
      throw error;
    }
    return {
      status: 200,
      body: plan,
      headers: { ...attachment(`${run.id}-plan.json`, ref.sha256), "Content-Length": String(ref.sizeBytes) },
    };
  },

  async downloadEmergencyState({ path, body, ctx }) {
    const principal = principalOf(ctx);
    const run = await loadRun(ctx, path.run_id, DOWNLOAD_PERMISSIONS.emergency_state);
    const reason = checkSensitiveDownload(ctx.services, principal, ctx.querystring, body.data.attributes.reason);
    const { version, ref } = await emergencyStateOf(ctx.services, run);
    const bytes = await ctx.services.artifacts.read(ref, version.workspaceId);
    await auditDownload(ctx.services, principal, run, "emergency_state", {
      reason,
      state_version_id: version.id,
      serial: version.serial,
      status: version.status,
      sha256: ref.sha256,
    });
    return {
      status: 200,
      body: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      headers: attachment(`${run.id}-state-${version.serial}.tfstate`, ref.sha256),
    };
  },
} satisfies Partial<H>;
