// The read worker (framed-reader.ts, framed-read-worker.ts): objects over MAIN_THREAD_MAX_BYTES
// are read, verified, decrypted and hashed off the main thread; the checks are FramedOpener's.
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { appendFile, open, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { flipByte } from "../../test/support/files.ts";
import { openDescriptors } from "../../test/support/processes.ts";
import { ARTIFACT_FORMAT } from "../domain/artifacts.ts";
import { FramedArtifactStore, MAIN_THREAD_MAX_BYTES } from "./artifact-store.ts";
import { LocalObjectBackend } from "./backends/local.ts";
import { FramedArtifactError, HEADER_SIZE, openHeader, sealFramed, type ArtifactIdentity } from "./framed.ts";
import { lenderOf } from "./lent-chunks.ts";
import { FramedReadWorker, WINDOW } from "./framed-reader.ts";
import { until } from "../../test/support/poll.ts";

const WRAP = Buffer.alloc(32, 2);
const KIND = { kind: "plan_json" as const, workspaceId: "ws-0123456789abcdef" };
const FRAME = 64 * 1024 + 16;
const MiB = 1024 * 1024;

const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

interface Context {
  dir: string;
  store: ReturnType<typeof storeIn>;
}

/** The store over a local directory, addressed by key, identity and expected size and digest. */
function storeIn(directory: string) {
  const store = new FramedArtifactStore(new LocalObjectBackend(directory), WRAP);
  return Object.assign(store, {
    putFramed: (key: string, identity: typeof KIND, plaintext: Uint8Array) =>
      store.write({ ...identity, key }, plaintext),
    openFramed: (
      key: string,
      identity: typeof KIND,
      expected: { sizeBytes: number; sha256: string },
      options?: { lend?: boolean },
    ) => store.open({ kind: identity.kind, key, ...expected, format: ARTIFACT_FORMAT }, identity.workspaceId, options),
  });
}

const test = suite<Context>("framed read worker");

test.before.each((context) => {
  context.dir = mkdtempSync(join(tmpdir(), "ss-framed-reader-"));
  context.store = storeIn(context.dir);
});

test.after.each(async (context) => {
  await context.store.close();
  rmSync(context.dir, { recursive: true, force: true });
});

/** Everything a stream gives, and how it ended. */
async function drain(stream: Readable): Promise<{ bytes: Buffer; error: Error | null }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { bytes: Buffer.concat(chunks), error: null };
  } catch (error) {
    return { bytes: Buffer.concat(chunks), error: error as Error };
  }
}

async function stored(context: Context, key: string, size: number) {
  const plaintext = randomBytes(size);
  const descriptor = await context.store.putFramed(key, KIND, plaintext);
  return {
    plaintext,
    descriptor,
    file: join(context.dir, key),
    expected: { sizeBytes: descriptor.sizeBytes, sha256: descriptor.sha256 },
  };
}

test("concurrent streams through the worker are each byte-exact; sizes around batch and frame boundaries", async (context) => {
  const sizes = [MAIN_THREAD_MAX_BYTES + 1, 2 * MiB, 16 * (FRAME - 16) * 3 - 1, 5 * MiB + 12345, 7 * MiB];
  const objects = await Promise.all(sizes.map((size, i) => stored(context, `runs/r${i}/plan.json`, size)));
  const results = await Promise.all(
    objects.map(async (o) => drain(await context.store.openFramed(o.descriptor.key, KIND, o.expected))),
  );
  results.forEach((result, i) => {
    assert.is(result.error, null, `size ${sizes[i]}`);
    assert.ok(result.bytes.equals(objects[i].plaintext), `size ${sizes[i]} differs`);
  });
  assert.is(context.store.reader.active, 0);
  for (const o of objects) await until(() => openDescriptors(o.file) === 0, "an object stayed open");
});

