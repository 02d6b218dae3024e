import { announce, atomically } from "./run-events.ts";
import { Repository } from "./repository.ts";
import { translating } from "./translate-error.ts";
import type { DbBoolean, DbTimestamp } from "./rows.ts";
import { booleanFromRow, isoForWrite, numberFromRow } from "./values.ts";

/** run_log_chunks */
interface LogChunkRow {
  run_id: string;
  phase: StoredLogPhase;
  seq: number;
  text: string;
  final: DbBoolean;
  char_start: number | string;
  char_end: number | string;
  byte_start: number | string;
  byte_end: number | string;
  created_at: DbTimestamp;
}

/** One phase's aggregate in `positions`. */
interface LogPositionRow {
  phase: string;
  seq: number | string;
  char_end: number | string;
  byte_end: number | string;
  final: number | string;
}

/** The phases whose (human) logs are stored: what /v1, the dashboard and the live feed read. */
export type LogPhase = "plan" | "policy" | "apply";

/**
 * The `-json` UI lines of a run with structured output, kept beside its human plan and apply
 * logs (the CLI reads these through /api/v2); never announced on the live feed.
 */
export type JsonLogPhase = "plan_json" | "apply_json";

/** Every stored log. */
export type StoredLogPhase = LogPhase | JsonLogPhase;

function isJsonLogPhase(phase: StoredLogPhase): phase is JsonLogPhase {
  return phase === "plan_json" || phase === "apply_json";
}

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
export class LogRepository extends Repository {
  /**
   * Appends a chunk; `final` marks the phase's log complete. Returns its sequence number. The
   * chunk is announced on the run change feed (the live WebSocket) in the same transaction.
   */
  async append(
    runId: string,
    phase: StoredLogPhase,
    text: string,
    final: boolean,
    now: Date | string,
  ): Promise<number> {
    return translating(this.dialect, () =>
      atomically(this.db, this.dialect, async (db) => {
        const last = await db<LogChunkRow>("run_log_chunks")
          .where({ run_id: runId, phase })
          .orderBy("seq", "desc")
          .first("seq", "char_end", "byte_end");
        const seq = last === undefined ? 0 : numberFromRow(last.seq) + 1;
        const charStart = last === undefined ? 0 : numberFromRow(last.char_end);
        const byteStart = last === undefined ? 0 : numberFromRow(last.byte_end);
        await db("run_log_chunks").insert({
          run_id: runId,
          phase,
          seq,
          text,
          final,
          char_start: charStart,
          char_end: charStart + text.length,
          byte_start: byteStart,
          byte_end: byteStart + Buffer.byteLength(text, "utf8"),
          created_at: isoForWrite(now),
        });
        if (!isJsonLogPhase(phase)) await announce(db, this.dialect, { kind: "log", runId, phase, seq, final, text });
        return seq;
      }),
    );
  }

  /** The phase's chunks from sequence number `fromSeq` on, in order, at most `limit`. */
  async chunksFrom(runId: string, phase: StoredLogPhase, fromSeq: number, limit: number): Promise<LogChunk[]> {
    return translating(this.dialect, async () =>
      (
        await this.db<LogChunkRow>("run_log_chunks")
          .where({ run_id: runId, phase })
          .where("seq", ">=", fromSeq)
          .orderBy("seq", "asc")
          .limit(limit)
          .select("seq", "text", "final")
      ).map((r) => ({ seq: numberFromRow(r.seq), text: r.text, final: booleanFromRow(r.final) })),
    );
  }

  /**
   * Where each phase's log ends: the next sequence number, the next offset of the HTTP log
   * route (in the same units: JavaScript string length), its length in UTF-8 bytes, and whether
   * the log is complete. Reads no log text.
   */
  async positions(runId: string): Promise<Record<LogPhase, LogPosition>> {
    const { plan, policy, apply } = await this.allPositions(runId);
    return { plan, policy, apply };
  }

