import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual, type Hash } from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";
import { ARTIFACT_FORMAT } from "../domain/artifacts.ts";

// The framed artifact format (stackship framed AES-256-GCM, version 1), for artifacts that are
// streamed rather than held in memory (the plan JSON):
//
//   header  = "SSAF" ‖ version (u8 = 1) ‖ frame size (u32 BE) ‖ wrap iv (12) ‖ wrap tag (16) ‖ wrapped data key (32)
//   frame i = AES-256-GCM(data key, nonce = 0⁴ ‖ i (u64 BE), AAD = i (u64 BE) ‖ final (u8) ‖ identity) ‖ tag (16)
//
// Every frame but the last holds exactly `frame size` plaintext bytes; the last one (final = 1)
// holds 0…frame size bytes, so an object of N plaintext bytes has max(1, ⌈N / frame size⌉) frames
// and its size follows from N and the frame size alone. The data key is random per artifact (so the
// counter nonces never repeat under one key) and is wrapped with a server key; the wrap binds the
// header fields and the artifact's identity (kind, workspace, object key) as AAD, and so does
// every frame: a frame moved, reordered, dropped at the end, or an object presented as another
// artifact's fails authentication.

/** The format name recorded in descriptors. */
export const FRAMED_FORMAT = ARTIFACT_FORMAT;
/** 64 KiB frames. */
export const DEFAULT_FRAME_SIZE = 64 * 1024;
const MIN_FRAME_SIZE = 1024;
const MAX_FRAME_SIZE = 16 * 1024 * 1024;
const MAGIC = Buffer.from("SSAF", "ascii");
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const PREFIX_BYTES = MAGIC.length + 1 + 4;
/** The size of the header in front of the first frame. */
export const HEADER_SIZE = PREFIX_BYTES + IV_BYTES + TAG_BYTES + KEY_BYTES;
const WRAP_PURPOSE = Buffer.from("stackship/framed-artifact/v1/data-key\0", "ascii");

/** What an artifact is: bound into the key wrap and every frame. */
export interface ArtifactIdentity {
  kind: string;
  workspaceId: string;
  key: string;
}

/** A framed artifact that is malformed, tampered with, or does not match its descriptor. */
export class FramedArtifactError extends Error {
  override name = "FramedArtifactError";
}

function identityBytes(identity: ArtifactIdentity): Buffer {
  // A JSON array keeps the three parts unambiguous (no separator can be forged into one of them).
  return Buffer.from(JSON.stringify([identity.kind, identity.workspaceId, identity.key]), "utf8");
}

function nonceOf(index: number): Buffer {
  const nonce = Buffer.alloc(IV_BYTES);
  nonce.writeBigUInt64BE(BigInt(index), 4);
  return nonce;
}

function frameAad(identity: Buffer, index: number, final: boolean): Buffer {
  const aad = Buffer.allocUnsafe(9 + identity.length);
  aad.writeBigUInt64BE(BigInt(index), 0);
  aad[8] = final ? 1 : 0;
  identity.copy(aad, 9);
  return aad;
}

function checkFrameSize(frameSize: number): void {
  if (!Number.isInteger(frameSize) || frameSize < MIN_FRAME_SIZE || frameSize > MAX_FRAME_SIZE) {
    throw new FramedArtifactError(`invalid frame size ${frameSize}`);
  }
}

/** How many frames hold `plaintextSize` bytes. */
export function frameCount(plaintextSize: number, frameSize: number): number {
  return Math.max(1, Math.ceil(plaintextSize / frameSize));
}

/** The exact object size of a framed artifact of `plaintextSize` bytes. */
export function framedObjectSize(plaintextSize: number, frameSize: number): number {
  return HEADER_SIZE + plaintextSize + frameCount(plaintextSize, frameSize) * TAG_BYTES;
}

function headerPrefix(frameSize: number): Buffer {
  const prefix = Buffer.alloc(PREFIX_BYTES);
  MAGIC.copy(prefix, 0);
  prefix[MAGIC.length] = VERSION;
  prefix.writeUInt32BE(frameSize, MAGIC.length + 1);
  return prefix;
}

function wrapAad(prefix: Buffer, identity: Buffer): Buffer {
  return Buffer.concat([WRAP_PURPOSE, prefix, identity]);
}

