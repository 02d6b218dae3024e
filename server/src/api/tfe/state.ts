import { isAllowed } from "../../domain/authorization.ts";
import { DomainError } from "../../domain/errors.ts";
import type { Workspace } from "../../domain/records.ts";
import type { RequestContext } from "../../http/app.ts";
import { isRunPrincipal } from "../../domain/principal.ts";
import type { StateVersion } from "../../store/index.ts";
import { authorizeFound, notFound, principalOf, workspaceTarget } from "../authorize.ts";
import {
  createStateVersion,
  mayReadRawState,
  readStateBytes,
  stateUploadUrls,
  uploadJsonState,
  uploadState,
} from "../../commands/state-versions.ts";
import { redactedOutputValues } from "../../commands/state-output-values.ts";
import {
  alreadyUnlocked,
  forceUnlockWorkspace,
  lockedBy,
  lockWorkspaceForUser,
  unlockWorkspaceForUser,
} from "../../commands/workspace-locks.ts";
import { loadWorkspaceForCli } from "./access.ts";
import { workspaceResource } from "./workspaces.ts";
import { parseStateVersionOutputId, presentStateVersion, presentStateVersionOutput } from "./presenters.ts";
import type { H } from "./types.ts";

/** The default reason of a lock taken without one. */
const DEFAULT_LOCK_REASON = "Locked through the API";

/** The workspace document with the lock as it is now (the body of every lock action). */
async function workspaceDocument(ctx: RequestContext, workspace: Workspace) {
  return { data: await workspaceResource(ctx, workspace) };
}

/** A state version the caller may see: a run token its run's workspace's, anyone else with `workspace:read`. */
/**
 * A state version's outputs as this caller may see them: values only with state:read on the
 * workspace (or a run token of it), and then redacted by value like the logs
 * (commands/state-output-values.ts); otherwise names and types, every value null.
 */
async function presentOutputs(ctx: RequestContext, stateVersion: StateVersion) {
  const principal = principalOf(ctx);
  const workspace = await ctx.services.stores.workspaces.getById(stateVersion.workspaceId);
  const showValues = isRunPrincipal(principal)
    ? principal.run.workspaceId === stateVersion.workspaceId
    : workspace !== undefined && isAllowed(principal, "state:read", workspaceTarget(workspace));
  const outputs = showValues ? await redactedOutputValues(ctx.services, stateVersion) : (stateVersion.outputs ?? []);
  return outputs.map((output, index) => presentStateVersionOutput(stateVersion, output, index, showValues));
}

async function loadStateVersion(ctx: RequestContext, id: string): Promise<StateVersion> {
  const what = `State version ${id}`;
  const stateVersion = /^sv-[0-9a-z]{16}$/.test(id) ? await ctx.services.stores.stateVersions.getById(id) : undefined;
  if (!stateVersion) throw notFound(what);
  const principal = principalOf(ctx);
  if (isRunPrincipal(principal)) {
    if (principal.run.workspaceId !== stateVersion.workspaceId) throw notFound(what);
    return stateVersion;
  }
  const workspace = await ctx.services.stores.workspaces.getById(stateVersion.workspaceId);
  return authorizeFound(ctx, "workspace:read", stateVersion, workspace && workspaceTarget(workspace), what);
}

/**
 * The workspace lock and state-version operations of the compatibility surface.
 *
 * Run tokens and the lock (contract §12.3 (b)): the runner takes the workspace lock for a run
 * before its `tofu` starts and releases it when the run ends. The run's own token therefore gets
 * 200 from `lock` while its run holds the lock (re-entrant, no new fence) and 200 from `unlock`
 * without anything being released. A plan-phase token gets 200 from both and takes nothing: a
 * plan never writes state, so speculative plans run alongside whatever holds the lock. An
 * apply-phase token of a run that does not hold the lock gets 409: it must never take a fresh
 * lock (and fence) behind the runner's back.
 */
