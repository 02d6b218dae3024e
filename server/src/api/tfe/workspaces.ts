import { isAllowed } from "../../domain/authorization.ts";
import { DomainError } from "../../domain/errors.ts";
import { isRunPrincipal } from "../../domain/principal.ts";
import { AUTO_APPLY_FORBIDDEN_DETAIL, DESTROY_FORBIDDEN_DETAIL, isTerminalRunStatus } from "../../domain/run.ts";
import type { Run, Workspace } from "../../domain/records.ts";
import {
  addWorkspaceTags,
  createWorkspace,
  deleteWorkspace,
  removeWorkspaceTags,
  resolveOpenTofuVersion,
  setStructuredRunOutput,
  updateWorkspaceSettings,
  type WorkspaceDeletion,
} from "../../commands/workspaces.ts";
import { inTransaction } from "../../store/index.ts";
import type { RequestContext } from "../../http/app.ts";
import { authorize, authorizeFound, notFound, principalOf, workspaceTarget } from "../authorize.ts";
import { loadOrganization, loadProjectForNewWorkspace, loadWorkspace } from "../lookup.ts";
import { loadOrganizationForCli, loadWorkspaceForCli, organizationOf, runMaySee } from "./access.ts";
import { presentRun, presentWorkspace } from "./presenters.ts";
import { paginate, refuseUnknownFilters } from "./query.ts";
import { timelineOf } from "./timeline.ts";
import type { H, S } from "./types.ts";

/** How many of the workspace's newest runs are looked at for its current run. */
const CURRENT_RUN_SCAN = 100;

/**
 * The workspace's current run, as TFE means it: the oldest plan-and-apply run still in progress
 * (the one holding the workspace; later ones wait behind it), else the newest plan-and-apply run;
 * speculative runs never are. Only for callers who may read the workspace's runs, or a run token
 * of that very run; undefined for anyone else.
 */
export async function currentRunOf(ctx: RequestContext, workspace: Workspace): Promise<Run | undefined> {
  const principal = principalOf(ctx);
  const mayReadRuns = isAllowed(principal, "run:read", workspaceTarget(workspace));
  if (!mayReadRuns && !isRunPrincipal(principal)) return undefined;
  const { runs } = await ctx.services.stores.runs.listByWorkspace(workspace.id, { limit: CURRENT_RUN_SCAN });
  const applying = runs.filter((run) => run.kind === "plan_and_apply");
  const current = applying.filter((run) => !isTerminalRunStatus(run.status)).at(-1) ?? applying[0];
  if (current === undefined) return undefined;
  if (!mayReadRuns && !(isRunPrincipal(principal) && principal.run.runId === current.id)) return undefined;
  return current;
}

/** A workspace resource as it is now: its lock, its tags and its current run read alongside. */
export async function workspaceResource(
  ctx: RequestContext,
  workspace: Workspace,
  organizationName?: string,
  currentRun?: Run | null,
): Promise<S["Workspace"]> {
  const name = organizationName ?? (await organizationOf(ctx, workspace)).name;
  const lock = await ctx.services.stores.workspaceLocks.current(workspace.id);
  const tags = await ctx.services.stores.workspaces.tagsOf(workspace.id);
  const run = currentRun === undefined ? await currentRunOf(ctx, workspace) : (currentRun ?? undefined);
  return presentWorkspace(workspace, name, principalOf(ctx), lock, tags, run?.id ?? null);
}

/** The names a comma-separated `include` asks for. */
export function includeNames(include: string | undefined): Set<string> {
  return new Set((include ?? "").split(",").map((name) => name.trim()));
}

/**
 * Workspace resources and, when `include` names `current_run`, their current runs in `included`
 * (other include names are accepted and ignored).
 */
export async function workspaceResources(
  ctx: RequestContext,
  workspaces: readonly Workspace[],
  include: string | undefined,
  organizationName?: string,
): Promise<{ data: S["Workspace"][]; included?: S["Run"][] }> {
  const data: S["Workspace"][] = [];
  const included: S["Run"][] = [];
  for (const workspace of workspaces) {
    const run = (await currentRunOf(ctx, workspace)) ?? null;
    data.push(await workspaceResource(ctx, workspace, organizationName, run));
    if (run && includeNames(include).has("current_run") && !included.some((r) => r.id === run.id))
      included.push(presentRun(run, principalOf(ctx), await timelineOf(ctx, run)));
  }
  return includeNames(include).has("current_run") ? { data, included } : { data };
}

type WorkspaceAttributes =
  | S["WorkspaceCreateDocument"]["data"]["attributes"]
  | NonNullable<NonNullable<S["WorkspaceUpdateDocument"]["data"]>["attributes"]>;

