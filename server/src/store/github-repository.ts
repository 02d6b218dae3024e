import { Repository } from "./repository.ts";
import {
  toCheckRun,
  toConnection,
  toDelivery,
  type CheckRunRow,
  type ConnectionRow,
  type DeliveryRow,
  type DeliveryStatus,
  type GitHubCheckRun,
  type GitHubDelivery,
  type GitHubInstallation,
  type SourceConnection,
} from "./github-records.ts";
import type { DbBoolean } from "./rows.ts";
import { atomically } from "./run-events.ts";
import { translating } from "./translate-error.ts";
import { booleanFromRow, isoForWrite, isoFromRow, numberFromRow } from "./values.ts";

/** The graphile-worker task a queued delivery is dispatched as (PostgreSQL). */
export const GITHUB_DELIVERY_TASK = "stackship_github_delivery";

export type { DeliveryStatus, GitHubCheckRun, GitHubDelivery, GitHubInstallation, SourceConnection } from "./github-records.ts";

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

const repositoryKey = (repository: string) => repository.toLowerCase();

/** Source connections, webhook deliveries, installations and check runs of the GitHub App pipeline. */
export class GitHubRepository extends Repository {
  // ---- source connections

  /** Creates or replaces the workspace's connection. */
  async putConnection(input: Omit<SourceConnection, "provider" | "createdAt" | "updatedAt"> & { now: Date | string }): Promise<SourceConnection> {
    const now = isoForWrite(input.now);
    return translating(this.dialect, async () => {
      const existing = await this.db<ConnectionRow>("source_connections").where({ workspace_id: input.workspaceId }).first();
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
      if (existing) await this.db<ConnectionRow>("source_connections").where({ workspace_id: input.workspaceId }).update(row);
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
    return translating(this.dialect, async () => (await this.db("source_connections").where({ workspace_id: workspaceId }).delete()) > 0);
  }

  /** The organizations whose workspaces connect through `installationId`. */
  async organizationsOfInstallation(installationId: number): Promise<string[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db("source_connections").distinct<{ organization_id: string }[]>("organization_id").where({ installation_id: installationId });
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

  // ---- deliveries

  /**
   * Records a verified delivery, queued. Returns the recorded delivery and whether this call
   * created it (false: a redelivery of an id already recorded, left exactly as it was).
   */
  async recordDelivery(
    input: Pick<GitHubDelivery, "id" | "event" | "action" | "installationId" | "repository" | "payload" | "status"> &
      Partial<Pick<GitHubDelivery, "outcome" | "detail">> & { now: Date | string },
  ): Promise<{ delivery: GitHubDelivery; created: boolean }> {
    const now = isoForWrite(input.now);
    const row: DeliveryRow = {
      id: input.id,
      event: input.event,
      action: input.action,
      installation_id: input.installationId,
      repository: input.repository,
      repository_key: input.repository === null ? null : repositoryKey(input.repository),
      // Kept only while the job needs it.
      payload: input.status === "queued" ? input.payload : "",
      status: input.status,
      outcome: input.outcome ?? null,
      detail: input.detail ?? null,
      attempts: 0,
      run_after: now,
      locked_by: null,
      locked_at: null,
      run_ids: "[]",
      received_at: now,
      processed_at: input.status === "queued" ? null : now,
      updated_at: now,
    };
    const existing = await this.getDelivery(input.id);
    if (existing) return { delivery: existing, created: false };
    try {
      await translating(this.dialect, () => this.db("github_deliveries").insert(row));
    } catch (error) {
      // A concurrent redelivery won the insert: that one is the record.
      const winner = await this.getDelivery(input.id);
      if (winner) return { delivery: winner, created: false };
      throw error;
    }
    return { delivery: toDelivery(row), created: true };
  }

  /**
   * On PostgreSQL a queued delivery is also handed to graphile-worker, which wakes a GitHub worker
   * in any API process through LISTEN/NOTIFY; the github_deliveries row stays the record that
   * claims and retries work on (SQLite: the in-process loop polls it).
   */
  async dispatchDelivery(id: string, runAt: Date | string): Promise<void> {
    if (this.dialect !== "postgres") return;
    await this.db.raw("select graphile_worker.add_job(?::text, json_build_object('delivery_id', ?::text), run_at => ?::timestamptz, max_attempts => 1)", [
      GITHUB_DELIVERY_TASK,
      id,
      isoForWrite(runAt),
    ]);
  }

  async getDelivery(id: string): Promise<GitHubDelivery | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<DeliveryRow>("github_deliveries").where({ id }).first();
      return row && toDelivery(row);
    });
  }

