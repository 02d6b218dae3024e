import { newId } from '../domain/ids.ts';
import type { AttemptStatus, ExecutionPhase, RunAttempt, RunJob, RunReview } from '../domain/records.ts';
import type { Dialect, Executor } from './dialect.ts';
import { announce, atomically } from './run-events.ts';
import { translating } from './translate-error.ts';
import { booleanFromRow, isoForWrite, isoFromRow, numberFromRow, optionalIsoFromRow } from './values.ts';

type Row = Record<string, any>;

function toAttempt(row: Row): RunAttempt {
  return {
    id: row.id,
    runId: row.run_id,
    phase: row.phase,
    attemptNumber: numberFromRow(row.attempt_number),
    runnerId: row.runner_id,
    sandboxId: row.sandbox_id,
    sandboxName: row.sandbox_name,
    region: row.region,
    baseProfile: row.base_profile,
    status: row.status,
    terminalClassification: row.terminal_classification,
    startedAt: isoFromRow(row.started_at),
    heartbeatAt: isoFromRow(row.heartbeat_at),
    finishedAt: optionalIsoFromRow(row.finished_at),
  };
}

/** Phase attempts: one row per sandbox execution. */
export class AttemptRepository {
  constructor(
    private readonly db: Executor,
    private readonly dialect: Dialect,
  ) {}

  /** Starts the next attempt of a phase (attempt numbers count from 1). */
  async start(input: { runId: string; phase: ExecutionPhase; runnerId: string; region: string; baseProfile: string; now: Date | string }): Promise<RunAttempt> {
    return translating(this.dialect, async () => {
      const last = await this.db('run_attempts').where({ run_id: input.runId, phase: input.phase }).max({ n: 'attempt_number' }).first();
      const now = isoForWrite(input.now);
      const row = {
        id: newId('attempt'),
        run_id: input.runId,
        phase: input.phase,
        attempt_number: (last?.n === null || last?.n === undefined ? 0 : numberFromRow(last.n)) + 1,
        runner_id: input.runnerId,
        sandbox_id: null,
        sandbox_name: null,
        region: input.region,
        base_profile: input.baseProfile,
        status: 'running',
        terminal_classification: null,
        started_at: now,
        heartbeat_at: now,
        finished_at: null,
      };
      await this.db('run_attempts').insert(row);
      return toAttempt(row);
    });
  }

  /** Records the sandbox an attempt runs in. */
  async recordSandbox(id: string, sandboxId: string, sandboxName: string): Promise<void> {
    await translating(this.dialect, () => this.db('run_attempts').where({ id }).update({ sandbox_id: sandboxId, sandbox_name: sandboxName }));
  }

  /** Refreshes a running attempt's heartbeat. */
  async heartbeat(id: string, now: Date | string): Promise<void> {
    await translating(this.dialect, () => this.db('run_attempts').where({ id, status: 'running' }).update({ heartbeat_at: isoForWrite(now) }));
  }

  /** Ends a running attempt; a second finish is ignored (returns false). */
  async finish(id: string, status: Exclude<AttemptStatus, 'running'>, classification: string, now: Date | string): Promise<boolean> {
    return translating(this.dialect, async () => {
      const changed = await this.db('run_attempts')
        .where({ id, status: 'running' })
        .update({ status, terminal_classification: classification, finished_at: isoForWrite(now) });
      return changed > 0;
    });
  }

  /** A run's attempts in order. */
  async listByRun(runId: string): Promise<RunAttempt[]> {
    return translating(this.dialect, async () =>
      (await this.db('run_attempts').where({ run_id: runId }).orderBy([{ column: 'phase', order: 'desc' }, { column: 'attempt_number', order: 'asc' }])).map(toAttempt),
    );
  }

  /** Running attempts whose heartbeat is older than `before`. */
  async listStale(before: Date | string): Promise<RunAttempt[]> {
    return translating(this.dialect, async () =>
      (await this.db('run_attempts').where({ status: 'running' }).where('heartbeat_at', '<', isoForWrite(before))).map(toAttempt),
    );
  }
}

/** The phases whose logs are stored. */
export type LogPhase = 'plan' | 'policy' | 'apply';

/** One stored log chunk. */
export interface LogChunk {
  seq: number;
  text: string;
  final: boolean;
}

/** Where a phase's stored log ends. */
export interface LogPosition {
  nextSeq: number;
  nextOffset: number;
  /** The log's length in UTF-8 bytes. */
  byteLength: number;
  complete: boolean;
}

/** A window of one phase's log. */
export interface LogWindow {
  text: string;
  nextOffset: number;
  complete: boolean;
}

