import type { FileHandle } from "node:fs/promises";

/**
 * Where artifact objects' bytes live. The artifact store above it (artifact-store.ts) encrypts,
 * frames and verifies; a backend only keeps opaque bytes under a key. Three backends implement
 * it: a local directory (the embedded default), PostgreSQL (chunked rows, shared by every process
 * on the same database) and an S3-compatible object store (`STACKSHIP_ARTIFACT_URL`).
 *
 * Every backend passes the same conformance suite: writes are atomic (a key is absent until its
 * write completes, and a failed or aborted write leaves nothing), reads stream in chunks and never
 * hold a whole object in memory, ranges are byte-exact, and an absent key is an
 * `ObjectNotFoundError`, never an empty object.
 */
export interface ObjectBackend {
  /** A short name for logs and metrics: "local", "postgres", "s3". */
  readonly kind: string;
  /**
   * Stores an object from a stream of chunks and resolves to its length in bytes. The key becomes
   * visible only once the whole object is stored; writing an existing key replaces it atomically.
   */
  write(key: string, source: AsyncIterable<Uint8Array>): Promise<number>;
  /**
   * Streams bytes `[start, end)` of an object (whole object by default; `end` is clamped to its
   * size). Rejects (or the iterable throws on first use) with ObjectNotFoundError when absent.
   */
  read(key: string, range?: { start?: number; end?: number }): AsyncIterable<Uint8Array>;
  /** The object's length in bytes, or null when there is no such object. */
  size(key: string): Promise<number | null>;
  /** Removes an object; removing an absent key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Optional: opens the object's file for positioned reads, for a backend whose objects are local
   * files (the artifact store then reads large objects in its read worker). The caller closes it.
   */
  openFile?(key: string): Promise<FileHandle>;
  /**
   * Optional: stores a small object held whole in memory, atomically like `write` (fewer steps
   * than a stream for a local file). Resolves to its length.
   */
  writeWhole?(key: string, bytes: Buffer): Promise<number>;
  /**
   * Optional: reads a small object whole; ObjectNotFoundError when absent, null (nothing read)
   * when it is larger than `maxBytes`.
   */
  readWhole?(key: string, maxBytes: number): Promise<Buffer | null>;
  /** Releases connections and handles the backend holds. */
  close(): Promise<void>;
}

export class ObjectNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`artifact object '${key}' does not exist`);
    this.name = "ObjectNotFoundError";
  }
}

/** Keys are relative, lower-case paths: `[a-z0-9][a-z0-9._/-]*`, no `..`. */
export function assertObjectKey(key: string): void {
  if (!/^[a-z0-9][a-z0-9._/-]*$/.test(key) || key.includes("..")) throw new Error(`invalid artifact key '${key}'`);
}
