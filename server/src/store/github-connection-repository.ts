// The GitHub App pipeline's connection records: workspaces' source connections, installations
// bound to organizations (with the setup states of the App's setup flow) and what installation
// events said. GitHubRepository (github-repository.ts) extends it with deliveries, replay
// protection and check runs; the stores expose both as one (`stores.github`).
import { Repository } from "./repository.ts";
import { toConnection, type ConnectionRow, type GitHubInstallation, type SourceConnection } from "./github-records.ts";
import type { DbBoolean } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { booleanFromRow, isoForWrite, isoFromRow, numberFromRow } from "./values.ts";

/** An installation bound to an organization (through the App's setup flow or by a deployment administrator). */
export interface InstallationBinding {
  installationId: number;
  organizationId: string;
  account: string | null;
  boundBy: string;
  boundAt: string;
}

/** A setup state that was just used: who it was issued to and when. */
export interface SetupState {
  organizationId: string;
  userId: string;
  createdAt: string;
}

interface BindingRow {
  installation_id: number | string;
  organization_id: string;
  account: string | null;
  bound_by: string;
  bound_at: string | Date;
}

const toBinding = (row: BindingRow): InstallationBinding => ({
  installationId: numberFromRow(row.installation_id),
  organizationId: row.organization_id,
  account: row.account,
  boundBy: row.bound_by,
  boundAt: isoFromRow(row.bound_at),
});

/** How a repository (owner/name, any case) is keyed. */
export const repositoryKey = (repository: string) => repository.toLowerCase();

/** Source connections, installation bindings and setup states, and installations of the GitHub App pipeline. */
export class GitHubConnectionRepository extends Repository {
  // ---- source connections

  /** Creates or replaces the workspace's connection. */
  async putConnection(
    input: Omit<SourceConnection, "provider" | "createdAt" | "updatedAt"> & { now: Date | string },
  ): Promise<SourceConnection> {
    const now = isoForWrite(input.now);
    return translating(this.dialect, async () => {
      const existing = await this.db<ConnectionRow>("source_connections")
        .where({ workspace_id: input.workspaceId })
        .first();
      const row: ConnectionRow = {
        workspace_id: input.workspaceId,
        organization_id: input.organizationId,
        provider: "github",
        installation_id: input.installationId,
        repository: input.repository,
        repository_key: repositoryKey(input.repository),
        trigger_paths: JSON.stringify(input.triggerPaths),
        created_at: existing ? isoFromRow(existing.created_at) : now,
        updated_at: now,
      };
      if (existing)
        await this.db<ConnectionRow>("source_connections").where({ workspace_id: input.workspaceId }).update(row);
      else await this.db<ConnectionRow>("source_connections").insert(row);
      return toConnection(row);
    });
  }

