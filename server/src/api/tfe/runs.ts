import { isAllowed } from "../../domain/authorization.ts";
import { DomainError } from "../../domain/errors.ts";
import type { Run } from "../../domain/records.ts";
import { DESTROY_FORBIDDEN_DETAIL } from "../../domain/run.ts";
import type { RequestContext } from "../../http/app.ts";
import { notFound, principalOf, runTarget } from "../authorize.ts";
import { approveRun, cancelRun, discardRun } from "../../commands/run-decisions.ts";
import { createRun } from "../../commands/runs.ts";
import { readConfigurationVersion, startConfigurationVersion } from "../configuration-versions.ts";
import { loadOrganization, loadRun, loadWorkspace } from "../lookup.ts";
import { logReadUrl, readFramedLog, verifyLogToken } from "./logs.ts";
import { workspaceResource } from "./workspaces.ts";
import { presentApply, presentConfigurationVersion, presentPlan, presentRun } from "./presenters.ts";
import { listParameter, paginate, refuseUnknownFilters } from "./query.ts";
import { confirmedBy, tfeRunOperation, tfeRunSource, tfeRunStatus, type RunTimeline } from "./run-status.ts";
import { timelineOf, userResource } from "./timeline.ts";
import type { H, S } from "./types.ts";

/** How many of the newest runs the queue and the workspace run list look at. */
const RUN_SCAN_LIMIT = 500;

/**
 * The run a `plan-X`/`apply-X` id belongs to (`run-X`), checked for `run:read`, with what its
 * phase document shows besides: the phase's signed log URL and the run's timeline.
 */
async function loadPhase(
  ctx: RequestContext,
  id: string,
  phase: "plan" | "apply",
): Promise<[Run, string, RunTimeline]> {
  const match = new RegExp(`^${phase}-([0-9a-z]{16})$`).exec(id);
  if (!match) throw notFound(`${phase === "plan" ? "Plan" : "Apply"} ${id}`);
  const run = await loadRun(ctx, `run-${match[1]}`, "run:read");
  return [run, logReadUrl(ctx.services, ctx.baseUrl, run.id, phase), await timelineOf(ctx, run)];
}

/** Up to RUN_SCAN_LIMIT newest runs of a workspace or organization. */
async function scanRuns(
  list: (options: {
    limit: number;
    after?: { createdAt: string; id: string };
  }) => Promise<{ runs: Run[]; hasMore: boolean }>,
): Promise<Run[]> {
  const runs: Run[] = [];
  let after: { createdAt: string; id: string } | undefined;
  while (runs.length < RUN_SCAN_LIMIT) {
    const page = await list({ limit: 100, after });
    runs.push(...page.runs);
    const last = page.runs[page.runs.length - 1];
    if (!page.hasMore || !last) break;
    after = { createdAt: last.createdAt, id: last.id };
  }
  return runs.slice(0, RUN_SCAN_LIMIT);
}

/** The filters and searches of the workspace run list (go-tfe's RunListOptions). */
const RUN_LIST_FILTERS = [
  "filter[status]",
  "filter[operation]",
  "filter[source]",
  "search[user]",
  "search[commit]",
  "search[basic]",
] as const;

type RunListQuery = Partial<Record<(typeof RUN_LIST_FILTERS)[number], string>>;

/**
 * The runs matching every filter given, on what the client sees: TFE statuses, operations and
 * sources (comma-separated lists, any value matches). `search[user]` matches the commit author or
 * the name of the principal who created the run, `search[commit]` the commit SHA (a prefix); as in
 * TFE, `search[basic]` (run id, message, commit SHA, user) applies only without those two.
 */
async function filterRuns(ctx: RequestContext, runs: Run[], query: RunListQuery): Promise<Run[]> {
  const statuses = listParameter(query["filter[status]"]);
  const operations = listParameter(query["filter[operation]"]);
  const sources = listParameter(query["filter[source]"]);
  const user = query["search[user]"]?.trim().toLowerCase() || undefined;
  const commit = query["search[commit]"]?.trim().toLowerCase() || undefined;
  const basic =
    user === undefined && commit === undefined ? query["search[basic]"]?.trim().toLowerCase() || undefined : undefined;
  const names = new Map<string, string>();
  const creatorName = async (run: Run): Promise<string> => {
    if (run.createdBy === null) return "";
    if (!names.has(run.createdBy))
      names.set(run.createdBy, (await ctx.services.stores.principals.getById(run.createdBy))?.name ?? "");
    return names.get(run.createdBy)!;
  };
  const matching: Run[] = [];
  for (const run of runs) {
    if (statuses && !statuses.has(tfeRunStatus(run))) continue;
    if (operations && !operations.has(tfeRunOperation(run))) continue;
    if (sources && !sources.has(tfeRunSource(run))) continue;
    const sha = run.commit?.sha.toLowerCase() ?? "";
    if (commit !== undefined && (sha === "" || !sha.startsWith(commit))) continue;
    if (user !== undefined || basic !== undefined) {
      const users = [run.commit?.author ?? "", await creatorName(run)].map((name) => name.toLowerCase());
      if (user !== undefined && !users.some((name) => name.includes(user))) continue;
      if (
        basic !== undefined &&
        ![run.id.toLowerCase(), run.message.toLowerCase(), sha, ...users].some(
          (text) => text !== "" && text.includes(basic),
        )
      )
        continue;
    }
    matching.push(run);
  }
  return matching;
}

