import type { components } from "../../../../generated/v1/types.gen.ts";
import { forceUnlockWorkspace, lockWorkspaceForUser, unlockWorkspaceForUser } from "../../commands/workspace-locks.ts";
import type { WorkspaceLock } from "../../store/workspace-lock-repository.ts";
import { principalOf } from "../authorize.ts";
import { loadWorkspace } from "../lookup.ts";
import type { H } from "./types.ts";

function presentLock(lock: WorkspaceLock): components["schemas"]["WorkspaceLockDocument"] {
  return {
    data: {
      type: "workspace-locks",
      id: lock.workspaceId,
      attributes: {
        holder_kind: lock.holder.kind,
        holder_id: lock.holder.id,
        reason: lock.reason,
        locked_at: lock.lockedAt,
        fence: lock.fence,
      },
    },
  };
}

/** A person's (or a token's) workspace lock from the dashboard and the API: lock with a reason, unlock, force-unlock. */
export const workspaceLockHandlers = {
  async lockWorkspace({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const lock = await lockWorkspaceForUser(
      ctx.services,
      principalOf(ctx),
      workspace,
      body.data.attributes.reason.trim(),
    );
    return { status: 200, body: presentLock(lock) };
  },

  async unlockWorkspace({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    return { status: 200, body: presentLock(await unlockWorkspaceForUser(ctx.services, principalOf(ctx), workspace)) };
  },

  // org:admin on the workspace's organization is checked by loadWorkspace (and the operation binding).
  async forceUnlockWorkspace({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "org:admin");
    return { status: 200, body: presentLock(await forceUnlockWorkspace(ctx.services, principalOf(ctx), workspace)) };
  },
} satisfies Pick<H, "lockWorkspace" | "unlockWorkspace" | "forceUnlockWorkspace">;