/** Sequence-numbered, already sanitized log chunks per run phase. */
export class LogRepository {
  constructor(
    private readonly db: Executor,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Appends a chunk; `final` marks the phase's log complete. Returns its sequence number. The
   * chunk is announced on the run change feed (the live WebSocket) in the same transaction.
   */
  async append(runId: string, phase: LogPhase, text: string, final: boolean, now: Date | string): Promise<number> {
    return translating(this.dialect, () =>
      atomically(this.db, this.dialect, async (db) => {
        const last = await db('run_log_chunks').where({ run_id: runId, phase }).orderBy('seq', 'desc').first('seq', 'char_end', 'byte_end');
        const seq = last === undefined ? 0 : numberFromRow(last.seq) + 1;
        const charStart = last === undefined ? 0 : numberFromRow(last.char_end);
        const byteStart = last === undefined ? 0 : numberFromRow(last.byte_end);
        await db('run_log_chunks').insert({
          run_id: runId,
          phase,
          seq,
          text,
          final,
          char_start: charStart,
          char_end: charStart + text.length,
          byte_start: byteStart,
          byte_end: byteStart + Buffer.byteLength(text, 'utf8'),
          created_at: isoForWrite(now),
        });
        await announce(db, this.dialect, { kind: 'log', runId, phase, seq, final, text });
        return seq;
      }),
    );
  }

  /** The phase's chunks from sequence number `fromSeq` on, in order, at most `limit`. */
  async chunksFrom(runId: string, phase: LogPhase, fromSeq: number, limit: number): Promise<LogChunk[]> {
    return translating(this.dialect, async () =>
      (
        await this.db('run_log_chunks')
          .where({ run_id: runId, phase })
          .where('seq', '>=', fromSeq)
          .orderBy('seq', 'asc')
          .limit(limit)
          .select('seq', 'text', 'final')
      ).map((r) => ({ seq: numberFromRow(r.seq), text: r.text as string, final: booleanFromRow(r.final) })),
    );
  }

  /**
   * Where each phase's log ends: the next sequence number, the next offset of the HTTP log
   * route (in the same units: JavaScript string length), its length in UTF-8 bytes, and whether
   * the log is complete. Reads no log text.
   */
  async positions(runId: string): Promise<Record<LogPhase, LogPosition>> {
    return translating(this.dialect, async () => {
      const out: Record<LogPhase, LogPosition> = {
        plan: { nextSeq: 0, nextOffset: 0, byteLength: 0, complete: false },
        policy: { nextSeq: 0, nextOffset: 0, byteLength: 0, complete: false },
        apply: { nextSeq: 0, nextOffset: 0, byteLength: 0, complete: false },
      };
      const rows: Row[] = await this.db('run_log_chunks')
        .where({ run_id: runId })
        .groupBy('phase')
        .select('phase')
        .max({ seq: 'seq', char_end: 'char_end', byte_end: 'byte_end' })
        .select(this.db.raw('max(case when ?? then 1 else 0 end) as ??', ['final', 'final']));
      for (const row of rows) {
        const position = out[row.phase as LogPhase];
        if (!position) continue;
        position.nextSeq = numberFromRow(row.seq) + 1;
        position.nextOffset = numberFromRow(row.char_end);
        position.byteLength = numberFromRow(row.byte_end);
        position.complete = numberFromRow(row.final) === 1;
      }
      return out;
    });
  }

  /** The phase's text from character `offset`, at most `limit` characters; reads only the chunks the window overlaps. */
  async read(runId: string, phase: LogPhase, offset: number, limit: number): Promise<LogWindow> {
    const position = (await this.positions(runId))[phase];
    const end = Math.min(position.nextOffset, offset + limit);
    if (offset >= end) return { text: '', nextOffset: Math.min(offset, position.nextOffset), complete: position.complete && offset >= position.nextOffset };
    const rows = await this.overlapping(runId, phase, 'char', offset, end);
    const first = rows.length === 0 ? offset : numberFromRow(rows[0].char_start);
    const text = rows.map((r) => r.text as string).join('').slice(offset - first, end - first);
    return { text, nextOffset: offset + text.length, complete: position.complete && offset + text.length >= position.nextOffset };
  }

  /** The UTF-8 bytes `[start, end)` of the phase's log (a window may cut a character; the log-read protocol counts bytes). */
  async readBytes(runId: string, phase: LogPhase, start: number, end: number): Promise<Buffer> {
    if (start >= end) return Buffer.alloc(0);
    const rows = await this.overlapping(runId, phase, 'byte', start, end);
    if (rows.length === 0) return Buffer.alloc(0);
    const first = numberFromRow(rows[0].byte_start);
    const bytes = Buffer.from(rows.map((r) => r.text as string).join(''), 'utf8');
    return bytes.subarray(start - first, end - first);
  }

  /** The last `lines` non-empty lines of a phase's log, read from the end backwards. */
  async tail(runId: string, phase: LogPhase, lines: number): Promise<string[]> {
    return translating(this.dialect, async () => {
      let text = '';
      let beforeSeq: number | undefined;
      for (;;) {
        const query = this.db('run_log_chunks').where({ run_id: runId, phase });
        if (beforeSeq !== undefined) query.where('seq', '<', beforeSeq);
        const rows = await query.orderBy('seq', 'desc').limit(TAIL_BATCH).select('seq', 'text');
        if (rows.length === 0) break;
        text = rows.map((r) => r.text as string).reverse().join('') + text;
        beforeSeq = numberFromRow(rows[rows.length - 1].seq);
        // One line more than asked, so the first of the kept ones is whole.
        if (text.split('\n').filter((line) => line.length > 0).length > lines) break;
      }
      return text.split('\n').filter((line) => line.length > 0).slice(-lines);
    });
  }

  /** The chunks of a phase that overlap `[start, end)` in the given units, in order. */
  private async overlapping(runId: string, phase: LogPhase, unit: 'char' | 'byte', start: number, end: number): Promise<Row[]> {
    return translating(this.dialect, async () =>
      this.db('run_log_chunks')
        .where({ run_id: runId, phase })
        .where(`${unit}_end`, '>', start)
        .where(`${unit}_start`, '<', end)
        .orderBy('seq', 'asc')
        .select('text', 'char_start', 'byte_start'),
    );
  }
}

/** How many chunks `tail` reads per step backwards. */
const TAIL_BATCH = 64;

function toReview(row: Row): RunReview {
  return {
    id: row.id,
    runId: row.run_id,
    decision: row.decision,
    actorId: row.actor_id,
    reason: row.reason,
    planDigest: row.plan_digest,
    policyResultDigest: row.policy_result_digest,
    predecessorStateDigest: row.predecessor_state_digest,
    dependencyBundleDigest: row.dependency_bundle_digest,
    decidedAt: isoFromRow(row.decided_at),
  };
}

/** Review decisions: at most one per run (a unique index makes racing decisions fail). */
export class ReviewRepository {
  constructor(
    private readonly db: Executor,
    private readonly dialect: Dialect,
  ) {}

