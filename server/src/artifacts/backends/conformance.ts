// The conformance suite every ObjectBackend passes (object-backend.ts): run by backends.test.ts
// for the local and PostgreSQL backends and by the S3 backend's tests. Not imported by
// production code.
import { createHash } from "node:crypto";
import v8 from "node:v8";
import vm from "node:vm";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ObjectNotFoundError, type ObjectBackend } from "../object-backend.ts";

const KiB = 1024;
const MiB = 1024 * KiB;
/**
 * Chunk sizes the backends use (PostgreSQL rows of 256 KiB, local reads of 16 framed 64 KiB frames,
 * one framed frame, S3 multipart parts of 5 MiB), so the ranges cross each backend's boundaries.
 */
const BOUNDARIES = [256 * KiB, 16 * (64 * KiB + 16), 64 * KiB + 16, 5 * MiB];
/** A large object: streamed in and out while the process's buffers are sampled. */
const LARGE_BYTES = 96 * MiB;
/** The most the sampled buffers may grow while the large object streams (half of it). */
const LARGE_GROWTH_LIMIT = LARGE_BYTES / 2;
/** Every this many chunks the large-object test collects garbage before it samples, so that it measures what is held, not what awaits collection. */
const SAMPLE_EVERY = 16;

/** The collector, without --expose-gc on the command line (the flag set at run time, the function from a fresh context). */
function collector(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

/** Deterministic bytes: position i holds a value derived from i and `seed` (so misplaced bytes show). */
export function patterned(length: number, seed = 0, from = 0): Buffer {
  const bytes = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) {
    const n = from + i;
    bytes[i] = (n * 31 + (n >>> 8) * 7 + (n >>> 16) * 13 + seed) & 0xff;
  }
  return bytes;
}

async function* chunked(bytes: Buffer, size = 64 * KiB): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function rejectsNotFound(promise: Promise<unknown>, what: string): Promise<void> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, ObjectNotFoundError, `${what}: ${String(error)}`);
    return;
  }
  assert.unreachable(`${what}: expected ObjectNotFoundError`);
}

class Aborted extends Error {}

/** A source that yields `bytes` and then fails, as an upload cut off mid-stream does. */
async function* abortedAfter(bytes: Buffer): AsyncGenerator<Uint8Array> {
  yield* chunked(bytes);
  throw new Aborted("the client went away");
}

