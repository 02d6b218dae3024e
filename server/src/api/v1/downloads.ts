import { Readable } from "node:stream";
import type { Handlers } from "../../../../generated/v1/handlers.gen.ts";
import { DomainError } from "../../domain/errors.ts";
import type { Run } from "../../domain/records.ts";
import type { RequestContext } from "../../http/app.ts";
import { principalOf } from "../authorize.ts";
import { auditDownload, checkSensitiveDownload, DOWNLOAD_PERMISSIONS, emergencyStateOf, readPlanChanges } from "../../commands/downloads.ts";
import { ArtifactDescriptorRepository } from "../../store/artifact-descriptor-repository.ts";
import { loadRun } from "../lookup.ts";

type H = Handlers<RequestContext>;

function attachment(filename: string, sha256: string): Record<string, string> {
  return { "Content-Disposition": `attachment; filename="${filename}"`, "Cache-Control": "private, no-store", ETag: `"${sha256}"` };
}

/**
 * The run's plan JSON: streamed and verified frame by frame when it is stored framed (checked
 * against its descriptor before anything is sent), whole for plans stored before that format.
 */
async function openPlanJson(ctx: RequestContext, run: Run): Promise<Readable | Uint8Array> {
  const x = run.execution;
  const expected = { sizeBytes: x.planJsonSizeBytes!, sha256: x.planJsonDigest! };
  const descriptor = await new ArtifactDescriptorRepository(ctx.services.db.knex, ctx.services.db.dialect).findByRun(run.id, "plan_json");
  if (!descriptor || descriptor.artifactKey !== x.planJsonArtifactKey) {
    const bytes = await ctx.services.artifacts.get(x.planJsonArtifactKey!, expected);
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  if (descriptor.workspaceId !== run.workspaceId || descriptor.sizeBytes !== expected.sizeBytes || descriptor.sha256 !== expected.sha256) {
    throw new DomainError("RAW_PLAN_UNAVAILABLE", `The stored plan JSON of run ${run.id} does not match its record; it is not served.`);
  }
  const stream = await ctx.services.artifacts.openFramed(descriptor.artifactKey, { kind: descriptor.kind, workspaceId: descriptor.workspaceId }, expected);
  stream.once("error", (error) => ctx.log.warn({ runId: run.id, err: error.message }, "the raw plan download was canceled"));
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
    return { status: 200, body: JSON.parse(bytes.toString("utf8")), headers: attachment(`${run.id}-plan-changes.json`, sha256) };
  },

  async downloadRawPlan({ path, body, ctx }) {
    const principal = principalOf(ctx);
    const run = await loadRun(ctx, path.run_id, DOWNLOAD_PERMISSIONS.raw_plan);
    const reason = checkSensitiveDownload(ctx.services, principal, ctx.querystring, body.data.attributes.reason);
    const x = run.execution;
    if (x.planJsonArtifactKey === null || x.planJsonDigest === null || x.planJsonSizeBytes === null) {
      throw new DomainError("RAW_PLAN_UNAVAILABLE", `Run ${run.id} has no stored plan JSON (plan status ${x.planStatus}).`);
    }
    const plan = await openPlanJson(ctx, run);
    try {
      await auditDownload(ctx.services, principal, run, "raw_plan", { reason, sha256: x.planJsonDigest });
    } catch (error) {
      if (plan instanceof Readable) plan.destroy();
      throw error;
    }
    return { status: 200, body: plan, headers: { ...attachment(`${run.id}-plan.json`, x.planJsonDigest), "Content-Length": String(x.planJsonSizeBytes) } };
  },

  async downloadEmergencyState({ path, body, ctx }) {
    const principal = principalOf(ctx);
    const run = await loadRun(ctx, path.run_id, DOWNLOAD_PERMISSIONS.emergency_state);
    const reason = checkSensitiveDownload(ctx.services, principal, ctx.querystring, body.data.attributes.reason);
    const version = await emergencyStateOf(ctx.services, run);
    const bytes = await ctx.services.artifacts.get(version.artifactKey!, { sizeBytes: version.sizeBytes!, sha256: version.sha256! });
    await auditDownload(ctx.services, principal, run, "emergency_state", { reason, state_version_id: version.id, serial: version.serial, status: version.status, sha256: version.sha256 });
    return { status: 200, body: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), headers: attachment(`${run.id}-state-${version.serial}.tfstate`, version.sha256!) };
  },
} satisfies Partial<H>;