  /** Claims a queued delivery that is due (compare and set); any due one when `id` is not given. */
  async claimDelivery(workerId: string, now: Date | string, id?: string): Promise<GitHubDelivery | undefined> {
    const at = isoForWrite(now);
    return translating(this.dialect, () =>
      atomically(this.db, this.dialect, async (db) => {
        const query = db<DeliveryRow>("github_deliveries").where({ status: "queued" }).andWhere("run_after", "<=", at);
        const candidate = await (id ? query.andWhere({ id }) : query).orderBy([{ column: "run_after" }, { column: "id" }]).first();
        if (!candidate) return undefined;
        const changed = await db("github_deliveries")
          .where({ id: candidate.id, status: "queued" })
          .update({ status: "processing", locked_by: workerId, locked_at: at, attempts: candidate.attempts + 1, updated_at: at });
        if (changed === 0) return undefined;
        const row = await db<DeliveryRow>("github_deliveries").where({ id: candidate.id }).first();
        return row && toDelivery(row);
      }),
    );
  }

  /** Ends a processing delivery: processed, ignored, refused or failed, with its outcome (its payload, up to 5 MiB, is no longer kept). */
  async finishDelivery(
    id: string,
    input: { status: Exclude<DeliveryStatus, "queued" | "processing">; outcome: string; detail: string; runIds?: string[]; now: Date | string },
  ): Promise<void> {
    const at = isoForWrite(input.now);
    await translating(this.dialect, () =>
      this.db("github_deliveries")
        .where({ id })
        .update({
          status: input.status,
          outcome: input.outcome,
          detail: input.detail,
          run_ids: JSON.stringify(input.runIds ?? []),
          payload: "",
          processed_at: at,
          locked_by: null,
          locked_at: null,
          updated_at: at,
        }),
    );
  }

  /** Puts a processing delivery back in the queue until `runAfter` (a retry after a failure). */
  async retryDelivery(id: string, input: { detail: string; runAfter: Date | string; now: Date | string }): Promise<void> {
    const at = isoForWrite(input.now);
    await translating(this.dialect, () =>
      this.db("github_deliveries")
        .where({ id, status: "processing" })
        .update({ status: "queued", outcome: "retrying", detail: input.detail, run_after: isoForWrite(input.runAfter), locked_by: null, locked_at: null, updated_at: at }),
    );
  }

  /** Processing deliveries whose worker went away (locked before `before`) go back to the queue. */
  async releaseStaleDeliveries(before: Date | string, now: Date | string): Promise<number> {
    return translating(this.dialect, () =>
      this.db("github_deliveries")
        .where({ status: "processing" })
        .andWhere("locked_at", "<", isoForWrite(before))
        .update({ status: "queued", locked_by: null, locked_at: null, updated_at: isoForWrite(now) }),
    );
  }