/** A new header with a fresh random data key wrapped by `wrappingKey`. */
export function sealHeader(
  wrappingKey: Buffer,
  identity: ArtifactIdentity,
  frameSize: number,
): { header: Buffer; dataKey: Buffer } {
  checkFrameSize(frameSize);
  const dataKey = randomBytes(KEY_BYTES);
  const prefix = headerPrefix(frameSize);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", wrappingKey, iv);
  cipher.setAAD(wrapAad(prefix, identityBytes(identity)));
  const wrapped = Buffer.concat([cipher.update(dataKey), cipher.final()]);
  return { header: Buffer.concat([prefix, iv, cipher.getAuthTag(), wrapped]), dataKey };
}

/** The frame size and the unwrapped data key of a header; anything invalid throws FramedArtifactError. */
export function openHeader(
  header: Buffer,
  wrappingKey: Buffer,
  identity: ArtifactIdentity,
): { frameSize: number; dataKey: Buffer } {
  if (header.length !== HEADER_SIZE) throw new FramedArtifactError("truncated header");
  if (!timingSafeEqual(header.subarray(0, MAGIC.length), MAGIC) || header[MAGIC.length] !== VERSION)
    throw new FramedArtifactError("not a framed artifact of a known version");
  const frameSize = header.readUInt32BE(MAGIC.length + 1);
  checkFrameSize(frameSize);
  const prefix = header.subarray(0, PREFIX_BYTES);
  const iv = header.subarray(PREFIX_BYTES, PREFIX_BYTES + IV_BYTES);
  const tag = header.subarray(PREFIX_BYTES + IV_BYTES, PREFIX_BYTES + IV_BYTES + TAG_BYTES);
  const wrapped = header.subarray(PREFIX_BYTES + IV_BYTES + TAG_BYTES);
  try {
    const decipher = createDecipheriv("aes-256-gcm", wrappingKey, iv);
    decipher.setAAD(wrapAad(prefix, identityBytes(identity)));
    decipher.setAuthTag(tag);
    return { frameSize, dataKey: Buffer.concat([decipher.update(wrapped), decipher.final()]) };
  } catch {
    throw new FramedArtifactError("the data key does not unwrap for this artifact");
  }
}

/** Options of a writer. */
export interface FramedSealerOptions {
  wrappingKey: Buffer;
  identity: ArtifactIdentity;
  frameSize?: number;
}

/**
 * The writer's core, without a stream around it (FramedSealer, and sealWhole): plaintext in,
 * frames out. It keeps at most one frame of plaintext: a frame is sealed once more bytes follow it,
 * the last one at `finish`.
 */
export class FramedSealCore {
  /** The object's header (first out). */
  readonly header: Buffer;
  private readonly dataKey: Buffer;
  private readonly identity: Buffer;
  private readonly frameSize: number;
  private readonly hash: Hash = createHash("sha256");
  private pending: Buffer = Buffer.alloc(0);
  private index = 0;
  private size = 0;
  private digest: string | null = null;

  constructor(options: FramedSealerOptions) {
    this.frameSize = options.frameSize ?? DEFAULT_FRAME_SIZE;
    const { header, dataKey } = sealHeader(options.wrappingKey, options.identity, this.frameSize);
    this.header = header;
    this.dataKey = dataKey;
    this.identity = identityBytes(options.identity);
  }

  private seal(plaintext: Buffer, final: boolean): Buffer[] {
    const cipher = createCipheriv("aes-256-gcm", this.dataKey, nonceOf(this.index));
    cipher.setAAD(frameAad(this.identity, this.index, final));
    const body = cipher.update(plaintext);
    cipher.final();
    this.index += 1;
    return [body, cipher.getAuthTag()];
  }

  /** Takes more plaintext; returns the frames it completes (bodies and tags, in order). */
  update(chunk: Buffer): Buffer[] {
    if (this.digest !== null) throw new Error("the framed writer has finished");
    this.hash.update(chunk);
    this.size += chunk.length;
    const data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: Buffer[] = [];
    let offset = 0;
    while (data.length - offset > this.frameSize) {
      out.push(...this.seal(data.subarray(offset, offset + this.frameSize), false));
      offset += this.frameSize;
    }
    this.pending = Buffer.from(data.subarray(offset));
    return out;
  }

  /** Seals the final frame. */
  finish(): Buffer[] {
    if (this.digest !== null) throw new Error("the framed writer has finished");
    const out = this.seal(this.pending, true);
    this.pending = Buffer.alloc(0);
    this.digest = this.hash.digest("hex");
    return out;
  }