/** A workspace setting StackShip fixes: the values that describe what it does, and the refusal of any other. */
interface FixedSetting {
  accepts: (value: unknown) => boolean;
  code: "RUN_AUTO_APPLY_FORBIDDEN" | "RUN_DESTROY_FORBIDDEN" | "DOCUMENT_INVALID";
  detail: string;
}

const isEmpty = (value: unknown) => value === null || (Array.isArray(value) && value.length === 0);

/**
 * The settings go-tfe and the `tfe` provider send that StackShip fixes (spec/tfe/README.md has
 * the table): each accepts the value that is StackShip's actual behaviour, which the workspace
 * document always shows, and refuses any other with 422 before anything is written, never
 * answering success without it.
 */
const FIXED_SETTINGS: Record<string, FixedSetting> = {
  "auto-apply": {
    accepts: (v) => v === false,
    code: "RUN_AUTO_APPLY_FORBIDDEN",
    detail: `${AUTO_APPLY_FORBIDDEN_DETAIL} A workspace cannot auto-apply: send auto-apply false (auto_apply = false on a tfe_workspace, or leave it out) and approve each run, for example by running tofu apply without -auto-approve.`,
  },
  "auto-apply-run-trigger": {
    accepts: (v) => v === false,
    code: "RUN_AUTO_APPLY_FORBIDDEN",
    detail: `${AUTO_APPLY_FORBIDDEN_DETAIL} A workspace cannot auto-apply runs of any origin: send auto-apply-run-trigger false or leave it out.`,
  },
  "allow-destroy-plan": {
    accepts: (v) => v === false,
    code: "RUN_DESTROY_FORBIDDEN",
    detail: `${DESTROY_FORBIDDEN_DETAIL} StackShip workspaces never allow destroy plans: send allow-destroy-plan false (allow_destroy_plan = false on a tfe_workspace, whose default is true).`,
  },
  "auto-destroy-at": {
    accepts: (v) => v === null,
    code: "RUN_DESTROY_FORBIDDEN",
    detail: `${DESTROY_FORBIDDEN_DETAIL} StackShip never schedules a destroy run: leave auto-destroy-at out.`,
  },
  "auto-destroy-activity-duration": {
    accepts: (v) => v === null,
    code: "RUN_DESTROY_FORBIDDEN",
    detail: `${DESTROY_FORBIDDEN_DETAIL} StackShip never schedules a destroy run: leave auto-destroy-activity-duration out.`,
  },
  "queue-all-runs": {
    accepts: (v) => v === true,
    code: "DOCUMENT_INVALID",
    detail:
      "StackShip queues the run of a push to a connected repository at once; it cannot hold it until a first manual run, so queue-all-runs can only be true.",
  },
  "execution-mode": {
    accepts: (v) => v === "remote",
    code: "DOCUMENT_INVALID",
    detail: "StackShip runs every workspace remotely; execution-mode can only be remote.",
  },
  operations: {
    accepts: (v) => v === true,
    code: "DOCUMENT_INVALID",
    detail: "StackShip runs every workspace remotely; operations can only be true.",
  },
  "file-triggers-enabled": {
    accepts: (v) => v === true,
    code: "DOCUMENT_INVALID",
    detail:
      "A push runs a StackShip workspace only when it changes files under its working directory or its connection's trigger paths; file-triggers-enabled can only be true.",
  },
  "speculative-enabled": {
    accepts: (v) => v === true,
    code: "DOCUMENT_INVALID",
    detail:
      "StackShip always runs speculative plans for pull requests and tofu plan; speculative-enabled can only be true.",
  },
  "trigger-prefixes": {
    accepts: isEmpty,
    code: "DOCUMENT_INVALID",
    detail:
      "A StackShip workspace's trigger paths belong to its GitHub connection, set through /v1; trigger-prefixes can only be empty here.",
  },
  "trigger-patterns": {
    accepts: isEmpty,
    code: "DOCUMENT_INVALID",
    detail:
      "A StackShip workspace's trigger paths belong to its GitHub connection, set through /v1; trigger-patterns can only be empty here.",
  },
  "global-remote-state": {
    accepts: (v) => v === false,
    code: "DOCUMENT_INVALID",
    detail:
      "A StackShip run reads only its own workspace's state, so no other workspace may read this one's; global-remote-state can only be false.",
  },
  "project-remote-state": {
    accepts: (v) => v === false,
    code: "DOCUMENT_INVALID",
    detail:
      "A StackShip run reads only its own workspace's state, so no other workspace may read this one's; project-remote-state can only be false.",
  },
  "assessments-enabled": {
    accepts: (v) => v === false,
    code: "DOCUMENT_INVALID",
    detail: "StackShip runs no health assessments; assessments-enabled can only be false.",
  },
};

/**
 * Refuses, before anything is written, a workspace setting StackShip does not offer rather than
 * answering success without it (FIXED_SETTINGS); a value StackShip already behaves by passes and
 * changes nothing.
 */