function bufferBytes(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

interface Context {
  backend: ObjectBackend;
}

/**
 * Registers and runs the conformance suites for one backend. `make` gives a fresh backend per
 * test (over the same storage or a new one); each test uses keys of its own and closes it.
 */
export function runObjectBackendConformance(name: string, make: () => Promise<ObjectBackend>): void {
  const test = suite<Context>(`object backend conformance: ${name}`);
  let counter = 0;
  const key = (label: string) =>
    `conformance/${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}/${process.pid}-${Date.now()}-${counter++}/${label}.bin`;

  test.before.each(async (context) => {
    context.backend = await make();
  });
  test.after.each(async (context) => {
    await context.backend.close();
  });

  test("an absent key: size null, read ObjectNotFoundError, delete a no-op", async ({ backend }) => {
    const absent = key("absent");
    assert.is(await backend.size(absent), null);
    await rejectsNotFound(collect(backend.read(absent)), "whole read");
    await rejectsNotFound(collect(backend.read(absent, { start: 0, end: 1 })), "range read");
    await backend.delete(absent);
    assert.is(await backend.size(absent), null);
  });

  test("an empty object exists and reads as zero bytes (not as absent)", async ({ backend }) => {
    const empty = key("empty");
    assert.is(await backend.write(empty, chunked(Buffer.alloc(0))), 0);
    assert.is(await backend.size(empty), 0);
    assert.is((await collect(backend.read(empty))).length, 0);
    assert.is((await collect(backend.read(empty, { start: 0, end: 10 }))).length, 0);
    await backend.delete(empty);
    assert.is(await backend.size(empty), null);
  });

  test("a written object reads back byte for byte, whatever the source's chunking", async ({ backend }) => {
    const bytes = patterned(700 * KiB + 3, 1);
    for (const [i, size] of [1, 4096, 100_000, 300 * KiB, bytes.length].entries()) {
      const k = key(`whole-${i}`);
      assert.is(await backend.write(k, chunked(bytes, size)), bytes.length);
      assert.is(await backend.size(k), bytes.length);
      assert.ok((await collect(backend.read(k))).equals(bytes), `chunks of ${size}`);
    }
  });

  test("ranges are byte-exact at every boundary (0, chunk-1, chunk, chunk+1, size-1, size, beyond)", async ({
    backend,
  }) => {
    const size = 16 * (64 * KiB + 16) + 256 * KiB + 7;
    const bytes = patterned(size, 2);
    const k = key("ranges");
    await backend.write(k, chunked(bytes, 48 * KiB));
    const points = new Set([0, 1, size - 1, size, size + 1, size + 5 * MiB]);
    for (const boundary of BOUNDARIES)
      for (const p of [boundary - 1, boundary, boundary + 1, 2 * boundary]) if (p >= 0 && p <= size + 1) points.add(p);
    const sorted = [...points].sort((a, b) => a - b);
    for (const start of sorted) {
      for (const end of sorted) {
        if (end < start) continue;
        const got = await collect(backend.read(k, { start, end }));
        assert.ok(got.equals(bytes.subarray(start, end)), `[${start}, ${end}) gave ${got.length} bytes`);
      }
      const open = await collect(backend.read(k, { start }));
      assert.ok(open.equals(bytes.subarray(start)), `[${start}, end) gave ${open.length} bytes`);
    }
    assert.ok((await collect(backend.read(k, { end: 1 }))).equals(bytes.subarray(0, 1)), "[0, 1) with start omitted");
  });

  test("a replace is whole: the new object, its size, and never a mix", async ({ backend }) => {
    const k = key("replace");
    const first = patterned(600 * KiB, 3);
    const second = patterned(300 * KiB + 11, 4);
    await backend.write(k, chunked(first));
    await backend.write(k, chunked(second));
    assert.is(await backend.size(k), second.length);
    assert.ok((await collect(backend.read(k))).equals(second));
    await backend.write(k, chunked(Buffer.alloc(0)));
    assert.is(await backend.size(k), 0);
    assert.is((await collect(backend.read(k))).length, 0);
  });

  test("delete removes the object; a write after it creates it again", async ({ backend }) => {
    const k = key("delete");
    await backend.write(k, chunked(patterned(10_000, 5)));
    await backend.delete(k);
    assert.is(await backend.size(k), null);
    await rejectsNotFound(collect(backend.read(k)), "read after delete");
    await backend.delete(k);
    await backend.write(k, chunked(patterned(20, 6)));
    assert.ok((await collect(backend.read(k))).equals(patterned(20, 6)));
  });

  test("an aborted source leaves no object, and leaves a previous object as it was", async ({ backend }) => {
    const fresh = key("aborted-fresh");
    try {
      await backend.write(fresh, abortedAfter(patterned(700 * KiB, 7)));
      assert.unreachable("the write should reject");
    } catch (error) {
      assert.instance(error, Aborted, String(error));
    }
    assert.is(await backend.size(fresh), null);
    await rejectsNotFound(collect(backend.read(fresh)), "read after an aborted write");

    const existing = key("aborted-existing");
    const kept = patterned(400 * KiB, 8);
    await backend.write(existing, chunked(kept));
    await backend.write(existing, abortedAfter(patterned(900 * KiB, 9))).then(
      () => assert.unreachable("the write should reject"),
      (error) => assert.instance(error, Aborted, String(error)),
    );
    assert.is(await backend.size(existing), kept.length);
    assert.ok((await collect(backend.read(existing))).equals(kept));
  });

  test("an object is invisible until its write completes", async ({ backend }) => {
    const k = key("in-flight");
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let yielded!: () => void;
    const started = new Promise<void>((resolve) => (yielded = resolve));
    const bytes = patterned(600 * KiB, 10);
    const source = async function* () {
      yield bytes.subarray(0, 300 * KiB);
      yielded();
      await gate;
      yield bytes.subarray(300 * KiB);
    };
    const writing = backend.write(k, source());
    await started;
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.is(await backend.size(k), null);
    await rejectsNotFound(collect(backend.read(k)), "read while the write is under way");
    release();
    assert.is(await writing, bytes.length);
    assert.ok((await collect(backend.read(k))).equals(bytes));
  });

  test("an invalid key is refused", async ({ backend }) => {
    for (const bad of ["../escape", "/absolute", "Upper/case", "a/../b", ""]) {
      await backend.write(bad, chunked(Buffer.from("x"))).then(
        () => assert.unreachable(`'${bad}' was accepted`),
        (error) => assert.match(String(error), /invalid artifact key/),
      );
    }
  });

  test(`a ${LARGE_BYTES / MiB} MiB object streams in and out with bounded memory`, async ({ backend }) => {
    const k = key("large");
    const piece = 256 * KiB;
    const expected = createHash("sha256");
    const gc = collector();
    gc();
    const baseline = bufferBytes();
    let peak = 0;
    let calls = 0;
    const sample = () => {
      if (++calls % SAMPLE_EVERY !== 0) return;
      gc();
      peak = Math.max(peak, bufferBytes() - baseline);
    };
    const source = async function* () {
      for (let offset = 0; offset < LARGE_BYTES; offset += piece) {
        const chunk = patterned(piece, 11, offset);
        expected.update(chunk);
        sample();
        yield chunk;
      }
    };
    assert.is(await backend.write(k, source()), LARGE_BYTES);
    const actual = createHash("sha256");
    let length = 0;
    for await (const chunk of backend.read(k)) {
      actual.update(chunk);
      length += chunk.byteLength;
      sample();
    }
    assert.is(length, LARGE_BYTES);
    assert.is(actual.digest("hex"), expected.digest("hex"));
    assert.ok(
      peak < LARGE_GROWTH_LIMIT,
      `buffers grew by ${(peak / MiB).toFixed(1)} MiB while streaming ${LARGE_BYTES / MiB} MiB`,
    );
    await backend.delete(k);
  });

  test.run();
}