  /** The last `limit` deliveries about `repository` through `installationId` received at or after `since`, newest first. */
  async recentDeliveries(repository: string, installationId: number, since: Date | string, limit: number): Promise<GitHubDelivery[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<DeliveryRow>("github_deliveries")
        .where({ repository_key: repositoryKey(repository), installation_id: installationId })
        .andWhere("received_at", ">=", isoForWrite(since))
        .orderBy([
          { column: "received_at", order: "desc" },
          { column: "id", order: "desc" },
        ])
        .limit(limit);
      return rows.map(toDelivery);
    });
  }

  // ---- installation bindings and setup states

  /** The organization an installation is bound to, if any. */
  async getBinding(installationId: number): Promise<InstallationBinding | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<BindingRow>("github_installation_bindings").where({ installation_id: installationId }).first();
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
      async () => (await this.db("github_installation_bindings").where({ installation_id: installationId, organization_id: organizationId }).delete()) > 0,
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
  async createSetupState(input: { stateHash: string; organizationId: string; userId: string; sessionId: string; now: Date | string; expiresAt: Date | string }): Promise<void> {
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

  // ---- replay protection

  /** Whether the workspace already has a run from this push (ref and head SHA) or pull request (number and head SHA), made by another delivery. */
  async sourceRunExists(workspaceId: string, of: { ref: string; sha: string } | { pullRequestNumber: number; sha: string }, exceptDeliveryId: string): Promise<boolean> {
    return translating(this.dialect, async () => {
      // A retried delivery's own runs are not a replay (createSourceRun finds and keeps them).
      const query = this.db("runs")
        .where({ workspace_id: workspaceId, commit_sha: of.sha })
        .andWhere((q) => void q.whereNull("github_delivery_id").orWhereNot("github_delivery_id", exceptDeliveryId));
      const row = await (
        "ref" in of ? query.andWhere({ source: "github_push", commit_ref: of.ref }) : query.andWhere({ source: "github_pull_request", pull_request_number: of.pullRequestNumber })
      ).first("id");
      return row !== undefined;
    });
  }

  /** The newest push recorded for the workspace and ref (GitHub's `pushed_at`, seconds), if any. */
  async pushHead(workspaceId: string, ref: string): Promise<{ pushedAt: number; headSha: string } | undefined> {
    return translating(this.dialect, async () => {
      const row = (await this.db("github_push_heads").where({ workspace_id: workspaceId, ref }).first()) as { pushed_at: number | string; head_sha: string } | undefined;
      return row && { pushedAt: numberFromRow(row.pushed_at), headSha: row.head_sha };
    });
  }

  /** Records a push as the workspace's newest for the ref (never moves it back). */
  async recordPushHead(input: { workspaceId: string; ref: string; pushedAt: number; headSha: string; now: Date | string }): Promise<void> {
    const at = isoForWrite(input.now);
    await translating(this.dialect, async () => {
      const existing = await this.pushHead(input.workspaceId, input.ref);
      if (!existing) {
        await this.db("github_push_heads")
          .insert({ workspace_id: input.workspaceId, ref: input.ref, pushed_at: input.pushedAt, head_sha: input.headSha, updated_at: at })
          .onConflict(["workspace_id", "ref"])
          .ignore();
      }
      await this.db("github_push_heads")
        .where({ workspace_id: input.workspaceId, ref: input.ref })
        .andWhere("pushed_at", "<", input.pushedAt)
        .update({ pushed_at: input.pushedAt, head_sha: input.headSha, updated_at: at });
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
      const row = { id: input.id, account: input.account, repository_selection: input.repositorySelection, suspended: input.suspended, deleted: input.deleted, updated_at: now };
      await this.db("github_installations").insert(row).onConflict("id").merge();
      if (input.repositories !== undefined) {
        await this.db("github_installation_repositories").where({ installation_id: input.id }).delete();
        const keys = [...new Set(input.repositories.map(repositoryKey))];
        if (keys.length > 0) await this.db("github_installation_repositories").insert(keys.map((key) => ({ installation_id: input.id, repository_key: key })));
      }
    });
  }

  /** Adds and removes selected repositories of a known installation. */
  async changeInstallationRepositories(input: { id: number; added: string[]; removed: string[]; repositorySelection: "all" | "selected"; now: Date | string }): Promise<void> {
    await translating(this.dialect, async () => {
      await this.db("github_installations")
        .where({ id: input.id })
        .update({ repository_selection: input.repositorySelection, updated_at: isoForWrite(input.now) });
      const removed = input.removed.map(repositoryKey);
      if (removed.length > 0) await this.db("github_installation_repositories").where({ installation_id: input.id }).whereIn("repository_key", removed).delete();
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
      const row = await this.db<{ id: number | string; account: string | null; repository_selection: string; suspended: DbBoolean; deleted: DbBoolean }>("github_installations")
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

  // ---- check runs

  /** Starts keeping a check run for `runId` (the first call to GitHub is due at once). */
  async trackCheckRun(input: { runId: string; installationId: number; repository: string; headSha: string; now: Date | string }): Promise<void> {
    const now = isoForWrite(input.now);
    await translating(this.dialect, () =>
      this.db("github_check_runs").insert({
        run_id: input.runId,
        installation_id: input.installationId,
        repository: input.repository,
        head_sha: input.headSha,
        check_run_id: null,
        sent_state: null,
        attempts: 0,
        next_attempt_at: now,
        last_error: null,
        updated_at: now,
      }),
    );
  }

  async getCheckRun(runId: string): Promise<GitHubCheckRun | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<CheckRunRow>("github_check_runs").where({ run_id: runId }).first();
      return row && toCheckRun(row);
    });
  }

  /**
   * Check runs that may need a call now (due, and never sent or their run changed since the
   * version last synced). `updated_at` holds the run's `updated_at` that was last synced.
   */
  async dueCheckRuns(now: Date | string, limit: number): Promise<GitHubCheckRun[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<CheckRunRow>("github_check_runs as c")
        .join("runs as r", "r.id", "c.run_id")
        .select("c.*")
        .where("c.next_attempt_at", "<=", isoForWrite(now))
        .andWhere((q) => void q.whereNull("c.sent_state").orWhereRaw("?? > ??", ["r.updated_at", "c.updated_at"]))
        .orderBy("c.next_attempt_at")
        .limit(limit);
      return rows.map(toCheckRun);
    });
  }

  /**
   * Takes a due check run for one sync (compare and set on its due time, pushed to `leaseUntil`),
   * so that two API processes never both create it on GitHub. Whether this caller got it.
   */
  async leaseCheckRun(runId: string, dueAt: string, leaseUntil: Date | string): Promise<boolean> {
    return translating(
      this.dialect,
      async () =>
        (await this.db("github_check_runs")
          .where({ run_id: runId, next_attempt_at: isoForWrite(dueAt) })
          .update({ next_attempt_at: isoForWrite(leaseUntil) })) > 0,
    );
  }

  /** Records what GitHub now shows for the run as it was at `runUpdatedAt`; due again whenever the run changes. */
  async checkRunSent(runId: string, input: { checkRunId: number; sentState: string; runUpdatedAt: Date | string; now: Date | string }): Promise<void> {
    await translating(this.dialect, () =>
      this.db("github_check_runs")
        .where({ run_id: runId })
        .update({
          check_run_id: input.checkRunId,
          sent_state: input.sentState,
          attempts: 0,
          last_error: null,
          updated_at: isoForWrite(input.runUpdatedAt),
          next_attempt_at: isoForWrite(input.now),
        }),
    );
  }

  /** Records a failed call and when to try again. */
  async checkRunFailed(runId: string, input: { error: string; nextAttemptAt: Date | string; now: Date | string }): Promise<void> {
    await translating(this.dialect, () =>
      this.db("github_check_runs")
        .where({ run_id: runId })
        // updated_at stays: it is the run version last synced, and the run is still to be synced.
        .update({ attempts: this.db.raw("attempts + 1") as unknown as number, last_error: input.error.slice(0, 2000), next_attempt_at: isoForWrite(input.nextAttemptAt) }),
    );
  }
}
