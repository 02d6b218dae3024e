import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, open, readFile, rename, rm, writeFile, type FileHandle } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline as pipelineAsync } from "node:stream/promises";
import { DEFAULT_FRAME_SIZE, FramedArtifactError, FramedOpener, FramedSealer, framedObjectSize, HEADER_SIZE, openHeader, type ArtifactIdentity, type FramedOpenerOptions } from "./framed.ts";
import { FramedReadWorker } from "./framed-reader.ts";
import type { SecretBox } from "./keys.ts";

/** How much of a framed object one read (and one decrypted batch) covers: 16 frames of 64 KiB. */
const FRAMED_BATCH_BYTES = 16 * (DEFAULT_FRAME_SIZE + 16);
/**
 * Framed objects up to this plaintext size are opened on the main thread; larger ones are read,
 * verified, decrypted and hashed in the store's read worker (framed-reader.ts).
 */
export const MAIN_THREAD_MAX_BYTES = 1024 * 1024;

/** What is recorded about a stored artifact: its plaintext size and SHA-256. */
export interface ArtifactDescriptor {
  key: string;
  sizeBytes: number;
  sha256: string;
}

/** An object store for encrypted artifacts. */
export interface ArtifactStore {
  put(key: string, plaintext: Buffer): Promise<ArtifactDescriptor>;
  get(key: string, expected: { sizeBytes: number; sha256: string }): Promise<Buffer>;
  delete(key: string): Promise<void>;
  /** Stores a streamed artifact in the framed format (framed.ts); nothing is held whole in memory. */
  putFramed(key: string, identity: Omit<ArtifactIdentity, "key">, source: Uint8Array | AsyncIterable<Uint8Array>): Promise<ArtifactDescriptor>;
  /**
   * Opens a framed artifact as a plaintext stream. Before anything is returned, the object's
   * header must unwrap for this identity and its size must be exactly what the declared plaintext
   * size implies (else FramedArtifactError); the stream then fails on any invalid frame, a length
   * other than the declared one, or a digest mismatch at the end. Objects over
   * MAIN_THREAD_MAX_BYTES are read, verified and decrypted in the store's read worker. With
   * `lend`, the stream may lend its chunks (http/lent-chunks.ts): only for a body that goes
   * straight to the HTTP writer, which gives them back.
   */
  openFramed(key: string, identity: Omit<ArtifactIdentity, "key">, expected: { sizeBytes: number; sha256: string }, options?: { lend?: boolean }): Promise<Readable>;
  /** The whole plaintext of a framed artifact, verified (for callers that need it in memory anyway). */
  getFramed(key: string, identity: Omit<ArtifactIdentity, "key">, expected: { sizeBytes: number; sha256: string }): Promise<Buffer>;
  /** Ends the streams under way and releases what the store holds (its read worker). */
  close(): Promise<void>;
}

/** A buffer as a sequence of batch-sized chunks, so a writer never sees it as one giant chunk. */
function* chunksOf(bytes: Uint8Array): Generator<Buffer> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = 0; offset < buffer.length; offset += FRAMED_BATCH_BYTES) yield buffer.subarray(offset, offset + FRAMED_BATCH_BYTES);
  if (buffer.length === 0) yield buffer;
}

/**
 * Feeds a file to a framed reader in batches read into one reused buffer: the reader decrypts each
 * batch before its write completes and keeps no reference to it, so streaming allocates only the
 * plaintext it sends. Waiting for each write is the backpressure. A failed read fails the reader;
 * a destroyed reader stops the reads; the file is closed either way.
 */
async function pump(file: FileHandle, opener: FramedOpener, start: number): Promise<void> {
  const buffer = Buffer.allocUnsafe(FRAMED_BATCH_BYTES);
  let position = start;
  try {
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0 || opener.destroyed) break;
      position += bytesRead;
      await new Promise<void>((resolve, reject) => {
        // A reader destroyed mid-write (the client went away) may never call back.
        const closed = () => reject(new Error("the framed reader was closed"));
        opener.once("close", closed);
        opener.write(buffer.subarray(0, bytesRead), (error) => {
          opener.off("close", closed);
          if (error) reject(error);
          else resolve();
        });
      });
    }
    if (!opener.destroyed) opener.end();
  } catch (error) {
    opener.destroy(error as Error);
  } finally {
    await file.close().catch(() => undefined);
  }
}

