import { randomBytes } from "node:crypto";
import type { Knex } from "knex";
import { assertObjectKey, ObjectNotFoundError, type ObjectBackend } from "../object-backend.ts";

/** The bytes one row holds (the last row of an object may hold fewer). */
export const POSTGRES_CHUNK_BYTES = 256 * 1024;
/** How many chunk rows one read query fetches: 1 MiB per round trip. */
const CHUNKS_PER_QUERY = 4;

interface ObjectRow {
  object_key: string;
  object_id: string;
  size_bytes: number | string;
  chunk_bytes: number;
}

/**
 * Objects in PostgreSQL itself, shared by every process on the database: `artifact_objects` maps
 * a key to its current object id and size, `artifact_object_chunks` holds the bytes in rows of
 * POSTGRES_CHUNK_BYTES. A write inserts its chunks as the source yields them and points the key
 * at them in the same transaction, so the object appears whole or not at all (an aborted source
 * rolls every row back); a replace removes the previous chunks in that transaction. A read selects
 * only the chunks its range covers, a few at a time, so neither side holds a whole object.
 */
export class PostgresObjectBackend implements ObjectBackend {
  readonly kind = "postgres";

  constructor(private readonly knex: Knex) {}

  async write(key: string, source: AsyncIterable<Uint8Array>): Promise<number> {
    assertObjectKey(key);
    const objectId = randomBytes(16).toString("hex");
    return this.knex.transaction(async (trx) => {
      let seq = 0;
      let length = 0;
      let buffer = Buffer.allocUnsafe(POSTGRES_CHUNK_BYTES);
      let filled = 0;
      const flush = async () => {
        await trx("artifact_object_chunks").insert({
          object_id: objectId,
          seq: seq++,
          data: buffer.subarray(0, filled),
        });
        buffer = Buffer.allocUnsafe(POSTGRES_CHUNK_BYTES);
        filled = 0;
      };
      for await (const chunk of source) {
        length += chunk.byteLength;
        let offset = 0;
        while (offset < chunk.byteLength) {
          const take = Math.min(POSTGRES_CHUNK_BYTES - filled, chunk.byteLength - offset);
          buffer.set(chunk.subarray(offset, offset + take), filled);
          filled += take;
          offset += take;
          if (filled === POSTGRES_CHUNK_BYTES) await flush();
        }
      }
      if (filled > 0) await flush();
      // Writers of one key take turns from here on, so a replaced object's chunks are always found.
      await trx.raw("select pg_advisory_xact_lock(hashtextextended(?, 0))", [`stackship/artifact/${key}`]);
      const previous = await trx<ObjectRow>("artifact_objects").where({ object_key: key }).first("object_id");
      await trx("artifact_objects")
        .insert({ object_key: key, object_id: objectId, size_bytes: length, chunk_bytes: POSTGRES_CHUNK_BYTES })
        .onConflict("object_key")
        .merge();
      if (previous) await trx("artifact_object_chunks").where({ object_id: previous.object_id }).delete();
      return length;
    });
  }

  read(key: string, range: { start?: number; end?: number } = {}): AsyncIterable<Uint8Array> {
    const knex = this.knex;
    return (async function* () {
      assertObjectKey(key);
      const head = await knex<ObjectRow>("artifact_objects")
        .where({ object_key: key })
        .first("object_id", "size_bytes", "chunk_bytes");
      if (!head) throw new ObjectNotFoundError(key);
      const size = Number(head.size_bytes);
      const chunkBytes = Number(head.chunk_bytes);
      const start = Math.max(0, range.start ?? 0);
      const end = Math.min(size, range.end ?? size);
      if (start >= end) return;
      const last = Math.floor((end - 1) / chunkBytes);
      for (let seq = Math.floor(start / chunkBytes); seq <= last;) {
        const to = Math.min(last, seq + CHUNKS_PER_QUERY - 1);
        const rows: Array<{ seq: number; data: Buffer }> = await knex("artifact_object_chunks")
          .where({ object_id: head.object_id })
          .whereBetween("seq", [seq, to])
          .orderBy("seq", "asc")
          .select("seq", "data");
        // A replace or delete committed while this read was under way removed the chunks it reads.
        if (rows.length !== to - seq + 1) throw new ObjectNotFoundError(key);
        for (const row of rows) {
          const offset = Number(row.seq) * chunkBytes;
          yield row.data.subarray(Math.max(0, start - offset), Math.min(row.data.length, end - offset));
        }
        seq = to + 1;
      }
    })();
  }

  async size(key: string): Promise<number | null> {
    assertObjectKey(key);
    const head = await this.knex<ObjectRow>("artifact_objects").where({ object_key: key }).first("size_bytes");
    return head ? Number(head.size_bytes) : null;
  }

  async delete(key: string): Promise<void> {
    assertObjectKey(key);
    await this.knex.transaction(async (trx) => {
      await trx.raw("select pg_advisory_xact_lock(hashtextextended(?, 0))", [`stackship/artifact/${key}`]);
      const head = await trx<ObjectRow>("artifact_objects").where({ object_key: key }).first("object_id");
      if (!head) return;
      await trx("artifact_objects").where({ object_key: key }).delete();
      await trx("artifact_object_chunks").where({ object_id: head.object_id }).delete();
    });
  }

  /** The database belongs to whoever opened it (the services); nothing else is held here. */
  async close(): Promise<void> {}
}
