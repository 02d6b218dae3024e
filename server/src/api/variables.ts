import { deleteVariable } from "../commands/variables.ts";
import type { RequestContext } from "../http/app.ts";
import { principalOf } from "./authorize.ts";
import { loadVariable } from "./lookup.ts";

/**
 * Deleting the workspace variable a path names: the one handler of /v1's `deleteVariable` and the
 * tfe surface's (its `vars` are /v1's variables).
 */
export const variableDeletionHandler = {
  async deleteVariable({
    path,
    ctx,
  }: {
    path: { workspace_id: string; variable_id: string };
    query: Record<string, unknown>;
    body: unknown;
    ctx: RequestContext;
  }): Promise<{ status: 204; body: undefined }> {
    const { workspace, variable } = await loadVariable(ctx, path, "workspace:write");
    await deleteVariable(ctx.services, principalOf(ctx), workspace, variable);
    return { status: 204, body: undefined };
  },
};