/** Local-directory adapter: each object is sealed with AES-256-GCM and written atomically. */
export class LocalArtifactStore implements ArtifactStore {
  private readonly root: string;
  /** Where large framed objects are read and verified (started on first use). */
  readonly reader = new FramedReadWorker();

  constructor(
    directory: string,
    private readonly box: SecretBox,
    /** The server key that wraps framed artifacts' data keys. */
    private readonly dataKeyWrap: Buffer,
  ) {
    this.root = resolve(directory);
  }

  private path(key: string): string {
    if (!/^[a-z0-9][a-z0-9._/-]*$/.test(key) || key.includes("..")) throw new Error(`invalid artifact key '${key}'`);
    const path = resolve(join(this.root, key));
    if (!path.startsWith(this.root + sep)) throw new Error(`invalid artifact key '${key}'`);
    return path;
  }

  async put(key: string, plaintext: Buffer): Promise<ArtifactDescriptor> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(temporary, this.box.seal(plaintext), { mode: 0o600 });
    await rename(temporary, path);
    return { key, sizeBytes: plaintext.length, sha256: createHash("sha256").update(plaintext).digest("hex") };
  }

  async get(key: string, expected: { sizeBytes: number; sha256: string }): Promise<Buffer> {
    const plaintext = this.box.open(await readFile(this.path(key)));
    const sha256 = createHash("sha256").update(plaintext).digest("hex");
    // NOTE: a descriptor that disagrees with the bytes is never released.
    if (plaintext.length !== expected.sizeBytes || sha256 !== expected.sha256) throw new Error(`artifact '${key}' does not match its descriptor`);
    return plaintext;
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async putFramed(key: string, identity: Omit<ArtifactIdentity, "key">, source: Uint8Array | AsyncIterable<Uint8Array>): Promise<ArtifactDescriptor> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
    const sealer = new FramedSealer({ wrappingKey: this.dataKeyWrap, identity: { ...identity, key } });
    try {
      const input = source instanceof Uint8Array ? Readable.from(chunksOf(source)) : Readable.from(source);
      await pipelineAsync(input, sealer, createWriteStream(temporary, { mode: 0o600, highWaterMark: FRAMED_BATCH_BYTES }));
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return { key, ...sealer.result() };
  }

  async openFramed(key: string, identity: Omit<ArtifactIdentity, "key">, expected: { sizeBytes: number; sha256: string }, { lend = false }: { lend?: boolean } = {}): Promise<Readable> {
    const file = await open(this.path(key), "r");
    try {
      const { size } = await file.stat();
      const header = Buffer.alloc(HEADER_SIZE);
      const { bytesRead } = await file.read(header, 0, HEADER_SIZE, 0);
      const { frameSize, dataKey } = openHeader(header.subarray(0, bytesRead), this.dataKeyWrap, { ...identity, key });
      if (size !== framedObjectSize(expected.sizeBytes, frameSize)) throw new FramedArtifactError(`artifact '${key}' does not match its descriptor`);
      const options = { dataKey, frameSize, identity: { ...identity, key }, ...expected };
      // Whole frames per read (16 of the default size); the worker hands them over in slots of that size.
      const readBytes = Math.ceil(FRAMED_BATCH_BYTES / (frameSize + 16)) * (frameSize + 16);
      const stream = expected.sizeBytes > MAIN_THREAD_MAX_BYTES ? this.reader.open(file, HEADER_SIZE, options, readBytes, lend) : this.openHere(file, options);
      // The reader may fail before its consumer listens; it is destroyed (`errored`) either way.
      stream.on("error", () => undefined);
      return stream;
    } catch (error) {
      await file.close();
      throw error;
    }
  }

  /** A small object: read, verified and decrypted on the main thread (no round trips to the worker). */
  private openHere(file: FileHandle, options: FramedOpenerOptions): Readable {
    const opener = new FramedOpener(options);
    void pump(file, opener, HEADER_SIZE);
    return opener;
  }

  async getFramed(key: string, identity: Omit<ArtifactIdentity, "key">, expected: { sizeBytes: number; sha256: string }): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.openFramed(key, identity, expected)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async close(): Promise<void> {
    await this.reader.close();
  }
}