  /** `positions` of every stored log, the `-json` ones too. */
  async allPositions(runId: string): Promise<Record<StoredLogPhase, LogPosition>> {
    return translating(this.dialect, async () => {
      const out: Record<StoredLogPhase, LogPosition> = {
        plan: { nextSeq: 0, nextOffset: 0, byteLength: 0, complete: false },
        policy: { nextSeq: 0, nextOffset: 0, byteLength: 0, complete: false },
        apply: { nextSeq: 0, nextOffset: 0, byteLength: 0, complete: false },
        plan_json: { nextSeq: 0, nextOffset: 0, byteLength: 0, complete: false },
        apply_json: { nextSeq: 0, nextOffset: 0, byteLength: 0, complete: false },
      };
      const rows = await this.db<LogChunkRow>("run_log_chunks")
        .where({ run_id: runId })
        .groupBy("phase")
        .select("phase")
        .max({ seq: "seq", char_end: "char_end", byte_end: "byte_end" })
        .select<LogPositionRow[]>(this.db.raw("max(case when ?? then 1 else 0 end) as ??", ["final", "final"]));
      for (const row of rows) {
        const position = out[row.phase as StoredLogPhase] as LogPosition | undefined;
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
    if (offset >= end)
      return {
        text: "",
        nextOffset: Math.min(offset, position.nextOffset),
        complete: position.complete && offset >= position.nextOffset,
      };
    const rows = await this.overlapping(runId, phase, "char", offset, end);
    const first = rows.length === 0 ? offset : numberFromRow(rows[0].char_start);
    const text = rows
      .map((r) => r.text)
      .join("")
      .slice(offset - first, end - first);
    return {
      text,
      nextOffset: offset + text.length,
      complete: position.complete && offset + text.length >= position.nextOffset,
    };
  }

  /** The UTF-8 bytes `[start, end)` of the phase's log (a window may cut a character; the log-read protocol counts bytes). */
  async readBytes(runId: string, phase: StoredLogPhase, start: number, end: number): Promise<Buffer> {
    if (start >= end) return Buffer.alloc(0);
    const rows = await this.overlapping(runId, phase, "byte", start, end);
    if (rows.length === 0) return Buffer.alloc(0);
    const first = numberFromRow(rows[0].byte_start);
    const bytes = Buffer.from(rows.map((r) => r.text).join(""), "utf8");
    return bytes.subarray(start - first, end - first);
  }

  /** The last `lines` non-empty lines of a phase's log, read from the end backwards. */
  async tail(runId: string, phase: LogPhase, lines: number): Promise<string[]> {
    return translating(this.dialect, async () => {
      let text = "";
      let beforeSeq: number | undefined;
      for (;;) {
        const query = this.db<LogChunkRow>("run_log_chunks").where({ run_id: runId, phase });
        if (beforeSeq !== undefined) query.where("seq", "<", beforeSeq);
        const rows = await query.orderBy("seq", "desc").limit(TAIL_BATCH).select("seq", "text");
        if (rows.length === 0) break;
        text =
          rows
            .map((r) => r.text)
            .reverse()
            .join("") + text;
        beforeSeq = numberFromRow(rows[rows.length - 1].seq);
        // One line more than asked, so the first of the kept ones is whole.
        if (text.split("\n").filter((line) => line.length > 0).length > lines) break;
      }
      return text
        .split("\n")
        .filter((line) => line.length > 0)
        .slice(-lines);
    });
  }

  /** The chunks of a phase that overlap `[start, end)` in the given units, in order. */
  private async overlapping(
    runId: string,
    phase: StoredLogPhase,
    unit: "char" | "byte",
    start: number,
    end: number,
  ): Promise<Array<Pick<LogChunkRow, "text" | "char_start" | "byte_start">>> {
    return translating(this.dialect, async () =>
      this.db<LogChunkRow>("run_log_chunks")
        .where({ run_id: runId, phase })
        .where(`${unit}_end`, ">", start)
        .where(`${unit}_start`, "<", end)
        .orderBy("seq", "asc")
        .select("text", "char_start", "byte_start"),
    );
  }
}

/** How many chunks `tail` reads per step backwards. */
const TAIL_BATCH = 64;
