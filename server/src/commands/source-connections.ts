import { DomainError } from "../domain/errors.ts";
import type { Workspace } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { inTransaction, type SourceConnection } from "../store/index.ts";

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
 * connection. The tracked branch and working directory are the workspace's own and change with
 * it, in the same transaction; audited.
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
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const claimed = await stores.github.organizationsOfInstallation(input.installationId);
    if (claimed.some((organizationId) => organizationId !== workspace.organizationId)) {
      throw new DomainError(
        "SOURCE_INSTALLATION_IN_USE",
        `Installation ${input.installationId} is connected to workspaces of another organization; an installation serves one organization. Install the GitHub App on your own account or organization and use that installation.`,
        {
          source: { pointer: "/data/attributes/installation_id" },
        },
      );
    }
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
    if (!updated) throw new DomainError("NOT_FOUND", `Workspace ${workspace.id} does not exist, or this token may not see it.`);
    await stores.audit.record({
      organizationId: workspace.organizationId,
      actorId: actor.id,
      action: before ? "source_connection.updated" : "source_connection.created",
      targetType: "workspaces",
      targetId: workspace.id,
      data: {
        installation_id: input.installationId,
        repository: input.repository,
        tracked_branch: trackedBranch,
        working_directory: workingDirectory,
        trigger_paths: triggerPaths,
      },
      createdAt: now,
    });
    return { connection, workspace: updated };
  });
}

/** Disconnects a workspace; 404 when it has no connection. Runs already created stay. */
export async function deleteSourceConnection(services: Services, actor: AuthenticatedPrincipal, workspace: Workspace): Promise<void> {
  const now = services.clock();
  await inTransaction(services.db, async (stores) => {
    const deleted = await stores.github.deleteConnection(workspace.id);
    if (!deleted) throw new DomainError("NOT_FOUND", `Workspace ${workspace.name} has no source connection.`);
    await stores.audit.record({
      organizationId: workspace.organizationId,
      actorId: actor.id,
      action: "source_connection.deleted",
      targetType: "workspaces",
      targetId: workspace.id,
      createdAt: now,
    });
  });
}
