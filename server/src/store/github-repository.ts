import { GitHubConnectionRepository, repositoryKey } from "./github-connection-repository.ts";
import {
  toCheckRun,
  toDelivery,
  type CheckRunRow,
  type DeliveryRow,
  type DeliveryStatus,
  type GitHubCheckRun,
  type GitHubDelivery,
} from "./github-records.ts";
import { atomically } from "./run-events.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite, numberFromRow } from "./values.ts";

/** The graphile-worker task a queued delivery is dispatched as (PostgreSQL). */
export const GITHUB_DELIVERY_TASK = "stackship_github_delivery";

/**
 * Source connections, webhook deliveries, installations and check runs of the GitHub App pipeline:
 * the connection records (source connections, installation bindings and setup states,
 * installations) are GitHubConnectionRepository's, in github-connection-repository.ts; here the
 * deliveries, replay protection and check runs.
 */
export class GitHubRepository extends GitHubConnectionRepository {
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
    await this.db.raw(
      "select graphile_worker.add_job(?::text, json_build_object('delivery_id', ?::text), run_at => ?::timestamptz, max_attempts => 1)",
      [GITHUB_DELIVERY_TASK, id, isoForWrite(runAt)],
    );
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
        const candidate = await (id ? query.andWhere({ id }) : query)
          .orderBy([{ column: "run_after" }, { column: "id" }])
          .first();
        if (!candidate) return undefined;
        const changed = await db("github_deliveries")
          .where({ id: candidate.id, status: "queued" })
          .update({
            status: "processing",
            locked_by: workerId,
            locked_at: at,
            attempts: candidate.attempts + 1,
            updated_at: at,
          });
        if (changed === 0) return undefined;
        const row = await db<DeliveryRow>("github_deliveries").where({ id: candidate.id }).first();
        return row && toDelivery(row);
      }),
    );
  }

  /** Ends a processing delivery: processed, ignored, refused or failed, with its outcome (its payload, up to 5 MiB, is no longer kept). */
  async finishDelivery(
    id: string,
    input: {
      status: Exclude<DeliveryStatus, "queued" | "processing">;
      outcome: string;
      detail: string;
      runIds?: string[];
      now: Date | string;
    },
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
  async retryDelivery(
    id: string,
    input: { detail: string; runAfter: Date | string; now: Date | string },
  ): Promise<void> {
    const at = isoForWrite(input.now);
    await translating(this.dialect, () =>
      this.db("github_deliveries")
        .where({ id, status: "processing" })
        .update({
          status: "queued",
          outcome: "retrying",
          detail: input.detail,
          run_after: isoForWrite(input.runAfter),
          locked_by: null,
          locked_at: null,
          updated_at: at,
        }),
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
  async recentDeliveries(
    repository: string,
    installationId: number,
    since: Date | string,
    limit: number,
  ): Promise<GitHubDelivery[]> {
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
  // ---- replay protection

  /** Whether the workspace already has a run from this push (ref and head SHA) or pull request (number and head SHA), made by another delivery. */
  async sourceRunExists(
    workspaceId: string,
    of: { ref: string; sha: string } | { pullRequestNumber: number; sha: string },
    exceptDeliveryId: string,
  ): Promise<boolean> {
    return translating(this.dialect, async () => {
      // A retried delivery's own runs are not a replay (createSourceRun finds and keeps them).
      const query = this.db("runs")
        .where({ workspace_id: workspaceId, commit_sha: of.sha })
        .andWhere((q) => void q.whereNull("github_delivery_id").orWhereNot("github_delivery_id", exceptDeliveryId));
      const row = await (
        "ref" in of
          ? query.andWhere({ source: "github_push", commit_ref: of.ref })
          : query.andWhere({ source: "github_pull_request", pull_request_number: of.pullRequestNumber })
      ).first<{ id: string } | undefined>("id");
      return row !== undefined;
    });
  }

  /** The newest push recorded for the workspace and ref (GitHub's `pushed_at`, seconds), if any. */
  async pushHead(workspaceId: string, ref: string): Promise<{ pushedAt: number; headSha: string } | undefined> {
    return translating(this.dialect, async () => {
      const row = (await this.db("github_push_heads").where({ workspace_id: workspaceId, ref }).first()) as
        { pushed_at: number | string; head_sha: string } | undefined;
      return row && { pushedAt: numberFromRow(row.pushed_at), headSha: row.head_sha };
    });
  }

  /** Records a push as the workspace's newest for the ref (never moves it back). */
  async recordPushHead(input: {
    workspaceId: string;
    ref: string;
    pushedAt: number;
    headSha: string;
    now: Date | string;
  }): Promise<void> {
    const at = isoForWrite(input.now);
    await translating(this.dialect, async () => {
      const existing = await this.pushHead(input.workspaceId, input.ref);
      if (!existing) {
        await this.db("github_push_heads")
          .insert({
            workspace_id: input.workspaceId,
            ref: input.ref,
            pushed_at: input.pushedAt,
            head_sha: input.headSha,
            updated_at: at,
          })
          .onConflict(["workspace_id", "ref"])
          .ignore();
      }
      await this.db("github_push_heads")
        .where({ workspace_id: input.workspaceId, ref: input.ref })
        .andWhere("pushed_at", "<", input.pushedAt)
        .update({ pushed_at: input.pushedAt, head_sha: input.headSha, updated_at: at });
    });
  }

  // ---- check runs

  /** Starts keeping a check run for `runId` (the first call to GitHub is due at once). */
  async trackCheckRun(input: {
    runId: string;
    installationId: number;
    repository: string;
    headSha: string;
    now: Date | string;
  }): Promise<void> {
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
  async checkRunSent(
    runId: string,
    input: { checkRunId: number; sentState: string; runUpdatedAt: Date | string; now: Date | string },
  ): Promise<void> {
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
  async checkRunFailed(
    runId: string,
    input: { error: string; nextAttemptAt: Date | string; now: Date | string },
  ): Promise<void> {
    await translating(this.dialect, () =>
      this.db("github_check_runs")
        .where({ run_id: runId })
        // updated_at stays: it is the run version last synced, and the run is still to be synced.
        .update({
          attempts: this.db.raw("attempts + 1") as unknown as number,
          last_error: input.error.slice(0, 2000),
          next_attempt_at: isoForWrite(input.nextAttemptAt),
        }),
    );
  }
}