test("any frame size and read size: a batch larger than a slot is split across slots, in order", async (context) => {
  const reader = new FramedReadWorker();
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40 * 1024 }),
        fc.integer({ min: 1024, max: 4096 }),
        fc.integer({ min: 1, max: 20_000 }),
        async (size, frameSize, readBytes) => {
          const identity: ArtifactIdentity = { ...KIND, key: "k" };
          const plaintext = randomBytes(size);
          const object = await sealFramed(plaintext, { wrappingKey: WRAP, identity, frameSize });
          const path = join(context.dir, "object");
          await writeFile(path, object);
          const { dataKey } = openHeader(object.subarray(0, HEADER_SIZE), WRAP, identity);
          const file = await open(path, "r");
          // At least one whole frame per read (as the store asks).
          const read = Math.max(readBytes, frameSize + 16);
          const { bytes, error } = await drain(
            reader.open(
              file,
              HEADER_SIZE,
              { dataKey, frameSize, identity, sizeBytes: size, sha256: sha(plaintext) },
              read,
            ),
          );
          assert.is(error, null);
          assert.ok(bytes.equals(plaintext), `size ${size}, frame ${frameSize}, read ${read}`);
        },
      ),
      { numRuns: 25 },
    );
  } finally {
    await reader.close();
  }
});

test("a tampered frame mid-stream fails the stream: nothing of it or after it comes out, the object is closed, the next stream works", async (context) => {
  const o = await stored(context, "runs/t/plan.json", 6 * MiB);
  // Frame 50 is in the fourth batch of 16 frames.
  await flipByte(o.file, HEADER_SIZE + 50 * FRAME + 7);
  const { bytes, error } = await drain(await context.store.openFramed(o.descriptor.key, KIND, o.expected));
  assert.instance(error, FramedArtifactError);
  assert.match(error!.message, /frame 50 failed authentication/);
  assert.ok(bytes.length <= 50 * (FRAME - 16), `${bytes.length} bytes came out`);
  assert.ok(bytes.equals(o.plaintext.subarray(0, bytes.length)));
  assert.is(context.store.reader.active, 0);
  await until(() => openDescriptors(o.file) === 0, "the tampered object stayed open");

  const good = await stored(context, "runs/g/plan.json", 3 * MiB);
  const again = await drain(await context.store.openFramed(good.descriptor.key, KIND, good.expected));
  assert.is(again.error, null);
  assert.ok(again.bytes.equals(good.plaintext));
});

test("a digest mismatch never releases the last batch; truncation and extension after the checks fail the stream", async (context) => {
  const o = await stored(context, "runs/d/plan.json", 4 * MiB + 5);
  const digest = await drain(
    await context.store.openFramed(o.descriptor.key, KIND, {
      sizeBytes: o.expected.sizeBytes,
      sha256: sha(Buffer.from("other")),
    }),
  );
  assert.instance(digest.error, FramedArtifactError);
  assert.match(digest.error!.message, /SHA-256/);
  // The last read holds only the final frame (5 bytes): it never came out.
  assert.ok(digest.bytes.length <= 4 * MiB, `${digest.bytes.length} bytes came out`);
  assert.ok(digest.bytes.equals(o.plaintext.subarray(0, digest.bytes.length)));

  // Large enough that the worker, held back by its unacknowledged slots, cannot have read to the
  // end before the object changes (a small one may be read whole at once and succeed).
  const q = await stored(context, "runs/t/plan.json", 16 * MiB);
  const shrunk = await context.store.openFramed(q.descriptor.key, KIND, q.expected);
  await truncate(q.file, HEADER_SIZE + 20 * FRAME);
  const truncated = await drain(shrunk);
  assert.instance(truncated.error, FramedArtifactError);
  assert.ok(truncated.bytes.length < q.plaintext.length);

  const p = await stored(context, "runs/e/plan.json", 16 * MiB);
  const grown = await context.store.openFramed(p.descriptor.key, KIND, p.expected);
  await appendFile(p.file, "}");
  const extended = await drain(grown);
  assert.instance(extended.error, FramedArtifactError);
  assert.match(extended.error!.message, /after the final frame/);
  assert.ok(extended.bytes.length < p.plaintext.length);
  assert.is(context.store.reader.active, 0);
});

test("a slow consumer bounds what is buffered; a consumer that goes away stops the worker's reads and closes the object", async (context) => {
  const o = await stored(context, "runs/s/plan.json", 24 * MiB);
  const stream = await context.store.openFramed(o.descriptor.key, KIND, o.expected);
  const first = await new Promise<Buffer>((resolve) =>
    stream.once("data", (chunk: Buffer) => (stream.pause(), resolve(chunk))),
  );
  assert.ok(first.equals(o.plaintext.subarray(0, first.length)));
  await new Promise((resolve) => setTimeout(resolve, 150));
  // Unacknowledged batches only: the worker waits for the consumer.
  assert.ok(stream.readableLength <= WINDOW * 16 * (FRAME - 16), `${stream.readableLength} bytes buffered`);
  assert.is(context.store.reader.active, 1);
  assert.is(openDescriptors(o.file), 1);
  stream.destroy();
  await until(
    () => context.store.reader.active === 0 && openDescriptors(o.file) === 0,
    "the stream stayed open after its consumer went away",
  );
  const again = await drain(await context.store.openFramed(o.descriptor.key, KIND, o.expected));
  assert.is(again.error, null);
  assert.ok(again.bytes.equals(o.plaintext));
});

