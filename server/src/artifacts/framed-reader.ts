import type { FileHandle } from "node:fs/promises";
import { createRequire } from "node:module";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { lendChunks } from "./lent-chunks.ts";
import { FramedArtifactError, type FramedOpenerOptions } from "./framed.ts";

// Reading, verifying, decrypting and hashing a framed object off the main thread
// (framed-read-worker.ts). One worker serves every stream: started on first use, reused, unref'd
// while idle, terminated by close(). The main thread opens the object and checks its header and
// size (artifact-store.ts), hands the worker the open descriptor, and only passes on what comes
// back.
//
// The plaintext crosses in shared slots, WINDOW of them per stream: the worker fills a free slot
// and says so; the main thread acknowledges it once the slot is free again, which lets the worker
// fill it anew, so a slow client stops the reads. By default the main thread copies each slot
// into a buffer of its own (memory allocated, accounted and collected on the main thread; nothing
// is transferred) and acknowledges once its consumer takes that buffer (push() under the stream's
// high-water mark, or the next _read()). A stream opened to lend its chunks (lent-chunks.ts: the
// HTTP writer gives each chunk back once the socket has written it) pushes views of the slots
// themselves, copies nothing, and acknowledges a slot when its chunk comes back.

/** Slots per stream: batches the worker may have sent and not had acknowledged. */
export const WINDOW = 3;

/** Sets of slots kept for reuse by later streams. */
const SPARE_SLOT_SETS = 4;

/** Main thread → worker. */
export type ReaderRequest =
  | {
      type: "open";
      id: number;
      /** A descriptor of the main thread's FileHandle: it stays open until the worker says `done`. */
      fd: number;
      /** Where the first frame starts. */
      start: number;
      /** How many bytes one read covers. */
      readBytes: number;
      /** The stream's slots (WINDOW of them, each the plaintext of one read). */
      slots: SharedArrayBuffer[];
      options: FramedOpenerOptions;
    }
  /** The consumer took the oldest batch sent: its slot is free. */
  | { type: "ack"; id: number }
  /** The consumer went away: stop, and say `done` once no read of the descriptor is under way. */
  | { type: "cancel"; id: number };

/** Worker → main thread. */
export type ReaderReply =
  /** The next `length` bytes of verified plaintext are in slot `slot`. */
  | { type: "batch"; id: number; slot: number; length: number }
  /**
   * The last message of a stream: the worker no longer uses the descriptor. Without `error`, every
   * batch was sent and the object was verified to the end (length and SHA-256).
   */
  | { type: "done"; id: number; error?: string };

/** The worker's module. The server runs from source (`node --import tsx`, imports name `.ts` files). */
const ENTRY = fileURLToPath(new URL("./framed-read-worker.ts", import.meta.url));
const LOADER = createRequire(import.meta.url).resolve("tsx/cjs/api");
// The main thread's tsx hooks do not reach a worker (Node 20): the worker registers tsx's
// in-thread require hook (no loader thread of its own), requires its module and serves.
const BOOTSTRAP = `
const { parentPort, workerData } = require("node:worker_threads");
require(workerData.loader).register();
require(workerData.entry).serveFramedReads(parentPort);
`;

/** The plaintext of one stream, as the worker sends it. */
class WorkerStream extends Readable {
  /** Batches pushed past the high-water mark: acknowledged on the next _read() (when copying). */
  private owed = 0;
  /**
   * When lending: the bytes of each lent slot not given back yet, oldest first. Counted in bytes,
   * in order (a socket completes its writes in order), so a chunk the stream machinery split or
   * joined on the way still gives back exactly the slots it covered.
   */
  private readonly lent: number[] = [];
  /** The worker sent `done`. */
  settled = false;
  /** Whether the slots may serve another stream once settled and every lent chunk is back. */
  reusable = true;
  /** Present when lending (lent-chunks.ts). */
  [lendChunks]?: () => (chunk: Buffer) => void;

  constructor(
    private readonly reader: FramedReadWorker,
    readonly id: number,
    readonly file: FileHandle,
    readonly slots: SharedArrayBuffer[],
    lend: boolean,
  ) {
    super({ highWaterMark: slots[0].byteLength });
    if (lend) this[lendChunks] = () => (chunk) => this.giveBack(chunk);
  }

  deliver(slot: number, length: number): void {
    if (this.destroyed) return;
    if (this[lendChunks]) {
      this.lent.push(length);
      this.push(Buffer.from(this.slots[slot], 0, length));
      return;
    }
    const chunk = Buffer.allocUnsafe(length);
    chunk.set(new Uint8Array(this.slots[slot], 0, length));
    if (this.push(chunk)) this.reader.send({ type: "ack", id: this.id });
    else this.owed += 1;
  }