  /** Records the run's decision; a second decision throws CONSTRAINT_VIOLATION. */
  async record(input: Omit<RunReview, 'id' | 'decidedAt'> & { decidedAt: Date | string }): Promise<RunReview> {
    const row = {
      id: newId('review'),
      run_id: input.runId,
      decision: input.decision,
      actor_id: input.actorId,
      reason: input.reason,
      plan_digest: input.planDigest,
      policy_result_digest: input.policyResultDigest,
      predecessor_state_digest: input.predecessorStateDigest,
      dependency_bundle_digest: input.dependencyBundleDigest,
      decided_at: isoForWrite(input.decidedAt),
    };
    return translating(this.dialect, async () => {
      await this.db('run_reviews').insert(row);
      return toReview(row);
    });
  }

  /** The run's decision, if any. */
  async getByRun(runId: string): Promise<RunReview | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db('run_reviews').where({ run_id: runId }).first();
      return row && toReview(row);
    });
  }
}

function toJob(row: Row): RunJob {
  return {
    id: row.id,
    runId: row.run_id,
    workspaceId: row.workspace_id,
    phase: row.phase,
    serial: booleanFromRow(row.serial),
    status: row.status,
    runnerId: row.runner_id,
    attempts: numberFromRow(row.attempts),
    availableAt: isoFromRow(row.available_at),
    heartbeatAt: optionalIsoFromRow(row.heartbeat_at),
    createdAt: isoFromRow(row.created_at),
    finishedAt: optionalIsoFromRow(row.finished_at),
  };
}

/** The run job queue of the embedded default (and its fallback on PostgreSQL). */
export class JobRepository {
  constructor(
    private readonly db: Executor,
    private readonly dialect: Dialect,
  ) {}

