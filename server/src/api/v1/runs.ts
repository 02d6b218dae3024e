import type { components } from "../../../../generated/v1/types.gen.ts";
import { decodeRunCursor, encodeRunCursor } from "../../domain/cursor.ts";
import { DomainError } from "../../domain/errors.ts";
import type { Run } from "../../domain/records.ts";
import { isRunStatus, RUN_STATUSES, type RunStatus } from "../../domain/run.ts";
import type { RequestContext } from "../../http/app.ts";
import { principalOf } from "../authorize.ts";
import { approveRun, cancelRun, discardRun } from "../../commands/run-decisions.ts";
import { recoveryEvidence, resolveRecovery } from "../../commands/recovery.ts";
import { readPlanChanges } from "../../commands/downloads.ts";
import { createRun } from "../../commands/runs.ts";
import { loadOrganization, loadRun, loadWorkspace } from "../lookup.ts";
import { presentRun } from "./presenters.ts";
import type { H } from "./types.ts";

type RunCreator = NonNullable<components["schemas"]["Run"]["attributes"]["created_by"]>;

/** The statuses of a `status=` filter, each known (400 REQUEST_INVALID naming an unknown one). */
function runStatusFilter(value: string): RunStatus[] {
  const statuses = [...new Set(value.split(","))];
  const unknown = statuses.filter((status) => !isRunStatus(status));
  if (unknown.length > 0)
    throw new DomainError(
      "REQUEST_INVALID",
      `Unknown run status ${unknown.map((s) => `"${s}"`).join(", ")} in status=; the statuses are ${RUN_STATUSES.join(", ")}.`,
    );
  return statuses as RunStatus[];
}

/** Who started each run (a user by display name, a token's principal by its name), each looked up once per request. */
function creatorsOf(ctx: RequestContext): (run: Run) => Promise<RunCreator | null> {
  const known = new Map<string, Promise<RunCreator | null>>();
  const lookup = async (id: string): Promise<RunCreator | null> => {
    const principal = await ctx.services.stores.principals.getById(id);
    if (principal) return { id, kind: "token", name: principal.name };
    const user = await ctx.services.stores.users.getById(id);
    return user ? { id, kind: "user", name: user.displayName } : null;
  };
  return (run) => {
    if (run.createdBy === null) return Promise.resolve(null);
    if (!known.has(run.createdBy)) known.set(run.createdBy, lookup(run.createdBy));
    return known.get(run.createdBy)!;
  };
}

/** Runs: creation, show, and the organization inventory. */
export const runHandlers = {
  async createRun({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "run:create");
    const attributes = body.data.attributes;
    const run = await createRun(ctx.services, principalOf(ctx), workspace, {
      kind: attributes?.kind ?? "plan_and_apply",
      message: attributes?.message,
      autoApply: attributes?.auto_apply,
      isDestroy: attributes?.is_destroy,
      configurationVersionId: body.data.relationships?.configuration_version?.data.id,
      source: "api",
    });
    return { status: 201, body: { data: presentRun(run, null, await creatorsOf(ctx)(run)) } };
  },

  async getRun({ path, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:read");
    return {
      status: 200,
      body: { data: presentRun(run, await recoveryEvidence(ctx.services, run), await creatorsOf(ctx)(run)) },
    };
  },

  async resolveRunRecovery({ path, body, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:recover");
    const { resolution, reason } = body.data.attributes;
    const resolved = await resolveRecovery(ctx.services, principalOf(ctx), run, resolution, reason);
    return {
      status: 202,
      body: {
        data: presentRun(resolved, await recoveryEvidence(ctx.services, resolved), await creatorsOf(ctx)(resolved)),
      },
    };
  },

  async listOrganizationRuns({ path, query, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "run:read");
    const limit = query.limit ?? 20;
    const after = query.cursor === undefined ? undefined : decodeRunCursor(query.cursor, ctx.services.keys.cursor);
    const statuses = query.status === undefined ? undefined : runStatusFilter(query.status);
    const page = await ctx.services.stores.runs.listByOrganization(organization.id, { limit, after, statuses });
    const last = page.runs[page.runs.length - 1];
    const nextCursor =
      page.hasMore && last
        ? encodeRunCursor({ createdAt: last.createdAt, id: last.id }, ctx.services.keys.cursor)
        : null;
    const self = `/v1/organizations/${organization.name}/runs?limit=${limit}${statuses ? `&status=${statuses.join(",")}` : ""}`;
    const creators = creatorsOf(ctx);
    return {
      status: 200,
      body: {
        data: await Promise.all(
          page.runs.map(async (run) => presentRun(run, await recoveryEvidence(ctx.services, run), await creators(run))),
        ),
        meta: { page: { limit, next_cursor: nextCursor } },
        links: { self, next: nextCursor === null ? null : `${self}&cursor=${encodeURIComponent(nextCursor)}` },
      },
    };
  },

  async approveRun({ path, body, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:approve");
    const approved = await approveRun(ctx.services, principalOf(ctx), run, {
      planDigest: body.data.attributes.plan_digest,
      reason: body.data.attributes.reason,
    });
    return { status: 202, body: { data: presentRun(approved, null, await creatorsOf(ctx)(approved)) } };
  },

  async discardRun({ path, body, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:approve");
    const discarded = await discardRun(ctx.services, principalOf(ctx), run, body?.data.attributes?.reason ?? null);
    return { status: 202, body: { data: presentRun(discarded, null, await creatorsOf(ctx)(discarded)) } };
  },

  async cancelRun({ path, body, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:cancel");
    const canceled = await cancelRun(ctx.services, principalOf(ctx), run, body?.data.attributes?.reason ?? null);
    return { status: 202, body: { data: presentRun(canceled, null, await creatorsOf(ctx)(canceled)) } };
  },

  async getRunLog({ path, query, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:read");
    const offset = query.offset ?? 0;
    const window = await ctx.services.stores.logs.read(run.id, path.phase, offset, query.limit ?? 65_536);
    return {
      status: 200,
      body: {
        data: {
          type: "run-logs",
          id: `${run.id}/${path.phase}`,
          attributes: {
            phase: path.phase,
            offset,
            text: window.text,
            next_offset: window.nextOffset,
            complete: window.complete,
          },
        },
      },
    };
  },

  async getRunPlanChanges({ path, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:read");
    const { bytes, sha256 } = await readPlanChanges(ctx.services, run);
    return {
      status: 200,
      body: JSON.parse(bytes.toString("utf8")) as components["schemas"]["PlanDiff"],
      headers: { ETag: `"${sha256}"`, "Cache-Control": "private, no-store" },
    };
  },
} satisfies Partial<H>;