test("lending: chunks are views that stay intact until given back; at most WINDOW slots are out; split or joined give-backs count", async (context) => {
  const o = await stored(context, "runs/l/plan.json", 9 * MiB + 77);
  // Without `lend` the chunks are the stream's to give: nothing to give back.
  assert.is(
    lenderOf(await context.store.openFramed(o.descriptor.key, KIND, o.expected).then((s) => (s.destroy(), s))),
    null,
  );
  const stream = await context.store.openFramed(o.descriptor.key, KIND, o.expected, { lend: true });
  const giveBack = lenderOf(stream)!;
  assert.type(giveBack, "function");
  const out: Buffer[] = [];
  const held: Buffer[] = [];
  let most = 0;
  stream.on("data", (chunk: Buffer) => {
    held.push(chunk);
    most = Math.max(most, held.length);
  });
  const ended = new Promise((resolve, reject) => (stream.once("end", resolve), stream.once("error", reject)));
  let round = 0;
  for (let done = false; !done; round++) {
    await Promise.race([ended.then(() => (done = true)), new Promise((resolve) => setTimeout(resolve, 5))]);
    if (held.length === 0) continue;
    // Still intact while lent, however long it is held.
    const taken = held.splice(0, held.length);
    for (const chunk of taken) out.push(Buffer.from(chunk));
    const verified = Buffer.concat(out);
    assert.ok(
      verified.equals(o.plaintext.subarray(0, verified.length)),
      "a lent chunk changed before it was given back",
    );
    // Given back whole, joined, or in pieces.
    if (round % 3 === 0) for (const chunk of taken) giveBack(chunk);
    else if (round % 3 === 1) giveBack(Buffer.concat(taken));
    else
      for (const chunk of taken) {
        giveBack(chunk.subarray(0, 1000));
        giveBack(chunk.subarray(1000));
      }
  }
  assert.ok(Buffer.concat(out).equals(o.plaintext));
  assert.ok(most <= WINDOW, `${most} chunks were out at once`);
  assert.is(context.store.reader.active, 0);
});

test("lending: chunks never given back stall only their own stream, which a destroy releases", async (context) => {
  const o = await stored(context, "runs/n/plan.json", 8 * MiB);
  const stream = await context.store.openFramed(o.descriptor.key, KIND, o.expected, { lend: true });
  let chunks = 0;
  stream.on("data", () => (chunks += 1));
  await until(() => chunks >= WINDOW, "the worker sent its slots");
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.is(chunks, WINDOW, "the worker sent more than its slots while none came back");
  const other = await stored(context, "runs/m/plan.json", 3 * MiB);
  const again = await drain(await context.store.openFramed(other.descriptor.key, KIND, other.expected));
  assert.ok(again.bytes.equals(other.plaintext));
  stream.destroy();
  await until(
    () => context.store.reader.active === 0 && openDescriptors(o.file) === 0,
    "a stalled stream stayed open after destroy",
  );
});

test("close() fails the streams under way, closes their objects and refuses new ones", async (context) => {
  const o = await stored(context, "runs/c/plan.json", 16 * MiB);
  const stream = await context.store.openFramed(o.descriptor.key, KIND, o.expected);
  await new Promise((resolve) => stream.once("data", () => (stream.pause(), resolve(undefined))));
  const ended = drain(stream);
  await context.store.close();
  const { error } = await ended;
  assert.ok(error, "a stream under way survived close()");
  assert.is(context.store.reader.active, 0);
  await until(() => openDescriptors(o.file) === 0, "the object stayed open after close()");
  try {
    await context.store.openFramed(o.descriptor.key, KIND, o.expected);
    assert.unreachable("opened after close()");
  } catch (error) {
    assert.match((error as Error).message, /closed/);
  }
  await until(() => openDescriptors(o.file) === 0, "a refused object stayed open");
});

test.run();