/** The creators (`created_by`) and approvers (`confirmed_by`) of runs as `users` resources, each once. */
async function includedUsers(
  ctx: RequestContext,
  runs: readonly [Run, RunTimeline][],
  include: Set<string>,
): Promise<S["User"][]> {
  const ids = new Set<string>();
  for (const [run, timeline] of runs) {
    if (include.has("created_by") && run.createdBy) ids.add(run.createdBy);
    const approver = confirmedBy(timeline);
    if (include.has("confirmed_by") && approver) ids.add(approver);
  }
  const users: S["User"][] = [];
  for (const id of ids) users.push(await userResource(ctx, id));
  return users;
}

/** A run action's optional `comment` (the body may be `{}`, a comment, or nothing). */
function commentOf(body: { comment?: string } | undefined): string | null {
  const comment = body?.comment?.trim();
  return comment ? comment : null;
}

/** Configuration versions, runs, their phases and logs, and the run actions the CLI calls. */
export const runHandlers = {
  async createRun({ body, ctx }) {
    const workspaceId = body.data.relationships.workspace.data?.id;
    if (!workspaceId)
      throw new DomainError("DOCUMENT_INVALID", "The run needs a workspace relationship.", {
        source: { pointer: "/data/relationships/workspace" },
      });
    const workspace = await loadWorkspace(ctx, workspaceId, "run:create");
    const a = body.data.attributes ?? {};
    // `tofu destroy -auto-approve` sends both flags; the destroy refusal is the one that helps.
    if (a["is-destroy"] !== undefined && a["is-destroy"] !== false)
      throw new DomainError("RUN_DESTROY_FORBIDDEN", DESTROY_FORBIDDEN_DETAIL);
    refuseUnsupportedRunOptions(a);
    // The CLI never sends plan-only: a speculative configuration version (`tofu plan` without
    // -out) is its only signal of a plan-only run. createRun checks the version itself.
    const configurationVersionId = body.data.relationships["configuration-version"]?.data?.id;
    const configurationVersion = configurationVersionId
      ? await ctx.services.stores.configurationVersions.getById(configurationVersionId)
      : undefined;
    const speculative =
      a["plan-only"] === true ||
      (configurationVersion?.workspaceId === workspace.id && configurationVersion.speculative);
    const run = await createRun(ctx.services, principalOf(ctx), workspace, {
      kind: speculative ? "speculative" : "plan_and_apply",
      message: a.message,
      autoApply: a["auto-apply"],
      isDestroy: a["is-destroy"],
      configurationVersionId,
      source: "cli",
      runVariables: a.variables,
      allowConfigGeneration: a["allow-config-generation"] === true,
    });
    return { status: 201, body: { data: presentRun(run, principalOf(ctx)) } };
  },

  async createConfigurationVersion({ path, body, ctx }) {
    const created = await startConfigurationVersion(ctx, path.workspace_id, "run:create", {
      speculative: body?.data?.attributes?.speculative === true,
      source: "tfe-api",
    });
    return { status: 201, body: { data: presentConfigurationVersion(...created) } };
  },

  async listConfigurationVersions({ path, query, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:read");
    const all = await ctx.services.stores.configurationVersions.listByWorkspace(workspace.id);
    const { data, meta } = paginate(all, query["page[number]"], query["page[size]"]);
    return { status: 200, body: { data: data.map((version) => presentConfigurationVersion(version, null)), meta } };
  },

  async getConfigurationVersion({ path, ctx }) {
    const found = await readConfigurationVersion(ctx, path.configuration_version_id, "run:create");
    return { status: 200, body: { data: presentConfigurationVersion(...found) } };
  },

  async getRun({ path, query, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:read");
    const principal = principalOf(ctx);
    const include = new Set((query.include ?? "").split(",").map((name) => name.trim()));
    const included: NonNullable<S["RunDocument"]["included"]> = [];
    if (include.has("workspace")) {
      const workspace = await ctx.services.stores.workspaces.getById(run.workspaceId);
      if (workspace) {
        included.push(await workspaceResource(ctx, workspace));
      }
    }
    const timeline = await timelineOf(ctx, run);
    if (include.has("plan"))
      included.push(presentPlan(run, logReadUrl(ctx.services, ctx.baseUrl, run.id, "plan"), timeline));
    included.push(...(await includedUsers(ctx, [[run, timeline]], include)));
    const data = presentRun(run, principal, timeline);
    return { status: 200, body: included.length > 0 ? { data, included } : { data } };
  },

  async listRunEvents({ path, ctx }) {
    await loadRun(ctx, path.run_id, "run:read");
    return { status: 200, body: { data: [] } };
  },

  async listWorkspaceRuns({ path, query, ctx }) {
    refuseUnknownFilters(query, RUN_LIST_FILTERS);
    const workspace = await loadWorkspace(ctx, path.workspace_id, "run:read");
    const runs = await scanRuns((options) => ctx.services.stores.runs.listByWorkspace(workspace.id, options));
    const principal = principalOf(ctx);
    const page = paginate(await filterRuns(ctx, runs, query), query["page[number]"], query["page[size]"]);
    const data = [];
    const timelines: [Run, RunTimeline][] = [];
    for (const run of page.data) {
      const timeline = await timelineOf(ctx, run);
      timelines.push([run, timeline]);
      data.push(presentRun(run, principal, timeline));
    }
    const include = new Set((query.include ?? "").split(",").map((name) => name.trim()));
    const included: NonNullable<S["RunListDocument"]["included"]> = await includedUsers(ctx, timelines, include);
    if (include.has("workspace") && page.data.length > 0) included.push(await workspaceResource(ctx, workspace));
    return {
      status: 200,
      body:
        include.has("workspace") || include.has("created_by") || include.has("confirmed_by")
          ? { data, included, meta: page.meta }
          : { data, meta: page.meta },
    };
  },

  async listRunQueue({ path, query, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "run:read");
    const principal = principalOf(ctx);
    const runs = await scanRuns((options) => ctx.services.stores.runs.listByOrganization(organization.id, options));
    // Oldest first: position 0 starts next. Only runs the caller may read are listed.
    const queued = runs
      .filter((run) => run.status === "pending" && isAllowed(principal, "run:read", runTarget(run)))
      .reverse();
    const page = paginate(queued, query["page[number]"], query["page[size]"]);
    const offset = ((page.meta.pagination["current-page"] ?? 1) - 1) * (query["page[size]"] ?? 20);
    const data = [];
    for (const [index, run] of page.data.entries()) {
      const document = presentRun(run, principal, await timelineOf(ctx, run));
      document.attributes["position-in-queue"] = offset + index;
      data.push(document);
    }
    return { status: 200, body: { data, meta: page.meta } };
  },

  async applyRun({ path, body, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:approve");
    if (run.status !== "awaiting_approval" || run.execution.planDigest === null) {
      throw new DomainError(
        "RUN_TRANSITION_INVALID",
        `Run ${run.id} is ${run.status}; only a run whose plan awaits approval can be applied.`,
      );
    }
    // The CLI approves exactly the plan it just streamed: the run's own current plan digest. The
    // approval is still bound to the policy result, the current state and the dependency bundle.
    await approveRun(ctx.services, principalOf(ctx), run, {
      planDigest: run.execution.planDigest,
      reason: commentOf(body) ?? "Approved with `tofu apply`",
    });
    return { status: 202, body: undefined };
  },

  async discardRun({ path, body, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:approve");
    await discardRun(ctx.services, principalOf(ctx), run, commentOf(body) ?? "Discarded with `tofu apply`");
    return { status: 202, body: undefined };
  },

  async cancelRun({ path, body, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:cancel");
    await cancelRun(ctx.services, principalOf(ctx), run, commentOf(body) ?? "Canceled from the tofu CLI");
    return { status: 202, body: undefined };
  },

  async getPlan({ path, ctx }) {
    return { status: 200, body: { data: presentPlan(...(await loadPhase(ctx, path.plan_id, "plan"))) } };
  },

  async getApply({ path, ctx }) {
    return { status: 200, body: { data: presentApply(...(await loadPhase(ctx, path.apply_id, "apply"))) } };
  },

  async readLog({ path, query, ctx }) {
    const { runId, phase } = verifyLogToken(ctx.services.keys.uploadUrl, path.log_token, ctx.services.clock());
    const run = await ctx.services.stores.runs.getById(runId);
    if (!run) throw notFound(`Run ${runId}`);
    const bytes = await readFramedLog(ctx.services, run, phase, query.offset ?? 0, query.limit ?? 65_536);
    return { status: 200, body: bytes, headers: { "Cache-Control": "no-store" } };
  },
} satisfies Partial<H>;

/**
 * Run options StackShip cannot honour yet are refused rather than silently dropped: a plan
 * without the user's targets or replacements would not be the plan they asked for.
 */
function refuseUnsupportedRunOptions(a: {
  "target-addrs"?: unknown[];
  "replace-addrs"?: unknown[];
  "refresh-only"?: boolean;
  refresh?: boolean;
}): void {
  const refuse = (what: string, pointer: string) =>
    new DomainError(
      "DOCUMENT_INVALID",
      `StackShip does not support ${what} on runs from the CLI yet. Run the command again without it.`,
      {
        source: { pointer: `/data/attributes/${pointer}` },
      },
    );
  if (a["target-addrs"] !== undefined && a["target-addrs"].length > 0) throw refuse("-target", "target-addrs");
  if (a["replace-addrs"] !== undefined && a["replace-addrs"].length > 0) throw refuse("-replace", "replace-addrs");
  if (a["refresh-only"] === true) throw refuse("-refresh-only", "refresh-only");
  if (a.refresh === false) throw refuse("-refresh=false", "refresh");
}