export function refuseFixedWorkspaceSettings(a: WorkspaceAttributes): void {
  for (const [name, setting] of Object.entries(FIXED_SETTINGS)) {
    const value = (a as Record<string, unknown>)[name];
    if (value !== undefined && !setting.accepts(value))
      throw new DomainError(setting.code, setting.detail, { source: { pointer: `/data/attributes/${name}` } });
  }
}

/** The filters and searches of the workspace list. */
const WORKSPACE_LIST_FILTERS = [
  "search[name]",
  "search[wildcard-name]",
  "search[tags]",
  "search[exclude-tags]",
  "filter[project][id]",
] as const;

/**
 * Whether the whole name matches a pattern where `*` stands for any text (`w1*`, `*prod`,
 * `*mid*`) and everything else is literal; linear (no regular expression built from input).
 */
export function matchesWildcard(name: string, pattern: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return name === pattern;
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (name.length < first.length + last.length || !name.startsWith(first) || !name.endsWith(last)) return false;
  let at = first.length;
  const end = name.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = name.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** Tag names from a comma-separated query value (the CLI sends them URL-encoded, joined by commas). */
function tagList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((tag) => tag.trim())
    .filter((tag) => tag.length > 0);
}

/** The names of a tag list (tags are added and removed by name). */
function tagNames(items: S["WorkspaceTagList"]["data"]): string[] {
  return items.map((tag) => tag.attributes.name);
}

