import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { DomainError } from "../domain/errors.ts";

// Configuration uploads are inflated and checked off the main thread (upload-inspection-worker.ts):
// a gzip bomb costs a worker some CPU, never the event loop. Each inspection runs on a worker of
// its own (started on first use, kept for the next one, unref'd while idle), at most
// `concurrency` at once; up to `maxWaiting` more wait their turn in arrival order, and beyond that
// an upload is refused at once with 503 CONFIGURATION_UPLOAD_BUSY (the client uploads again to the
// same URL later). The compressed bytes cross in a SharedArrayBuffer, so nothing is copied.

/** The limits one upload is held to while it is inflated. */
export interface InspectionLimits {
  /** The most any upload may unpack to. */
  maxUnpackedBytes: number;
  /** The most an upload may unpack to per compressed byte … */
  maxRatio: number;
  /** … once it unpacks to more than this (a small archive is mostly tar padding and compresses far better). */
  ratioFloorBytes: number;
  /** The most entries an archive may have. */
  maxEntries: number;
}

export const DEFAULT_INSPECTION_LIMITS: InspectionLimits = {
  maxUnpackedBytes: 512 * 1024 * 1024,
  maxRatio: 100,
  ratioFloorBytes: 1024 * 1024,
  maxEntries: 100_000,
};

/** Main thread → worker. */
export interface InspectionRequest {
  id: number;
  bytes: SharedArrayBuffer;
  byteOffset: number;
  byteLength: number;
  limits: InspectionLimits;
}

/** Worker → main thread. */
export type InspectionReply = { id: number } & InspectionResult;

/** The outcome of an inspection: accepted with what it held, or refused with the reason (a sentence fragment). */
export type InspectionResult =
  { ok: true; unpackedBytes: number; entries: number } | { ok: false; refusal: string; unpackedBytes: number };

export interface UploadInspectorOptions {
  /** Inspections under way at once (each on its own worker thread). */
  concurrency: number;
  /** Uploads that may wait for a free inspection; one more is refused as busy. */
  maxWaiting: number;
  limits?: Partial<InspectionLimits>;
}

const ENTRY = fileURLToPath(new URL("./upload-inspection-worker.ts", import.meta.url));
const LOADER = createRequire(import.meta.url).resolve("tsx/cjs/api");
// The main thread's tsx hooks do not reach a worker (Node 20): the worker registers tsx's
// in-thread require hook, requires its module and serves.
const BOOTSTRAP = `
const { parentPort, workerData } = require("node:worker_threads");
require(workerData.loader).register();
require(workerData.entry).serveUploadInspections(parentPort);
`;
/** A worker's heap: the inspector keeps names and links, never contents. */
const WORKER_HEAP_MB = 128;

/** The bytes of an upload in shared memory (copied once if they are not there yet). */
export function sharedBytes(bytes: Uint8Array): Uint8Array {
  if (bytes.buffer instanceof SharedArrayBuffer) return bytes;
  const shared = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
  shared.set(bytes);
  return shared;
}

export class UploadInspector {
  readonly limits: InspectionLimits;
  private readonly idle: Worker[] = [];
  private readonly all = new Set<Worker>();
  private readonly waiting: Array<() => void> = [];
  private running = 0;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: UploadInspectorOptions) {
    this.limits = { ...DEFAULT_INSPECTION_LIMITS, ...options.limits };
  }

  /** Inspections under way. */
  get inFlight(): number {
    return this.running;
  }

  /** Uploads waiting for a free inspection. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Inflates and checks `bytes` on a worker. Resolves to the outcome; rejects with
   * CONFIGURATION_UPLOAD_BUSY when every inspection is taken and the queue is full, and with an
   * internal error if the worker is lost.
   */
  async inspect(bytes: Uint8Array): Promise<InspectionResult> {
    const shared = sharedBytes(bytes);
    await this.acquire();
    try {
      return await this.run(shared);
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the upload inspector is closed"));
    if (this.running < this.options.concurrency) {
      this.running += 1;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.options.maxWaiting) {
      return Promise.reject(
        new DomainError(
          "CONFIGURATION_UPLOAD_BUSY",
          `${this.options.concurrency + this.options.maxWaiting} configuration uploads are being checked or waiting already. Upload again to the same URL in a few seconds.`,
        ),
      );
    }
    // The slot is handed over by release(): `running` stays counted.
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }

  private run(bytes: Uint8Array): Promise<InspectionResult> {
    if (this.closed) return Promise.reject(new Error("the upload inspector is closed"));
    const worker = this.idle.pop() ?? this.start();
    worker.ref();
    const id = this.nextId++;
    return new Promise<InspectionResult>((resolve, reject) => {
      const done = () => {
        worker.off("message", onMessage);
        worker.off("error", onLost);
        worker.off("exit", onExit);
      };
      const onMessage = (reply: InspectionReply) => {
        if (reply.id !== id) return;
        done();
        worker.unref();
        if (this.closed) void worker.terminate();
        else this.idle.push(worker);
        const { id: _, ...result } = reply;
        resolve(result);
      };
      const onLost = (error: Error) => {
        done();
        this.all.delete(worker);
        void worker.terminate();
        reject(new Error(`the upload inspection worker failed: ${error.message}`));
      };
      const onExit = (code: number) => onLost(new Error(`it exited (${code})`));
      worker.on("message", onMessage);
      worker.on("error", onLost);
      worker.on("exit", onExit);
      worker.postMessage({
        id,
        bytes: bytes.buffer as SharedArrayBuffer,
        byteOffset: bytes.byteOffset,
        byteLength: bytes.byteLength,
        limits: this.limits,
      } satisfies InspectionRequest);
    });
  }

  private start(): Worker {
    const worker = new Worker(BOOTSTRAP, {
      eval: true,
      workerData: { entry: ENTRY, loader: LOADER },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    worker.unref();
    this.all.add(worker);
    worker.once("exit", () => {
      this.all.delete(worker);
      const index = this.idle.indexOf(worker);
      if (index >= 0) this.idle.splice(index, 1);
    });
    return worker;
  }

  /** Stops every worker; inspections under way fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const resolve of this.waiting.splice(0)) resolve();
    await Promise.all([...this.all].map((worker) => worker.terminate()));
  }
}
