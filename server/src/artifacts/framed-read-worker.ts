// The framed read worker (started by framed-reader.ts, whose bootstrap calls serveFramedReads):
// reads framed objects in batches from descriptors the main thread opened and checked, verifies
// and decrypts the frames and hashes the plaintext (FramedVerifier), and hands the verified
// plaintext to the main thread through the stream's shared slots: one slot per batch sent and not
// yet acknowledged, never more batches than slots. The last bytes come only after the length and
// the digest are verified at the end; on any failure the stream's waiting plaintext is dropped
// and `done` carries the error. Reading pauses while a slot's worth of plaintext waits.
import { read } from "node:fs";
import type { MessagePort } from "node:worker_threads";
import { FramedVerifier } from "./framed.ts";
import type { ReaderReply, ReaderRequest } from "./framed-reader.ts";

type Open = Extract<ReaderRequest, { type: "open" }>;

interface Stream {
  id: number;
  slots: Uint8Array[];
  /** Batches sent, and acknowledged: batch n went out in slot n % slots, which is free again once it is acknowledged. */
  sent: number;
  acknowledged: number;
  /** Verified plaintext not sent yet, in order; the first one from `offset` on. */
  queue: Buffer[];
  offset: number;
  queued: number;
  canceled: boolean;
  /** Set once the reads are over (and no read of the descriptor is under way). */
  outcome: { error?: string } | null;
  /** Resumes the reads once the queue has room (or the stream is canceled). */
  wake: (() => void) | null;
}

/** Read buffers kept for later streams. */
const SPARE_READ_BUFFERS = 4;

let port: MessagePort;
const streams = new Map<number, Stream>();
const spareReadBuffers: Buffer[] = [];

function post(reply: ReaderReply): void {
  port.postMessage(reply);
}

function resume(stream: Stream): void {
  const wake = stream.wake;
  stream.wake = null;
  wake?.();
}

/** A slot's worth of verified plaintext waits to be sent: no more reads until some has gone out. */
function full(stream: Stream): boolean {
  return stream.queued >= stream.slots[0].length;
}

/** Fills free slots from the queue and sends them; once the reads are over and nothing waits, says `done`. */
function flush(stream: Stream): void {
  while (stream.sent - stream.acknowledged < stream.slots.length && stream.queued > 0) {
    const index = stream.sent % stream.slots.length;
    const slot = stream.slots[index];
    let length = 0;
    while (length < slot.length && stream.queue.length > 0) {
      const head = stream.queue[0];
      const copied = head.copy(slot, length, stream.offset);
      length += copied;
      stream.offset += copied;
      if (stream.offset === head.length) {
        stream.queue.shift();
        stream.offset = 0;
      }
    }
    stream.queued -= length;
    stream.sent += 1;
    post({ type: "batch", id: stream.id, slot: index, length });
  }
  if (!full(stream)) resume(stream);
  if (stream.outcome && stream.queued === 0 && streams.delete(stream.id))
    post({ type: "done", id: stream.id, ...stream.outcome });
}

function enqueue(stream: Stream, plaintexts: Buffer[]): void {
  for (const plaintext of plaintexts) {
    if (plaintext.length === 0) continue;
    stream.queue.push(plaintext);
    stream.queued += plaintext.length;
  }
  flush(stream);
}

function readAt(fd: number, buffer: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    read(fd, buffer, 0, buffer.length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))),
  );
}

async function pump(stream: Stream, request: Open): Promise<void> {
  let buffer: Buffer | null = null;
  try {
    const { options } = request;
    const verifier = new FramedVerifier({ ...options, dataKey: Buffer.from(options.dataKey) });
    // One read buffer per stream, reused (and by later streams): the verifier keeps no reference
    // to what it is given.
    const spare = spareReadBuffers.findIndex((buffer) => buffer.length === request.readBytes);
    buffer = spare >= 0 ? spareReadBuffers.splice(spare, 1)[0] : Buffer.allocUnsafeSlow(request.readBytes);
    let position = request.start;
    for (;;) {
      while (full(stream) && !stream.canceled) await new Promise<void>((resolve) => (stream.wake = resolve));
      if (stream.canceled) break;
      const bytesRead = await readAt(request.fd, buffer, position);
      if (stream.canceled) break;
      if (bytesRead === 0) {
        const last = verifier.finish();
        stream.outcome = {};
        if (last) enqueue(stream, last);
        break;
      }
      position += bytesRead;
      const batch = verifier.update(buffer.subarray(0, bytesRead));
      if (batch) enqueue(stream, batch);
    }
  } catch (error) {
    stream.outcome = { error: (error as Error).message };
  }
  // No read is under way any more.
  if (buffer && spareReadBuffers.length < SPARE_READ_BUFFERS) spareReadBuffers.push(buffer);
  if (stream.canceled || !stream.outcome) stream.outcome = { error: "canceled" };
  if (stream.outcome.error !== undefined) {
    stream.queue = [];
    stream.queued = 0;
  }
  flush(stream);
}

function receive(request: ReaderRequest): void {
  if (request.type === "open") {
    const slots = request.slots.map((slot) => new Uint8Array(slot));
    const stream: Stream = {
      id: request.id,
      slots,
      sent: 0,
      acknowledged: 0,
      queue: [],
      offset: 0,
      queued: 0,
      canceled: false,
      outcome: null,
      wake: null,
    };
    streams.set(stream.id, stream);
    void pump(stream, request);
    return;
  }
  const stream = streams.get(request.id);
  if (!stream) return;
  if (request.type === "ack") {
    stream.acknowledged += 1;
    flush(stream);
  } else {
    stream.canceled = true;
    stream.queue = [];
    stream.queued = 0;
    // Still reading: the reads stop (after the one under way). Done reading: only sends were left.
    if (stream.outcome) {
      stream.outcome = { error: "canceled" };
      flush(stream);
    } else resume(stream);
  }
}

/** Serves the main thread's requests (the worker's bootstrap calls this with its parentPort). */
export function serveFramedReads(parent: MessagePort): void {
  port = parent;
  port.on("message", receive);
}