/** Workspaces: reading (by id and by name), creating, updating, listing (the tags strategy selects here), their tags, and deleting. */
export const workspaceHandlers = {
  async getWorkspaceByName({ path, query, ctx }) {
    const organization = await loadOrganizationForCli(ctx, path.organization_name);
    const workspace = await ctx.services.stores.workspaces.getByName(organization.id, path.workspace_name);
    if (!workspace) throw notFound(`Workspace '${path.workspace_name}'`);
    if (!runMaySee(ctx, workspace))
      authorize(ctx, "workspace:read", workspaceTarget(workspace), `Workspace '${workspace.name}'`);
    const { data, included } = await workspaceResources(ctx, [workspace], query.include, organization.name);
    return { status: 200, body: included ? { data: data[0], included } : { data: data[0] } };
  },

  async getWorkspace({ path, query, ctx }) {
    const workspace = await loadWorkspaceForCli(ctx, path.workspace_id, "workspace:read");
    const { data, included } = await workspaceResources(ctx, [workspace], query.include);
    return { status: 200, body: included ? { data: data[0], included } : { data: data[0] } };
  },

  async createWorkspace({ path, body, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "workspace:read");
    const project = await loadProjectForNewWorkspace(ctx, organization, body.data.relationships?.project?.data?.id);
    const a = body.data.attributes;
    refuseFixedWorkspaceSettings(a);
    const workspace = await createWorkspace(ctx.services, principalOf(ctx), organization, project, {
      name: a.name,
      description: a.description,
      workingDirectory: a["working-directory"],
      opentofuVersion: a["terraform-version"],
      structuredRunOutputEnabled: a["structured-run-output-enabled"],
      tags: body.data.relationships?.tags?.data.map((tag) => tag.attributes.name),
    });
    return { status: 201, body: { data: await workspaceResource(ctx, workspace, organization.name) } };
  },

  async updateWorkspace({ path, body, ctx }) {
    let workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const a = body?.data?.attributes ?? {};
    refuseFixedWorkspaceSettings(a);
    workspace = await updateWorkspaceSettings(ctx.services, principalOf(ctx), workspace, {
      name: a.name,
      description: a.description,
      workingDirectory: a["working-directory"],
    });
    const structured = a["structured-run-output-enabled"];
    if (structured !== undefined)
      workspace = await setStructuredRunOutput(ctx.services, principalOf(ctx), workspace, structured);
    const requested = a["terraform-version"];
    if (requested !== undefined) {
      // The CLI PATCHes its own version right after creating a workspace and only warns on a
      // failure: a version this deployment provides becomes the pin, anything else keeps it.
      let resolved: string | undefined;
      try {
        resolved = resolveOpenTofuVersion(requested, ctx.services.opentofuVersions);
      } catch {
        resolved = undefined;
      }
      if (resolved !== undefined && resolved !== workspace.opentofuVersion) {
        const now = ctx.services.clock();
        const actor = principalOf(ctx);
        const before = workspace.opentofuVersion;
        workspace = await inTransaction(ctx.services.db, async (stores) => {
          const updated = await stores.workspaces.updateOpentofuVersion(workspace.id, resolved, now);
          if (!updated) throw notFound(`Workspace ${workspace.id}`);
          await stores.audit.record({
            organizationId: workspace.organizationId,
            actorId: actor.id,
            action: "workspace.opentofu_version_changed",
            targetType: "workspaces",
            targetId: workspace.id,
            data: { from: before, to: resolved, requested },
            createdAt: now,
          });
          return updated;
        });
      }
    }
    return { status: 200, body: { data: await workspaceResource(ctx, workspace) } };
  },

  async listWorkspaces({ path, query, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "workspace:read");
    const principal = principalOf(ctx);
    refuseUnknownFilters(query, WORKSPACE_LIST_FILTERS);
    const search = query["search[name]"];
    const wildcard = query["search[wildcard-name]"] || undefined;
    const project = query["filter[project][id]"];
    const excluded = tagList(query["search[exclude-tags]"]);
    const candidates = (
      await ctx.services.stores.workspaces.listByTags(organization.id, tagList(query["search[tags]"]))
    ).filter(
      (workspace) =>
        isAllowed(principal, "workspace:read", workspaceTarget(workspace)) &&
        (search === undefined || workspace.name.includes(search)) &&
        (wildcard === undefined || matchesWildcard(workspace.name, wildcard)) &&
        (project === undefined || workspace.projectId === project),
    );
    const matching = [];
    for (const workspace of candidates) {
      if (
        excluded.length > 0 &&
        (await ctx.services.stores.workspaces.tagsOf(workspace.id)).some((tag) => excluded.includes(tag))
      )
        continue;
      matching.push(workspace);
    }
    const { data: page, meta } = paginate(matching, query["page[number]"], query["page[size]"]);
    return { status: 200, body: { ...(await workspaceResources(ctx, page, query.include, organization.name)), meta } };
  },

  async listRemoteStateConsumers({ path, query, ctx }) {
    await loadWorkspace(ctx, path.workspace_id, "workspace:read");
    // NOTE: always empty: a run token sees only its own workspace, so no workspace reads another's state.
    const { data, meta } = paginate([] as S["Workspace"][], query["page[number]"], query["page[size]"]);
    return { status: 200, body: { data, meta } };
  },

  async addWorkspaceTags({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    await addWorkspaceTags(ctx.services, principalOf(ctx), workspace, tagNames(body.data));
    return { status: 204, body: undefined };
  },

  async listWorkspaceTags({ path, query, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:read");
    const names = await ctx.services.stores.workspaces.tagsOf(workspace.id);
    const { data, meta } = paginate(names, query["page[number]"], query["page[size]"]);
    return {
      status: 200,
      body: { data: data.map((name) => ({ type: "tags" as const, id: name, attributes: { name } })), meta },
    };
  },

  async removeWorkspaceTags({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    await removeWorkspaceTags(ctx.services, principalOf(ctx), workspace, tagNames(body.data));
    return { status: 204, body: undefined };
  },

  async deleteWorkspace({ path, ctx }) {
    return removeWorkspace(ctx, await loadWorkspace(ctx, path.workspace_id, "org:admin"), "force");
  },

  async safeDeleteWorkspace({ path, ctx }) {
    return removeWorkspace(ctx, await loadWorkspace(ctx, path.workspace_id, "org:admin"), "safe");
  },

  async deleteWorkspaceByName({ path, ctx }) {
    return removeWorkspace(ctx, await workspaceByName(ctx, path.organization_name, path.workspace_name), "force");
  },

  async safeDeleteWorkspaceByName({ path, ctx }) {
    return removeWorkspace(ctx, await workspaceByName(ctx, path.organization_name, path.workspace_name), "safe");
  },
} satisfies Pick<
  H,
  | "getWorkspaceByName"
  | "getWorkspace"
  | "createWorkspace"
  | "updateWorkspace"
  | "listWorkspaceTags"
  | "removeWorkspaceTags"
  | "listWorkspaces"
  | "listRemoteStateConsumers"
  | "addWorkspaceTags"
  | "deleteWorkspace"
  | "safeDeleteWorkspace"
  | "deleteWorkspaceByName"
  | "safeDeleteWorkspaceByName"
>;

/** A workspace by organization and name, for an organization administrator (404 like a missing one otherwise). */
async function workspaceByName(ctx: RequestContext, organizationName: string, name: string): Promise<Workspace> {
  const organization = await loadOrganization(ctx, organizationName, "workspace:read");
  const workspace = await ctx.services.stores.workspaces.getByName(organization.id, name);
  return authorizeFound(ctx, "org:admin", workspace, workspace && workspaceTarget(workspace), `Workspace '${name}'`);
}

async function removeWorkspace(
  ctx: RequestContext,
  workspace: Workspace,
  mode: WorkspaceDeletion,
): Promise<{ status: 204; body: undefined }> {
  await deleteWorkspace(ctx.services, principalOf(ctx), workspace, mode);
  return { status: 204, body: undefined };
}
