import { newId } from "../domain/ids.ts";
import type { AttemptProvenance, AttemptStatus, ExecutionPhase, RunAttempt } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import { translating } from "./translate-error.ts";
import type { DbTimestamp } from "./rows.ts";
import { isoForWrite, numberFromRow } from "./values.ts";
import { rowMapper } from "./columns.ts";

/** run_attempts */
interface AttemptRow {
  id: string;
  run_id: string;
  phase: ExecutionPhase;
  attempt_number: number | string;
  runner_id: string;
  sandbox_id: string | null;
  sandbox_name: string | null;
  region: string;
  base_profile: string;
  status: AttemptStatus;
  terminal_classification: string | null;
  started_at: DbTimestamp;
  heartbeat_at: DbTimestamp;
  finished_at: DbTimestamp | null;
  provenance: string | null;
}

const toAttempt = rowMapper<AttemptRow, RunAttempt>()(
  "id run_id phase attempt_number:number runner_id sandbox_id sandbox_name region base_profile status terminal_classification started_at:iso heartbeat_at:iso finished_at:iso? provenance:json?",
);

/** Phase attempts: one row per sandbox execution. */
export class AttemptRepository extends Repository {
  /** Starts the next attempt of a phase (attempt numbers count from 1). */
  async start(input: {
    runId: string;
    phase: ExecutionPhase;
    runnerId: string;
    region: string;
    baseProfile: string;
    now: Date | string;
    provenance?: AttemptProvenance;
  }): Promise<RunAttempt> {
    return translating(this.dialect, async () => {
      const last = await this.db<AttemptRow>("run_attempts")
        .where({ run_id: input.runId, phase: input.phase })
        .max({ n: "attempt_number" })
        .first<{ n: number | string | null } | undefined>();
      const now = isoForWrite(input.now);
      const row = toAttempt.write({
        ...input,
        id: newId("attempt"),
        attemptNumber: (last?.n === null || last?.n === undefined ? 0 : numberFromRow(last.n)) + 1,
        sandboxId: null,
        sandboxName: null,
        status: "running",
        terminalClassification: null,
        startedAt: now,
        heartbeatAt: now,
        finishedAt: null,
        provenance: input.provenance ?? null,
      });
      await this.db<AttemptRow>("run_attempts").insert(row);
      return toAttempt(row);
    });
  }

  /** Records the sandbox an attempt runs in. */
  async recordSandbox(id: string, sandboxId: string, sandboxName: string): Promise<void> {
    await translating(this.dialect, () =>
      this.db<AttemptRow>("run_attempts").where({ id }).update({ sandbox_id: sandboxId, sandbox_name: sandboxName }),
    );
  }

  /** Refreshes a running attempt's heartbeat. */
  async heartbeat(id: string, now: Date | string): Promise<void> {
    await translating(this.dialect, () =>
      this.db<AttemptRow>("run_attempts")
        .where({ id, status: "running" })
        .update({ heartbeat_at: isoForWrite(now) }),
    );
  }

  /** Ends a running attempt; a second finish is ignored (returns false). */
  async finish(
    id: string,
    status: Exclude<AttemptStatus, "running">,
    classification: string,
    now: Date | string,
  ): Promise<boolean> {
    return translating(this.dialect, async () => {
      const changed = await this.db<AttemptRow>("run_attempts")
        .where({ id, status: "running" })
        .update({ status, terminal_classification: classification, finished_at: isoForWrite(now) });
      return changed > 0;
    });
  }

  /** A run's attempts in order. */
  async listByRun(runId: string): Promise<RunAttempt[]> {
    return translating(this.dialect, async () =>
      (
        await this.db<AttemptRow>("run_attempts")
          .where({ run_id: runId })
          .orderBy([
            { column: "phase", order: "desc" },
            { column: "attempt_number", order: "asc" },
          ])
      ).map(toAttempt),
    );
  }

  /** Running attempts whose heartbeat is older than `before`. */
  async listStale(before: Date | string): Promise<RunAttempt[]> {
    return translating(this.dialect, async () =>
      (
        await this.db<AttemptRow>("run_attempts")
          .where({ status: "running" })
          .where("heartbeat_at", "<", isoForWrite(before))
      ).map(toAttempt),
    );
  }
}
