import type { Workspace } from "../domain/records.ts";
import type { Stores } from "../store/index.ts";

/** Records `action` on the workspace by `actorId` (with `data`, when given) in the audit log, at `now`. */
export async function auditWorkspace(
  stores: Stores,
  workspace: Workspace,
  actorId: string | null,
  action: string,
  now: Date,
  data?: Record<string, unknown>,
): Promise<void> {
  await stores.audit.recordAction(
    { organizationId: workspace.organizationId, actorId, createdAt: now },
    action,
    ["workspaces", workspace.id],
    data,
  );
}