  /** The plaintext size and SHA-256, once finished. */
  result(): { sizeBytes: number; sha256: string } {
    if (this.digest === null) throw new Error("the framed writer has not finished");
    return { sizeBytes: this.size, sha256: this.digest };
  }
}

/** The streaming writer: plaintext in, header and frames out, with backpressure (a FramedSealCore inside). */
export class FramedSealer extends Transform {
  private readonly core: FramedSealCore;

  constructor(options: FramedSealerOptions) {
    super();
    this.core = new FramedSealCore(options);
    this.push(this.core.header);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const out = this.core.update(chunk);
    if (out.length > 0) this.push(Buffer.concat(out));
    callback();
  }

  override _flush(callback: TransformCallback): void {
    this.push(Buffer.concat(this.core.finish()));
    callback();
  }

  /** The plaintext size and SHA-256, once the writer has finished. */
  result(): { sizeBytes: number; sha256: string } {
    return this.core.result();
  }
}

/** Seals a whole buffer at once: the object, and the plaintext's size and SHA-256 (small artifacts held in memory anyway). */
export function sealWhole(
  plaintext: Uint8Array,
  options: FramedSealerOptions,
): { object: Buffer; sizeBytes: number; sha256: string } {
  const core = new FramedSealCore(options);
  const object = Buffer.concat([
    core.header,
    ...core.update(Buffer.from(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength)),
    ...core.finish(),
  ]);
  return { object, ...core.result() };
}

/**
 * Opens the frames of a whole object (everything after its header) at once: the same checks as
 * the streaming reader (every frame, then length and digest), all of them before anything is
 * returned.
 */
export function openWhole(frames: Buffer, options: FramedOpenerOptions): Buffer {
  const verifier = new FramedVerifier(options);
  const first = verifier.update(frames) ?? [];
  const last = verifier.finish() ?? [];
  return Buffer.concat([...first, ...last]);
}

/** The largest object a descriptor of `plaintextSize` bytes can match (the smallest frame size has the most tags). */
export function maxFramedObjectSize(plaintextSize: number): number {
  return framedObjectSize(plaintextSize, MIN_FRAME_SIZE);
}

/** What a reader checks the frames against. */
export interface FramedOpenerOptions {
  dataKey: Buffer;
  frameSize: number;
  identity: ArtifactIdentity;
  /** The declared plaintext size: exactly this many bytes come out, never one more. */
  sizeBytes: number;
  /** The declared SHA-256 (hex), verified at the end before the last bytes are released. */
  sha256: string;
}

/**
 * The reader's core, without a stream around it (FramedOpener, and the read worker): whole frames
 * in, verified plaintext batches out, a batch being the plaintexts of the frames one `update`
 * decrypted (not concatenated: the caller copies them where it needs them). The newest batch is
 * held back until another one is authenticated, and the last one until `finish` has verified the
 * length and the digest, so a tampered, truncated, extended or mismatching object never comes out
 * whole. Anything invalid throws FramedArtifactError, and the verifier then refuses to go on.
 */
export class FramedVerifier {
  private readonly identity: Buffer;
  private readonly frames: number;
  private readonly hash: Hash = createHash("sha256");
  private pending: Buffer = Buffer.alloc(0);
  private held: Buffer[] | null = null;
  private index = 0;
  /** Failed or finished: nothing more is accepted. */
  private ended = false;

  constructor(private readonly options: FramedOpenerOptions) {
    checkFrameSize(options.frameSize);
    if (!Number.isSafeInteger(options.sizeBytes) || options.sizeBytes < 0)
      throw new FramedArtifactError("invalid declared size");
    this.identity = identityBytes(options.identity);
    this.frames = frameCount(options.sizeBytes, options.frameSize);
  }

  private plaintextLength(index: number): number {
    return index === this.frames - 1
      ? this.options.sizeBytes - (this.frames - 1) * this.options.frameSize
      : this.options.frameSize;
  }

  private fail(message: string): never {
    this.ended = true;
    this.held = null;
    this.pending = Buffer.alloc(0);
    throw new FramedArtifactError(message);
  }

