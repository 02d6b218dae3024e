import type { Knex } from "knex";

// NOTE: frozen once released; later changes go in a new migration.

const BACKFILL_BATCH = 500;

/** The run_log_chunks columns the backfill reads. */
interface ChunkRow {
  run_id: string;
  phase: string;
  seq: number | string;
  text: string;
}

/**
 * Where each log chunk starts and ends in its phase's log, in JavaScript string units (the `/v1`
 * log route's offsets) and in UTF-8 bytes (the `/api/v2` log-read protocol's offsets), so a read
 * of one window fetches only the chunks it overlaps instead of the whole log. Existing chunks are
 * backfilled phase by phase, in sequence order.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("run_log_chunks", (t) => {
    t.bigInteger("char_start").nullable();
    t.bigInteger("char_end").nullable();
    t.bigInteger("byte_start").nullable();
    t.bigInteger("byte_end").nullable();
  });
  const logs = await knex<ChunkRow>("run_log_chunks").distinct("run_id", "phase");
  for (const { run_id: runId, phase } of logs) {
    let chars = 0;
    let bytes = 0;
    let fromSeq = 0;
    for (;;) {
      const rows = await knex<ChunkRow>("run_log_chunks")
        .where({ run_id: runId, phase })
        .where("seq", ">=", fromSeq)
        .orderBy("seq", "asc")
        .limit(BACKFILL_BATCH)
        .select("seq", "text");
      if (rows.length === 0) break;
      for (const row of rows) {
        const text = row.text;
        const next = {
          char_start: chars,
          char_end: chars + text.length,
          byte_start: bytes,
          byte_end: bytes + Buffer.byteLength(text, "utf8"),
        };
        await knex("run_log_chunks").where({ run_id: runId, phase, seq: row.seq }).update(next);
        chars = next.char_end;
        bytes = next.byte_end;
      }
      fromSeq = Number(rows[rows.length - 1].seq) + 1;
    }
  }
  await knex.schema.alterTable("run_log_chunks", (t) => {
    t.index(["run_id", "phase", "char_end"], "run_log_chunks_char_end");
    t.index(["run_id", "phase", "byte_end"], "run_log_chunks_byte_end");
  });
}

/** Drops what `up` added. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("run_log_chunks", (t) => {
    t.dropIndex(["run_id", "phase", "char_end"], "run_log_chunks_char_end");
    t.dropIndex(["run_id", "phase", "byte_end"], "run_log_chunks_byte_end");
  });
  await knex.schema.alterTable("run_log_chunks", (t) => {
    for (const column of ["char_start", "char_end", "byte_start", "byte_end"]) t.dropColumn(column);
  });
}