  /** Every lent chunk is back: the slots may serve another stream. */
  get allBack(): boolean {
    return this.lent.length === 0;
  }

  /** A lent chunk is back: each slot wholly given back is acknowledged, in the order sent. */
  private giveBack(chunk: Buffer): void {
    let bytes = chunk.length;
    while (bytes > 0 && this.lent.length > 0) {
      const taken = Math.min(bytes, this.lent[0]);
      bytes -= taken;
      this.lent[0] -= taken;
      if (this.lent[0] === 0) {
        this.lent.shift();
        if (!this.settled) this.reader.send({ type: "ack", id: this.id });
      }
    }
    if (this.allBack && this.settled && this.reusable) this.reader.reuse(this);
  }

  override _read(): void {
    for (; this.owed > 0; this.owed -= 1) this.reader.send({ type: "ack", id: this.id });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.settled) this.reader.send({ type: "cancel", id: this.id });
    callback(error);
  }
}

/** The read worker of one artifact store. */
export class FramedReadWorker {
  private worker: Worker | null = null;
  private readonly streams = new Map<number, WorkerStream>();
  private nextId = 1;
  private closed = false;
  /** Slots of finished streams, for the next ones (a few sets: shared memory is freed only once both threads collect it). */
  private readonly spare: SharedArrayBuffer[][] = [];

  /**
   * Streams the frames of `file` from `start` on, verified against `options`, through the worker.
   * The stream fails on anything FramedOpener would fail on; `file` is closed once the worker is
   * done with it (at the end, on failure, or after the stream is destroyed).
   */
  open(file: FileHandle, start: number, options: FramedOpenerOptions, readBytes: number, lend = false): Readable {
    if (this.closed) throw new Error("the artifact store is closed");
    const worker = this.start();
    const id = this.nextId++;
    // A slot holds the plaintext of one read of whole frames.
    const slotBytes = Math.floor(readBytes / (options.frameSize + 16)) * options.frameSize;
    const spare = this.spare.findIndex((set) => set[0].byteLength === slotBytes);
    const slots =
      spare >= 0
        ? this.spare.splice(spare, 1)[0]
        : Array.from({ length: WINDOW }, () => new SharedArrayBuffer(slotBytes));
    const stream = new WorkerStream(this, id, file, slots, lend);
    this.streams.set(id, stream);
    if (this.streams.size === 1) worker.ref();
    this.send({ type: "open", id, fd: file.fd, start, readBytes, slots, options });
    return stream;
  }

  /** Streams under way (tests). */
  get active(): number {
    return this.streams.size;
  }

  send(request: ReaderRequest): void {
    this.worker?.postMessage(request);
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(BOOTSTRAP, { eval: true, workerData: { entry: ENTRY, loader: LOADER } });
    worker.unref();
    worker.on("message", (reply: ReaderReply) => this.receive(reply));
    const lost = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.failAll(error);
    };
    worker.on("error", lost);
    worker.on("exit", (code) => lost(new Error(`the framed read worker exited (${code})`)));
    this.worker = worker;
    return worker;
  }

  private receive(reply: ReaderReply): void {
    const stream = this.streams.get(reply.id);
    if (!stream) return;
    if (reply.type === "batch") return stream.deliver(reply.slot, reply.length);
    this.settle(stream);
    if (stream.destroyed) return;
    if (reply.error === undefined) stream.push(null);
    else stream.destroy(new FramedArtifactError(reply.error));
  }

  private settle(stream: WorkerStream, reuse = true): void {
    stream.settled = true;
    stream.reusable = reuse;
    this.streams.delete(stream.id);
    // The worker no longer writes them; they serve another stream once no chunk lent from them
    // is out (one never given back keeps them from reuse: they are left to the collector).
    if (reuse && stream.allBack) this.reuse(stream);
    if (this.streams.size === 0) this.worker?.unref();
    void stream.file.close().catch(() => undefined);
  }

  /** Keeps a finished stream's slots for a later stream. */
  reuse(stream: WorkerStream): void {
    if (this.spare.length < SPARE_SLOT_SETS && !this.spare.includes(stream.slots)) this.spare.push(stream.slots);
  }

  private failAll(error: Error): void {
    for (const stream of [...this.streams.values()]) {
      // A lost worker may not have finished writing them.
      this.settle(stream, false);
      stream.destroy(error);
    }
  }

  /** Ends every stream under way and stops the worker. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
    this.failAll(new Error("the artifact store was closed"));
  }
}