  /**
   * Takes the next bytes of the object (after its header); returns the batch this releases, if
   * any. `chunk` is not kept: the caller may reuse it once this returns.
   */
  update(chunk: Buffer): Buffer[] | null {
    if (this.ended) throw new FramedArtifactError("the object was already failed or finished");
    if (this.index >= this.frames) return this.fail("bytes after the final frame");
    const data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: Buffer[] = [];
    let offset = 0;
    while (this.index < this.frames) {
      const length = this.plaintextLength(this.index);
      if (data.length - offset < length + TAG_BYTES) break;
      const final = this.index === this.frames - 1;
      try {
        const decipher = createDecipheriv("aes-256-gcm", this.options.dataKey, nonceOf(this.index));
        decipher.setAAD(frameAad(this.identity, this.index, final));
        decipher.setAuthTag(data.subarray(offset + length, offset + length + TAG_BYTES));
        const plaintext = decipher.update(data.subarray(offset, offset + length));
        decipher.final();
        out.push(plaintext);
        this.hash.update(plaintext);
      } catch {
        return this.fail(`frame ${this.index} failed authentication`);
      }
      offset += length + TAG_BYTES;
      this.index += 1;
    }
    if (this.index >= this.frames && offset < data.length) return this.fail("bytes after the final frame");
    this.pending = Buffer.from(data.subarray(offset));
    // The newest batch waits, so the final frame is never released before the length and digest
    // are checked.
    if (out.length === 0) return null;
    const released = this.held;
    this.held = out;
    return released;
  }

  /** At the end of the object: verifies the length and the digest; returns the last batch. */
  finish(): Buffer[] | null {
    if (this.ended) throw new FramedArtifactError("the object was already failed or finished");
    if (this.index < this.frames || this.pending.length > 0) return this.fail("the object ends before its final frame");
    if (this.hash.digest("hex") !== this.options.sha256)
      return this.fail("the plaintext does not match the declared SHA-256");
    const released = this.held;
    this.held = null;
    this.ended = true;
    return released;
  }
}

function batchOf(plaintexts: Buffer[]): Buffer {
  return plaintexts.length === 1 ? plaintexts[0] : Buffer.concat(plaintexts);
}

/**
 * The streaming reader: frames in (everything after the header), plaintext out, with
 * backpressure; a FramedVerifier inside. Each input chunk is decrypted as a batch of whole frames
 * and pushed as one buffer (fewer, larger writes to the socket); the newest batch is held back
 * until another one is authenticated, and the last one until the length and the digest are
 * verified, so a tampered, truncated, extended or mismatching object never comes out whole: the
 * stream fails.
 */
export class FramedOpener extends Transform {
  private readonly verifier: FramedVerifier;

  constructor(options: FramedOpenerOptions) {
    // Room for a few batches on each side, so reading, decrypting and sending overlap.
    super({ highWaterMark: 4 * 1024 * 1024 });
    this.verifier = new FramedVerifier(options);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let released: Buffer[] | null;
    try {
      released = this.verifier.update(chunk);
    } catch (error) {
      return callback(error as Error);
    }
    if (released) this.push(batchOf(released));
    callback();
  }

  override _flush(callback: TransformCallback): void {
    let released: Buffer[] | null;
    try {
      released = this.verifier.finish();
    } catch (error) {
      return callback(error as Error);
    }
    if (released) this.push(batchOf(released));
    callback();
  }
}

/** Seals a whole buffer through the streaming writer (tests: the stream's output, to compare with sealWhole's). */
export async function sealFramed(plaintext: Uint8Array, options: FramedSealerOptions): Promise<Buffer> {
  return collect(new FramedSealer(options), [
    Buffer.from(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength),
  ]);
}

/** Opens a whole framed object through the streaming reader (tests; the store opens small objects with openWhole). */
export async function openFramed(
  object: Buffer,
  wrappingKey: Buffer,
  identity: ArtifactIdentity,
  expected: { sizeBytes: number; sha256: string },
): Promise<Buffer> {
  const { frameSize, dataKey } = openHeader(object.subarray(0, HEADER_SIZE), wrappingKey, identity);
  if (object.length !== framedObjectSize(expected.sizeBytes, frameSize))
    throw new FramedArtifactError("the object size does not match the declared size");
  return collect(new FramedOpener({ dataKey, frameSize, identity, ...expected }), [object.subarray(HEADER_SIZE)]);
}

function collect(transform: Transform, input: Buffer[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    transform.on("data", (chunk: Buffer) => chunks.push(chunk));
    transform.once("error", reject);
    transform.once("end", () => resolve(Buffer.concat(chunks)));
    for (const chunk of input) transform.write(chunk);
    transform.end();
  });
}
