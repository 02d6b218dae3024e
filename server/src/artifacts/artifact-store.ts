import { Readable } from "node:stream";
import { ARTIFACT_FORMAT, type ArtifactKind, type ArtifactRef } from "../domain/artifacts.ts";
import {
  DEFAULT_FRAME_SIZE,
  FramedArtifactError,
  FramedOpener,
  FramedSealer,
  framedObjectSize,
  HEADER_SIZE,
  maxFramedObjectSize,
  openHeader,
  openWhole,
  sealWhole,
  type FramedOpenerOptions,
} from "./framed.ts";
import { FramedReadWorker } from "./framed-reader.ts";
import { ObjectNotFoundError, type ObjectBackend } from "./object-backend.ts";

/** How much of a framed object one read (and one decrypted batch) covers: 16 frames of 64 KiB. */
const FRAMED_BATCH_BYTES = 16 * (DEFAULT_FRAME_SIZE + 16);
/**
 * Framed objects up to this plaintext size are opened on the main thread; larger ones on a backend
 * with local files are read, verified, decrypted and hashed in the store's read worker
 * (framed-reader.ts).
 */
export const MAIN_THREAD_MAX_BYTES = 1024 * 1024;

/** What an artifact is written as: its kind, its workspace and its object key (all bound into the encryption). */
export interface ArtifactTarget {
  kind: ArtifactKind;
  workspaceId: string;
  key: string;
}

/**
 * The artifact store: every artifact is written framed (framed.ts) through an ObjectBackend and
 * read back only as what its ArtifactRef says it is.
 */
export interface ArtifactStore {
  /** The backend's kind ("local", "postgres", "s3"), for logs. */
  readonly backendKind: string;
  /** Stores an artifact from bytes or a stream; nothing is held whole in memory for a stream. */
  write(target: ArtifactTarget, source: Uint8Array | AsyncIterable<Uint8Array>): Promise<ArtifactRef>;
  /**
   * Opens an artifact as a plaintext stream. Before anything is returned, the object's header
   * must unwrap for this ref and workspace and its size must be exactly what the ref's plaintext
   * size implies (else FramedArtifactError; ObjectNotFoundError when absent); the stream then fails
   * on any invalid frame, a length other than the ref's, or a digest mismatch at the end. With
   * `lend`, the stream may lend its chunks (http/lent-chunks.ts): only for a body that goes
   * straight to the HTTP writer, which gives them back.
   */
  open(ref: ArtifactRef, workspaceId: string, options?: { lend?: boolean }): Promise<Readable>;
  /** The whole plaintext of an artifact, verified (for callers that need it in memory anyway). */
  read(ref: ArtifactRef, workspaceId: string): Promise<Buffer>;
  delete(key: string): Promise<void>;
  /** Ends the streams under way and releases what the store holds (its read worker, the backend). */
  close(): Promise<void>;
}

/** A buffer as a sequence of batch-sized chunks, so a writer never sees it as one giant chunk. */
function* chunksOf(bytes: Uint8Array): Generator<Buffer> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = 0; offset < buffer.length; offset += FRAMED_BATCH_BYTES)
    yield buffer.subarray(offset, offset + FRAMED_BATCH_BYTES);
  if (buffer.length === 0) yield buffer;
}

/**
 * Feeds object bytes to a framed reader: the reader decrypts each batch before its write completes
 * and keeps no reference to it, so a source may reuse its buffer. Waiting for each write is the
 * backpressure. A failed read fails the reader; a destroyed reader stops the reads; `done` runs
 * either way.
 */