export const stateHandlers = {
  async lockWorkspace({ path, body, ctx }) {
    const workspace = await loadWorkspaceForCli(ctx, path.workspace_id, "workspace:write");
    const principal = principalOf(ctx);
    if (isRunPrincipal(principal)) {
      const lock = await ctx.services.stores.workspaceLocks.current(workspace.id);
      const heldByRun = lock?.holder.kind === "run" && lock.holder.id === principal.run.runId;
      if (!heldByRun && principal.run.phase === "apply") {
        if (lock)
          throw lockedBy(workspace.id, lock, `Run ${principal.run.runId} cannot apply without the workspace lock.`);
        throw new DomainError(
          "RUN_TOKEN_LOCK_REQUIRED",
          `Run ${principal.run.runId} does not hold the lock of workspace ${workspace.id}; StackShip takes it for the run before the apply starts, and a run token never takes it itself.`,
        );
      }
      return { status: 200, body: await workspaceDocument(ctx, workspace) };
    }
    await lockWorkspaceForUser(
      ctx.services,
      principal,
      workspace,
      body?.data?.attributes?.reason ?? DEFAULT_LOCK_REASON,
    );
    return { status: 200, body: await workspaceDocument(ctx, workspace) };
  },

  async unlockWorkspace({ path, ctx }) {
    const workspace = await loadWorkspaceForCli(ctx, path.workspace_id, "workspace:write");
    const principal = principalOf(ctx);
    if (isRunPrincipal(principal)) {
      if (principal.run.phase === "apply") {
        const lock = await ctx.services.stores.workspaceLocks.current(workspace.id);
        if (!lock) throw alreadyUnlocked(workspace.id);
        if (lock.holder.kind !== "run" || lock.holder.id !== principal.run.runId) throw lockedBy(workspace.id, lock);
      }
      return { status: 200, body: await workspaceDocument(ctx, workspace) };
    }
    await unlockWorkspaceForUser(ctx.services, principal, workspace);
    return { status: 200, body: await workspaceDocument(ctx, workspace) };
  },

  // org:admin is enforced by the operation binding, which also refuses run tokens (they hold it nowhere).
  async forceUnlockWorkspace({ path, ctx }) {
    const principal = principalOf(ctx);
    const workspace = await loadWorkspaceForCli(ctx, path.workspace_id, "org:admin");
    await forceUnlockWorkspace(ctx.services, principal, workspace);
    return { status: 200, body: await workspaceDocument(ctx, workspace) };
  },

  async getCurrentStateVersion({ path, ctx }) {
    const workspace = await loadWorkspaceForCli(ctx, path.workspace_id, "workspace:read");
    const current = await ctx.services.stores.stateVersions.current(workspace.id);
    if (!current) throw new DomainError("NOT_FOUND", `Workspace ${workspace.id} has no state yet.`);
    return { status: 200, body: { data: presentStateVersion(current) } };
  },

  async listCurrentStateVersionOutputs({ path, ctx }) {
    const workspace = await loadWorkspaceForCli(ctx, path.workspace_id, "workspace:read");
    const current = await ctx.services.stores.stateVersions.current(workspace.id);
    const data = current ? await presentOutputs(ctx, current) : [];
    return {
      status: 200,
      body: {
        data,
        meta: {
          pagination: {
            "current-page": 1,
            "next-page": null,
            "prev-page": null,
            "total-count": data.length,
            "total-pages": 1,
          },
        },
      },
    };
  },

  async createStateVersion({ path, body, ctx }) {
    const workspace = await loadWorkspaceForCli(ctx, path.workspace_id, "workspace:read");
    const a = body.data.attributes;
    const stateVersion = await createStateVersion(ctx.services, principalOf(ctx), workspace, {
      serial: a.serial,
      md5: a.md5,
      lineage: a.lineage,
      force: a.force,
      jsonStateOutputs: a["json-state-outputs"],
      runId: body.data.relationships?.run?.data?.id ?? null,
    });
    return {
      status: 201,
      body: { data: presentStateVersion(stateVersion, stateUploadUrls(ctx.services, ctx.baseUrl, stateVersion)) },
    };
  },

  async getStateVersion({ path, ctx }) {
    const stateVersion = await loadStateVersion(ctx, path.state_version_id);
    return { status: 200, body: { data: presentStateVersion(stateVersion) } };
  },

  async downloadStateVersion({ path, ctx }) {
    const stateVersion = await loadStateVersion(ctx, path.state_version_id);
    const principal = principalOf(ctx);
    const workspace = await ctx.services.stores.workspaces.getById(stateVersion.workspaceId);
    if (!mayReadRawState(principal, stateVersion, workspace)) {
      throw new DomainError(
        "FORBIDDEN",
        isRunPrincipal(principal)
          ? `State version ${stateVersion.id} is ${stateVersion.status} and not this run's; only published state or the run's own pending upload can be read.`
          : stateVersion.status === "finalized"
            ? "Reading raw state needs the 'state:read' permission on this workspace."
            : `State version ${stateVersion.id} is ${stateVersion.status}, not published; an unpublished upload is read only through the guarded emergency-state download.`,
      );
    }
    const bytes = await readStateBytes(ctx.services, stateVersion);
    if (!isRunPrincipal(principal) && workspace) {
      await ctx.services.stores.audit.record({
        organizationId: workspace.organizationId,
        actorId: principal.id,
        action: "state_version.downloaded",
        targetType: "state-versions",
        targetId: stateVersion.id,
        data: { workspace_id: workspace.id, serial: stateVersion.serial, sha256: stateVersion.sha256 },
        createdAt: ctx.services.clock(),
      });
    }
    return { status: 200, body: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  },

  async getStateVersionOutput({ path, ctx }) {
    const what = `State version output ${path.state_version_output_id}`;
    const parsed = parseStateVersionOutputId(path.state_version_output_id);
    if (!parsed) throw notFound(what);
    const stateVersion = await loadStateVersion(ctx, parsed.stateVersionId);
    if (!stateVersion.outputs?.[parsed.index]) throw notFound(what);
    return { status: 200, body: { data: (await presentOutputs(ctx, stateVersion))[parsed.index] } };
  },

  async uploadStateVersion({ path, body, ctx }) {
    await uploadState(ctx.services, path.upload_token, body);
    return { status: 204, body: undefined };
  },

  async uploadStateVersionJson({ path, ctx }) {
    await uploadJsonState(ctx.services, path.upload_token);
    return { status: 204, body: undefined };
  },
} satisfies Partial<H>;
