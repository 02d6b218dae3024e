import { newId } from "../domain/ids.ts";
import type { ExecutionPhase, RunJob } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import { translating } from "./translate-error.ts";
import type { DbBoolean, DbTimestamp } from "./rows.ts";
import { isoForWrite, numberFromRow, optionalIsoFromRow } from "./values.ts";
import { rowMapper } from "./columns.ts";

/** run_jobs */
interface JobRow {
  id: string;
  run_id: string;
  workspace_id: string;
  phase: ExecutionPhase;
  serial: DbBoolean;
  status: RunJob["status"];
  runner_id: string | null;
  attempts: number | string;
  available_at: DbTimestamp;
  heartbeat_at: DbTimestamp | null;
  created_at: DbTimestamp;
  finished_at: DbTimestamp | null;
}

const toJob = rowMapper<JobRow, RunJob>()(
  "id run_id workspace_id phase serial:boolean status runner_id attempts:number available_at:iso heartbeat_at:iso? created_at:iso finished_at:iso?",
);

/** The run job queue of the embedded default (and its fallback on PostgreSQL). */
export class JobRepository extends Repository {
  /** Enqueues a phase of a run. */
  async enqueue(input: {
    runId: string;
    workspaceId: string;
    phase: ExecutionPhase;
    serial: boolean;
    now: Date | string;
  }): Promise<RunJob> {
    const now = isoForWrite(input.now);
    const row = toJob.write({
      ...input,
      id: newId("job"),
      status: "queued",
      runnerId: null,
      attempts: 0,
      availableAt: now,
      heartbeatAt: null,
      createdAt: now,
      finishedAt: null,
    });
    return translating(this.dialect, async () => {
      await this.db("run_jobs").insert(row);
      await this.dispatch(row.id, now);
      return toJob(row);
    });
  }

  /**
   * On PostgreSQL every queued job is also handed to graphile-worker (in the same transaction),
   * which wakes a runner on any host through LISTEN/NOTIFY; the run_jobs row stays the record
   * that claims, heartbeats and lost-runner detection work on.
   */
  async dispatch(id: string, runAt: string): Promise<void> {
    if (this.dialect !== "postgres") return;
    await this.db.raw(
      "select graphile_worker.add_job(?::text, json_build_object('run_job_id', ?::text), run_at => ?::timestamptz, max_attempts => 1)",
      ["stackship_run_phase", id, runAt],
    );
  }

  /** Claims one specific queued job (the one graphile-worker handed over), under the same rules as `claim`. */
  async claimById(id: string, runnerId: string, now: Date | string): Promise<RunJob | undefined> {
    const at = isoForWrite(now);
    return translating(this.dialect, async () => {
      const candidate = (await this.claimable().where("j.id", id).select("j.*").first()) as JobRow | undefined;
      return candidate && this.take(candidate, runnerId, at);
    });
  }

  /** A job by id. */
  async getById(id: string): Promise<RunJob | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<JobRow>("run_jobs").where({ id }).first();
      return row && toJob(row);
    });
  }

  /**
   * Claims the oldest available job for `runnerId`: a serial job only when no other serial job
   * of its workspace is running. Compare-and-set on the status, so two runners never both win.
   */
  async claim(runnerId: string, now: Date | string): Promise<RunJob | undefined> {
    const at = isoForWrite(now);
    return translating(this.dialect, async () => {
      const candidates = await this.claimable()
        .where("j.available_at", "<=", at)
        .orderBy([
          { column: "j.created_at", order: "asc" },
          { column: "j.id", order: "asc" },
        ])
        .limit(5)
        .select<JobRow[]>("j.*");
      for (const candidate of candidates) {
        const job = await this.take(candidate, runnerId, at);
        if (job) return job;
      }
      return undefined;
    });
  }

  /** Queued jobs a runner may take: a serial job only while no serial job of its workspace runs. */
  private claimable() {
    return this.db("run_jobs as j")
      .where("j.status", "queued")
      .where((q) => {
        void q
          .where("j.serial", false)
          .orWhereNotExists(
            this.db("run_jobs as r")
              .select(this.db.raw("1"))
              .whereRaw("r.workspace_id = j.workspace_id")
              .where("r.serial", true)
              .where("r.status", "running"),
          );
      });
  }

  /** Queued → running for `runnerId`, compare-and-set on the status; undefined when another runner won. */
  private async take(candidate: JobRow, runnerId: string, at: string): Promise<RunJob | undefined> {
    const claimed = {
      status: "running" as const,
      runner_id: runnerId,
      attempts: numberFromRow(candidate.attempts) + 1,
      heartbeat_at: at,
    };
    const changed = await this.db("run_jobs").where({ id: candidate.id, status: "queued" }).update(claimed);
    return changed > 0 ? toJob({ ...candidate, ...claimed }) : undefined;
  }

  /** Refreshes the heartbeat of the runner's running jobs. */
  async heartbeat(runnerId: string, now: Date | string): Promise<void> {
    await translating(this.dialect, () =>
      this.db("run_jobs")
        .where({ runner_id: runnerId, status: "running" })
        .update({ heartbeat_at: isoForWrite(now) }),
    );
  }

  /** Puts a running job back in the queue, available again at `availableAt` (e.g. the workspace is busy). */
  async requeue(id: string, availableAt: Date | string): Promise<void> {
    await translating(this.dialect, async () => {
      const changed = await this.db("run_jobs")
        .where({ id, status: "running" })
        .update({ status: "queued", runner_id: null, heartbeat_at: null, available_at: isoForWrite(availableAt) });
      if (changed > 0) await this.dispatch(id, isoForWrite(availableAt));
    });
  }

  /** Marks a job done. */
  async finish(id: string, now: Date | string): Promise<void> {
    await translating(this.dialect, () =>
      this.db("run_jobs")
        .where({ id })
        .update({ status: "done", finished_at: isoForWrite(now) }),
    );
  }

  /** Running jobs whose runner stopped heartbeating before `before`. */
  async listStale(before: Date | string): Promise<RunJob[]> {
    return translating(this.dialect, async () =>
      (
        await this.db<JobRow>("run_jobs").where({ status: "running" }).where("heartbeat_at", "<", isoForWrite(before))
      ).map(toJob),
    );
  }

  /** How many jobs wait in the queue and when the oldest of them was queued (for /metrics). */
  async queueSummary(): Promise<{ depth: number; oldestQueuedAt: string | null }> {
    return translating(this.dialect, async () => {
      const row = (await this.db("run_jobs")
        .where({ status: "queued" })
        .count({ depth: "*" })
        .min({ oldest: "created_at" })
        .first()) as { depth: number | string; oldest: DbTimestamp | null } | undefined;
      return {
        depth: row ? numberFromRow(row.depth) : 0,
        oldestQueuedAt: row ? optionalIsoFromRow(row.oldest ?? null) : null,
      };
    });
  }

  /** A run's jobs, oldest first. */
  async listByRun(runId: string): Promise<RunJob[]> {
    return translating(this.dialect, async () =>
      (await this.db<JobRow>("run_jobs").where({ run_id: runId }).orderBy("created_at", "asc")).map(toJob),
    );
  }
}