async function pump(
  source: AsyncIterable<Uint8Array>,
  opener: FramedOpener,
  done: () => Promise<void> = async () => undefined,
): Promise<void> {
  try {
    for await (const chunk of source) {
      if (opener.destroyed) break;
      await new Promise<void>((resolve, reject) => {
        // A reader destroyed mid-write (the client went away) may never call back.
        const closed = () => reject(new Error("the framed reader was closed"));
        opener.once("close", closed);
        opener.write(chunk, (error) => {
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
    await done().catch(() => undefined);
  }
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** The artifact store over any ObjectBackend (backends/). */
export class FramedArtifactStore implements ArtifactStore {
  /** Where large framed objects of a file backend are read and verified (started on first use). */
  readonly reader = new FramedReadWorker();

  constructor(
    readonly backend: ObjectBackend,
    /** The server key that wraps artifacts' data keys. */
    private readonly dataKeyWrap: Buffer,
  ) {}

  get backendKind(): string {
    return this.backend.kind;
  }

  async write(target: ArtifactTarget, source: Uint8Array | AsyncIterable<Uint8Array>): Promise<ArtifactRef> {
    // A small artifact held in memory: sealed at once and stored in one write where the backend can.
    if (source instanceof Uint8Array && source.byteLength <= MAIN_THREAD_MAX_BYTES && this.backend.writeWhole) {
      const { object, ...sealed } = sealWhole(source, { wrappingKey: this.dataKeyWrap, identity: target });
      await this.backend.writeWhole(target.key, object);
      return { kind: target.kind, key: target.key, ...sealed, format: ARTIFACT_FORMAT };
    }
    const sealer = new FramedSealer({ wrappingKey: this.dataKeyWrap, identity: target });
    const input = source instanceof Uint8Array ? Readable.from(chunksOf(source)) : Readable.from(source);
    input.once("error", (error) => sealer.destroy(error));
    input.pipe(sealer);
    try {
      await this.backend.write(target.key, sealer);
    } catch (error) {
      input.destroy();
      sealer.destroy();
      throw error;
    }
    return { kind: target.kind, key: target.key, ...sealer.result(), format: ARTIFACT_FORMAT };
  }

  async open(ref: ArtifactRef, workspaceId: string, { lend = false }: { lend?: boolean } = {}): Promise<Readable> {
    if (ref.format !== ARTIFACT_FORMAT)
      throw new FramedArtifactError(`artifact '${ref.key}' has the unknown format '${String(ref.format)}'`);
    const identity = { kind: ref.kind, workspaceId, key: ref.key };
    const stream = this.backend.openFile
      ? await this.openFile(ref, identity, lend)
      : await this.openStreamed(ref, identity);
    // The reader may fail before its consumer listens; it is destroyed (`errored`) either way.
    stream.on("error", () => undefined);
    return stream;
  }

  private check(
    ref: ArtifactRef,
    identity: FramedOpenerOptions["identity"],
    header: Buffer,
    size: number,
  ): FramedOpenerOptions {
    const { frameSize, dataKey } = openHeader(header, this.dataKeyWrap, identity);
    if (size !== framedObjectSize(ref.sizeBytes, frameSize))
      throw new FramedArtifactError(`artifact '${ref.key}' does not match its descriptor`);
    return { dataKey, frameSize, identity, sizeBytes: ref.sizeBytes, sha256: ref.sha256 };
  }

  /** A backend of local files: positioned reads, large objects in the read worker. */
  private async openFile(
    ref: ArtifactRef,
    identity: FramedOpenerOptions["identity"],
    lend: boolean,
  ): Promise<Readable> {
    const file = await this.backend.openFile!(ref.key);
    try {
      const { size } = await file.stat();
      const header = Buffer.alloc(HEADER_SIZE);
      const { bytesRead } = await file.read(header, 0, HEADER_SIZE, 0);
      const options = this.check(ref, identity, header.subarray(0, bytesRead), size);
      if (ref.sizeBytes > MAIN_THREAD_MAX_BYTES) {
        // Whole frames per read (16 of the default size); the worker hands them over in slots of that size.
        const readBytes = Math.ceil(FRAMED_BATCH_BYTES / (options.frameSize + 16)) * (options.frameSize + 16);
        return this.reader.open(file, HEADER_SIZE, options, readBytes, lend);
      }
      const opener = new FramedOpener(options);
      const buffer = Buffer.allocUnsafe(FRAMED_BATCH_BYTES);
      const batches = async function* () {
        for (let position = HEADER_SIZE; ;) {
          const { bytesRead: n } = await file.read(buffer, 0, buffer.length, position);
          if (n === 0) return;
          position += n;
          yield buffer.subarray(0, n);
        }
      };
      void pump(batches(), opener, () => file.close());
      return opener;
    } catch (error) {
      await file.close();
      throw error;
    }
  }

  /** Any other backend: the header and size first, then the frames streamed through the opener here. */
  private async openStreamed(ref: ArtifactRef, identity: FramedOpenerOptions["identity"]): Promise<Readable> {
    const size = await this.backend.size(ref.key);
    if (size === null) throw new ObjectNotFoundError(ref.key);
    const options = this.check(
      ref,
      identity,
      await collect(this.backend.read(ref.key, { start: 0, end: HEADER_SIZE })),
      size,
    );
    const opener = new FramedOpener(options);
    void pump(this.backend.read(ref.key, { start: HEADER_SIZE }), opener);
    return opener;
  }

  async read(ref: ArtifactRef, workspaceId: string): Promise<Buffer> {
    // A small artifact: read whole and opened at once, with the same checks as a stream's.
    if (ref.format === ARTIFACT_FORMAT && ref.sizeBytes <= MAIN_THREAD_MAX_BYTES && this.backend.readWhole) {
      const identity = { kind: ref.kind, workspaceId, key: ref.key };
      const object = await this.backend.readWhole(ref.key, maxFramedObjectSize(ref.sizeBytes));
      if (object === null) throw new FramedArtifactError(`artifact '${ref.key}' does not match its descriptor`);
      return openWhole(
        object.subarray(HEADER_SIZE),
        this.check(ref, identity, object.subarray(0, HEADER_SIZE), object.length),
      );
    }
    return collect(await this.open(ref, workspaceId));
  }

  async delete(key: string): Promise<void> {
    await this.backend.delete(key);
  }

  async close(): Promise<void> {
    await this.reader.close();
    await this.backend.close();
  }
}