  /** Enqueues a phase of a run. */
  async enqueue(input: { runId: string; workspaceId: string; phase: ExecutionPhase; serial: boolean; now: Date | string }): Promise<RunJob> {
    const now = isoForWrite(input.now);
    const row = {
      id: newId('job'),
      run_id: input.runId,
      workspace_id: input.workspaceId,
      phase: input.phase,
      serial: input.serial,
      status: 'queued',
      runner_id: null,
      attempts: 0,
      available_at: now,
      heartbeat_at: null,
      created_at: now,
      finished_at: null,
    };
    return translating(this.dialect, async () => {
      await this.db('run_jobs').insert(row);
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
    if (this.dialect !== 'postgres') return;
    await this.db.raw("select graphile_worker.add_job(?::text, json_build_object('run_job_id', ?::text), run_at => ?::timestamptz, max_attempts => 1)", [
      'stackship_run_phase',
      id,
      runAt,
    ]);
  }

  /** Claims one specific queued job (the one graphile-worker handed over), under the same rules as `claim`. */
  async claimById(id: string, runnerId: string, now: Date | string): Promise<RunJob | undefined> {
    const at = isoForWrite(now);
    return translating(this.dialect, async () => {
      const candidate = await this.db('run_jobs as j')
        .where('j.id', id)
        .where('j.status', 'queued')
        .where((q) => void
          q.where('j.serial', false).orWhereNotExists(
            this.db('run_jobs as r').select(this.db.raw('1')).whereRaw('r.workspace_id = j.workspace_id').where('r.serial', true).where('r.status', 'running'),
          ),
        )
        .select('j.*')
        .first();
      if (!candidate) return undefined;
      const attempts = numberFromRow(candidate.attempts) + 1;
      const changed = await this.db('run_jobs').where({ id, status: 'queued' }).update({ status: 'running', runner_id: runnerId, attempts, heartbeat_at: at });
      return changed > 0 ? toJob({ ...candidate, status: 'running', runner_id: runnerId, attempts, heartbeat_at: at }) : undefined;
    });
  }

  /** A job by id. */
  async getById(id: string): Promise<RunJob | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db('run_jobs').where({ id }).first();
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
      const candidates = await this.db('run_jobs as j')
        .where('j.status', 'queued')
        .where('j.available_at', '<=', at)
        .where((q) => void
          q.where('j.serial', false).orWhereNotExists(
            this.db('run_jobs as r').select(this.db.raw('1')).whereRaw('r.workspace_id = j.workspace_id').where('r.serial', true).where('r.status', 'running'),
          ),
        )
        .orderBy([{ column: 'j.created_at', order: 'asc' }, { column: 'j.id', order: 'asc' }])
        .limit(5)
        .select('j.*');
      for (const candidate of candidates) {
        const changed = await this.db('run_jobs')
          .where({ id: candidate.id, status: 'queued' })
          .update({ status: 'running', runner_id: runnerId, attempts: numberFromRow(candidate.attempts) + 1, heartbeat_at: at });
        if (changed > 0) return toJob({ ...candidate, status: 'running', runner_id: runnerId, attempts: numberFromRow(candidate.attempts) + 1, heartbeat_at: at });
      }
      return undefined;
    });
  }

  /** Refreshes the heartbeat of the runner's running jobs. */
  async heartbeat(runnerId: string, now: Date | string): Promise<void> {
    await translating(this.dialect, () => this.db('run_jobs').where({ runner_id: runnerId, status: 'running' }).update({ heartbeat_at: isoForWrite(now) }));
  }

  /** Puts a running job back in the queue, available again at `availableAt` (e.g. the workspace is busy). */
  async requeue(id: string, availableAt: Date | string): Promise<void> {
    await translating(this.dialect, async () => {
      const changed = await this.db('run_jobs')
        .where({ id, status: 'running' })
        .update({ status: 'queued', runner_id: null, heartbeat_at: null, available_at: isoForWrite(availableAt) });
      if (changed > 0) await this.dispatch(id, isoForWrite(availableAt));
    });
  }

  /** Marks a job done. */
  async finish(id: string, now: Date | string): Promise<void> {
    await translating(this.dialect, () => this.db('run_jobs').where({ id }).update({ status: 'done', finished_at: isoForWrite(now) }));
  }

  /** Running jobs whose runner stopped heartbeating before `before`. */
  async listStale(before: Date | string): Promise<RunJob[]> {
    return translating(this.dialect, async () =>
      (await this.db('run_jobs').where({ status: 'running' }).where('heartbeat_at', '<', isoForWrite(before))).map(toJob),
    );
  }

  /** A run's jobs, oldest first. */
  async listByRun(runId: string): Promise<RunJob[]> {
    return translating(this.dialect, async () => (await this.db('run_jobs').where({ run_id: runId }).orderBy('created_at', 'asc')).map(toJob));
  }
}
