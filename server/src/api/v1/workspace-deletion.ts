import { deleteWorkspace } from "../../commands/workspaces.ts";
import { DomainError } from "../../domain/errors.ts";
import { principalOf } from "../authorize.ts";
import { loadWorkspace } from "../lookup.ts";
import type { H } from "./types.ts";

/** Deleting a workspace from the dashboard or the API: the same command as /api/v2's safe-delete and force delete. */
export const workspaceDeletionHandlers = {
  async deleteWorkspace({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "org:admin");
    const { name, force } = body.data.attributes;
    if (name !== workspace.name) {
      throw new DomainError("DOCUMENT_INVALID", `Type the workspace's name exactly (${workspace.name}) to delete it.`, {
        source: { pointer: "/data/attributes/name" },
      });
    }
    await deleteWorkspace(ctx.services, principalOf(ctx), workspace, force === true ? "force" : "safe");
    return { status: 204, body: undefined };
  },
} satisfies Pick<H, "deleteWorkspace">;