  async getConnection(workspaceId: string): Promise<SourceConnection | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<ConnectionRow>("source_connections").where({ workspace_id: workspaceId }).first();
      return row && toConnection(row);
    });
  }

  /** Deletes the connection; whether there was one. */
  async deleteConnection(workspaceId: string): Promise<boolean> {
    return translating(
      this.dialect,
      async () => (await this.db("source_connections").where({ workspace_id: workspaceId }).delete()) > 0,
    );
  }

  /** The organizations whose workspaces connect through `installationId`. */
  async organizationsOfInstallation(installationId: number): Promise<string[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db("source_connections")
        .distinct<{ organization_id: string }[]>("organization_id")
        .where({ installation_id: installationId });
      return rows.map((r) => r.organization_id);
    });
  }

  /** Every connection to `repository` (any case), oldest first. */
  async connectionsOf(repository: string): Promise<SourceConnection[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<ConnectionRow>("source_connections")
        .where({ repository_key: repositoryKey(repository) })
        .orderBy("created_at");
      return rows.map(toConnection);
    });
  }

  // ---- installation bindings and setup states

  /** The organization an installation is bound to, if any. */
  async getBinding(installationId: number): Promise<InstallationBinding | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<BindingRow>("github_installation_bindings")
        .where({ installation_id: installationId })
        .first();
      return row && toBinding(row);
    });
  }

  /**
   * Binds an installation to an organization unless it is bound already; returns the binding
   * that holds afterwards and whether this call created it.
   */
  async bindInstallation(input: {
    installationId: number;
    organizationId: string;
    account: string | null;
    boundBy: string;
    now: Date | string;
  }): Promise<{ binding: InstallationBinding; created: boolean }> {
    const row: BindingRow = {
      installation_id: input.installationId,
      organization_id: input.organizationId,
      account: input.account,
      bound_by: input.boundBy,
      bound_at: isoForWrite(input.now),
    };
    const existing = await this.getBinding(input.installationId);
    if (existing) return { binding: existing, created: false };
    try {
      await translating(this.dialect, () => this.db("github_installation_bindings").insert(row));
    } catch (error) {
      const winner = await this.getBinding(input.installationId);
      if (winner) return { binding: winner, created: false };
      throw error;
    }
    return { binding: toBinding(row), created: true };
  }

  /** Removes the organization's binding of the installation; whether there was one. */
  async releaseBinding(installationId: number, organizationId: string): Promise<boolean> {
    return translating(
      this.dialect,
      async () =>
        (await this.db("github_installation_bindings")
          .where({ installation_id: installationId, organization_id: organizationId })
          .delete()) > 0,
    );
  }

  /** How many of the organization's workspaces connect through the installation. */
  async countConnectionsThrough(installationId: number, organizationId: string): Promise<number> {
    return translating(this.dialect, async () => {
      const row = await this.db("source_connections")
        .where({ installation_id: installationId, organization_id: organizationId })
        .count<{ n: number | string }[]>({ n: "*" })
        .first();
      return Number(row?.n ?? 0);
    });
  }

  /** Records a setup state (by its SHA-256) issued to a session for an organization. */
  async createSetupState(input: {
    stateHash: string;
    organizationId: string;
    userId: string;
    sessionId: string;
    now: Date | string;
    expiresAt: Date | string;
  }): Promise<void> {
    await translating(this.dialect, () =>
      this.db("github_installation_states").insert({
        state_hash: input.stateHash,
        organization_id: input.organizationId,
        user_id: input.userId,
        session_id: input.sessionId,
        created_at: isoForWrite(input.now),
        expires_at: isoForWrite(input.expiresAt),
        used_at: null,
      }),
    );
  }

  /**
   * Uses a setup state once (compare and set): the state if it was unused, unexpired and issued
   * to `sessionId`; undefined otherwise. A state presented by another session is not used up.
   */
  async consumeSetupState(stateHash: string, sessionId: string, now: Date | string): Promise<SetupState | undefined> {
    const at = isoForWrite(now);
    return translating(this.dialect, async () => {
      const changed = await this.db("github_installation_states")
        .where({ state_hash: stateHash, session_id: sessionId })
        .whereNull("used_at")
        .andWhere("expires_at", ">", at)
        .update({ used_at: at });
      if (changed === 0) return undefined;
      const row = (await this.db("github_installation_states").where({ state_hash: stateHash }).first()) as
        { organization_id: string; user_id: string; created_at: string | Date } | undefined;
      return row && { organizationId: row.organization_id, userId: row.user_id, createdAt: isoFromRow(row.created_at) };
    });
  }
  // ---- installations

  /** Records what an installation event said (replacing the selected repositories when `repositories` is given). */
  async putInstallation(input: {
    id: number;
    account: string | null;
    repositorySelection: "all" | "selected";
    suspended: boolean;
    deleted: boolean;
    repositories?: string[];
    now: Date | string;
  }): Promise<void> {
    const now = isoForWrite(input.now);
    await translating(this.dialect, async () => {
      const row = {
        id: input.id,
        account: input.account,
        repository_selection: input.repositorySelection,
        suspended: input.suspended,
        deleted: input.deleted,
        updated_at: now,
      };
      await this.db("github_installations").insert(row).onConflict("id").merge();
      if (input.repositories !== undefined) {
        await this.db("github_installation_repositories").where({ installation_id: input.id }).delete();
        const keys = [...new Set(input.repositories.map(repositoryKey))];
        if (keys.length > 0)
          await this.db("github_installation_repositories").insert(
            keys.map((key) => ({ installation_id: input.id, repository_key: key })),
          );
      }
    });
  }

  /** Adds and removes selected repositories of a known installation. */
  async changeInstallationRepositories(input: {
    id: number;
    added: string[];
    removed: string[];
    repositorySelection: "all" | "selected";
    now: Date | string;
  }): Promise<void> {
    await translating(this.dialect, async () => {
      await this.db("github_installations")
        .where({ id: input.id })
        .update({ repository_selection: input.repositorySelection, updated_at: isoForWrite(input.now) });
      const removed = input.removed.map(repositoryKey);
      if (removed.length > 0)
        await this.db("github_installation_repositories")
          .where({ installation_id: input.id })
          .whereIn("repository_key", removed)
          .delete();
      const added = [...new Set(input.added.map(repositoryKey))];
      if (added.length > 0)
        await this.db("github_installation_repositories")
          .insert(added.map((key) => ({ installation_id: input.id, repository_key: key })))
          .onConflict(["installation_id", "repository_key"])
          .ignore();
    });
  }

  async getInstallation(id: number): Promise<GitHubInstallation | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<{
        id: number | string;
        account: string | null;
        repository_selection: string;
        suspended: DbBoolean;
        deleted: DbBoolean;
      }>("github_installations")
        .where({ id })
        .first();
      if (!row) return undefined;
      const repositories = await this.db("github_installation_repositories")
        .select<{ repository_key: string }[]>("repository_key")
        .where({ installation_id: id })
        .orderBy("repository_key");
      return {
        id: numberFromRow(row.id),
        account: row.account,
        repositorySelection: row.repository_selection === "all" ? "all" : "selected",
        suspended: booleanFromRow(row.suspended),
        deleted: booleanFromRow(row.deleted),
        repositories: repositories.map((r) => r.repository_key),
      };
    });
  }
}
