import { DomainError } from "../domain/errors.ts";
import type { Workspace } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { inTransaction, type SourceConnection } from "../store/index.ts";
import { checkConnectionAccess, isOrganizationAdmin } from "./github-installations.ts";
import { auditWorkspace } from "./workspace-audit.ts";

/** Only an administrator of the workspace's organization itself connects, changes or removes a source. */
function requireWorkspaceOrganizationAdmin(actor: AuthenticatedPrincipal, workspace: Workspace): void {
  if (!isOrganizationAdmin(actor, workspace.organizationId))
    throw new DomainError(
      "FORBIDDEN",
      "Only an organization administrator may connect, change or disconnect a workspace's repository.",
    );
}

/** A source connection as the API writes it (already schema-valid). */
export interface SourceConnectionInput {
  installationId: number;
  repository: string;
  trackedBranch?: string;
  workingDirectory?: string;
  triggerPaths?: string[];
}

/**
 * Connects a workspace to a GitHub repository through an installation, or changes the
 * connection (organization administrators only). The installation must be bound to the
 * workspace's organization and GitHub must confirm it can access the repository, both checked
 * before anything is written. The tracked branch and working directory are the workspace's own
 * and change with it, in the same transaction; audited.
 */
export async function putSourceConnection(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  input: SourceConnectionInput,
): Promise<{ connection: SourceConnection; workspace: Workspace }> {
  const workingDirectory = (input.workingDirectory ?? "").replace(/^\/+|\/+$/g, "");
  const trackedBranch = input.trackedBranch ?? workspace.trackedBranch;
  const triggerPaths = [...new Set(input.triggerPaths ?? [])];
  requireWorkspaceOrganizationAdmin(actor, workspace);
  // Checked before anything is written: bound to this organization, and GitHub confirms the repository.
  await checkConnectionAccess(services, workspace.organizationId, input.installationId, input.repository);
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const before = await stores.github.getConnection(workspace.id);
    const connection = await stores.github.putConnection({
      workspaceId: workspace.id,
      organizationId: workspace.organizationId,
      installationId: input.installationId,
      repository: input.repository,
      triggerPaths,
      now,
    });
    const updated = await stores.workspaces.updateSource(workspace.id, { trackedBranch, workingDirectory }, now);
    if (!updated)
      throw new DomainError("NOT_FOUND", `Workspace ${workspace.id} does not exist, or this token may not see it.`);
    await auditWorkspace(
      stores,
      workspace,
      actor.id,
      before ? "source_connection.updated" : "source_connection.created",
      now,
      {
        installation_id: input.installationId,
        repository: input.repository,
        tracked_branch: trackedBranch,
        working_directory: workingDirectory,
        trigger_paths: triggerPaths,
      },
    );
    return { connection, workspace: updated };
  });
}

/** Disconnects a workspace; 404 when it has no connection. Runs already created stay. */
export async function deleteSourceConnection(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
): Promise<void> {
  requireWorkspaceOrganizationAdmin(actor, workspace);
  const now = services.clock();
  await inTransaction(services.db, async (stores) => {
    const deleted = await stores.github.deleteConnection(workspace.id);
    if (!deleted) throw new DomainError("NOT_FOUND", `Workspace ${workspace.name} has no source connection.`);
    await auditWorkspace(stores, workspace, actor.id, "source_connection.deleted", now);
  });
}
