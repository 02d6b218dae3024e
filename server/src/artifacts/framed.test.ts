import { createHash, randomBytes } from "node:crypto";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  FramedArtifactError,
  FramedOpener,
  FramedSealer,
  HEADER_SIZE,
  framedObjectSize,
  maxFramedObjectSize,
  openFramed,
  openHeader,
  openWhole,
  sealFramed,
  sealWhole,
  type ArtifactIdentity,
} from "./framed.ts";

const KEY = Buffer.alloc(32, 7);
const OTHER_KEY = Buffer.alloc(32, 8);
const ID: ArtifactIdentity = {
  kind: "plan_json",
  workspaceId: "ws-0123456789abcdef",
  key: "runs/run-0123456789abcdef/plan.json",
};
const FRAME = 1024;

const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

/** Streams `object` (after its header) through a reader, in chunks of `chunkSize`; what came out and how it ended. */
async function read(
  object: Buffer,
  expected: { sizeBytes: number; sha256: string },
  chunkSize = 777,
  identity = ID,
): Promise<{ out: Buffer; error: Error | null }> {
  const { frameSize, dataKey } = openHeader(object.subarray(0, HEADER_SIZE), KEY, identity);
  const body = object.subarray(HEADER_SIZE);
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += chunkSize)
    chunks.push(body.subarray(offset, offset + chunkSize));
  const out: Buffer[] = [];
  let error: Error | null = null;
  try {
    await pipeline(
      Readable.from(chunks),
      new FramedOpener({ dataKey, frameSize, identity, ...expected }),
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          out.push(chunk);
          callback();
        },
      }),
    );
  } catch (caught) {
    error = caught as Error;
  }
  return { out: Buffer.concat(out), error };
}

const test = suite("framed artifacts");

test("round trip of any size and chunking; the object size follows from the plaintext size", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 5 * FRAME + 3 }),
      fc.integer({ min: 1, max: 3000 }),
      async (size, chunkSize) => {
        const plaintext = randomBytes(size);
        const object = await sealFramed(plaintext, { wrappingKey: KEY, identity: ID, frameSize: FRAME });
        assert.is(object.length, framedObjectSize(size, FRAME));
        const { out, error } = await read(object, { sizeBytes: size, sha256: sha(plaintext) }, chunkSize);
        assert.is(error, null);
        assert.ok(out.equals(plaintext));
      },
    ),
    { numRuns: 60 },
  );
});

test("frame boundaries: exact multiples, one byte more, empty", async () => {
  for (const size of [0, 1, FRAME - 1, FRAME, FRAME + 1, 3 * FRAME, 3 * FRAME + 1]) {
    const plaintext = randomBytes(size);
    const object = await sealFramed(plaintext, { wrappingKey: KEY, identity: ID, frameSize: FRAME });
    assert.ok(
      (await openFramed(object, KEY, ID, { sizeBytes: size, sha256: sha(plaintext) })).equals(plaintext),
      `size ${size}`,
    );
  }
});

test("the writer streams with backpressure and reports size and digest", async () => {
  const plaintext = randomBytes(10 * FRAME + 5);
  const sealer = new FramedSealer({ wrappingKey: KEY, identity: ID, frameSize: FRAME });
  const parts: Buffer[] = [];
  await pipeline(
    Readable.from([plaintext.subarray(0, 3000), plaintext.subarray(3000)]),
    sealer,
    new Writable({
      write(chunk: Buffer, _e, cb) {
        parts.push(chunk);
        cb();
      },
    }),
  );
  assert.equal(sealer.result(), { sizeBytes: plaintext.length, sha256: sha(plaintext) });
  assert.ok((await openFramed(Buffer.concat(parts), KEY, ID, sealer.result())).equals(plaintext));
});

test("any flipped byte fails: header, a frame, a tag", async () => {
  const plaintext = randomBytes(4 * FRAME + 100);
  const expected = { sizeBytes: plaintext.length, sha256: sha(plaintext) };
  const object = await sealFramed(plaintext, { wrappingKey: KEY, identity: ID, frameSize: FRAME });
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: object.length - 1 }),
      fc.integer({ min: 1, max: 255 }),
      async (position, mask) => {
        const tampered = Buffer.from(object);
        tampered[position] ^= mask;
        let failed = false;
        let released = 0;
        try {
          const { out, error } = await read(tampered, expected);
          failed = error instanceof FramedArtifactError;
          released = out.length;
        } catch (error) {
          failed = error instanceof FramedArtifactError;
        }
        assert.ok(failed, `flipping byte ${position} was not detected`);
        assert.ok(released < plaintext.length, "a tampered object came out whole");
      },
    ),
    { numRuns: 80 },
  );
});

test("swapped or reordered frames and another artifact's identity fail", async () => {
  const plaintext = randomBytes(4 * FRAME);
  const expected = { sizeBytes: plaintext.length, sha256: sha(plaintext) };
  const object = await sealFramed(plaintext, { wrappingKey: KEY, identity: ID, frameSize: FRAME });
  const frame = FRAME + 16;
  const swapped = Buffer.concat([
    object.subarray(0, HEADER_SIZE),
    object.subarray(HEADER_SIZE + frame, HEADER_SIZE + 2 * frame),
    object.subarray(HEADER_SIZE, HEADER_SIZE + frame),
    object.subarray(HEADER_SIZE + 2 * frame),
  ]);
  assert.instance((await read(swapped, expected)).error, FramedArtifactError);
  for (const other of [
    { ...ID, workspaceId: "ws-ffffffffffffffff" },
    { ...ID, kind: "plan" },
    { ...ID, key: "runs/run-ffffffffffffffff/plan.json" },
  ]) {
    assert.throws(
      () => openHeader(object.subarray(0, HEADER_SIZE), KEY, other),
      (error: Error) => error instanceof FramedArtifactError,
    );
  }
  assert.throws(
    () => openHeader(object.subarray(0, HEADER_SIZE), OTHER_KEY, ID),
    (error: Error) => error instanceof FramedArtifactError,
  );
});

test("truncation at a frame boundary fails (the final flag is bound), nothing whole comes out", async () => {
  const plaintext = randomBytes(3 * FRAME);
  const object = await sealFramed(plaintext, { wrappingKey: KEY, identity: ID, frameSize: FRAME });
  const twoFrames = object.subarray(0, HEADER_SIZE + 2 * (FRAME + 16));
  // Declared as the two-frame object it now looks like: frame 1 was not sealed as final.
  const asShorter = await read(twoFrames, { sizeBytes: 2 * FRAME, sha256: sha(plaintext.subarray(0, 2 * FRAME)) });
  assert.instance(asShorter.error, FramedArtifactError);
  assert.ok(asShorter.out.length < 2 * FRAME);
  // Declared as the original: the object ends early.
  const asOriginal = await read(twoFrames, { sizeBytes: plaintext.length, sha256: sha(plaintext) });
  assert.instance(asOriginal.error, FramedArtifactError);
  assert.ok(asOriginal.out.length < plaintext.length);
});

test("a trailing byte fails without being released; so does a declared size one short", async () => {
  const plaintext = randomBytes(2 * FRAME + 10);
  const expected = { sizeBytes: plaintext.length, sha256: sha(plaintext) };
  const object = await sealFramed(plaintext, { wrappingKey: KEY, identity: ID, frameSize: FRAME });
  const trailing = await read(Buffer.concat([object, Buffer.from("}")]), expected, 1 << 20);
  assert.instance(trailing.error, FramedArtifactError);
  assert.ok(trailing.out.length <= plaintext.length);
  const short = await read(object, { sizeBytes: plaintext.length - 1, sha256: sha(plaintext.subarray(0, -1)) });
  assert.instance(short.error, FramedArtifactError);
  assert.ok(short.out.length < plaintext.length - 1);
});

test("a digest mismatch fails at the end and holds the last bytes back", async () => {
  const plaintext = randomBytes(5 * FRAME + 1);
  const object = await sealFramed(plaintext, { wrappingKey: KEY, identity: ID, frameSize: FRAME });
  const { out, error } = await read(object, { sizeBytes: plaintext.length, sha256: "0".repeat(64) }, FRAME + 16);
  assert.instance(error, FramedArtifactError);
  assert.match(error!.message, /SHA-256/);
  assert.ok(out.length < plaintext.length);
  assert.ok(out.equals(plaintext.subarray(0, out.length)));
});

test("each data key is fresh", async () => {
  const a = await sealFramed(Buffer.from("{}"), { wrappingKey: KEY, identity: ID, frameSize: FRAME });
  const b = await sealFramed(Buffer.from("{}"), { wrappingKey: KEY, identity: ID, frameSize: FRAME });
  assert.not.ok(
    openHeader(a.subarray(0, HEADER_SIZE), KEY, ID).dataKey.equals(
      openHeader(b.subarray(0, HEADER_SIZE), KEY, ID).dataKey,
    ),
  );
  assert.not.ok(a.subarray(HEADER_SIZE).equals(b.subarray(HEADER_SIZE)));
});

/** openWhole on a whole object: its header opened first, as the artifact store does. */
function openObjectWhole(object: Buffer, expected: { sizeBytes: number; sha256: string }, identity = ID): Buffer {
  const { frameSize, dataKey } = openHeader(object.subarray(0, HEADER_SIZE), KEY, identity);
  return openWhole(object.subarray(HEADER_SIZE), { dataKey, frameSize, identity, ...expected });
}

test("the whole-buffer writer and reader speak the streaming format both ways", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 5 * FRAME + 3 }), async (size) => {
      const plaintext = randomBytes(size);
      const expected = { sizeBytes: size, sha256: sha(plaintext) };
      const whole = sealWhole(plaintext, { wrappingKey: KEY, identity: ID, frameSize: FRAME });
      assert.equal({ sizeBytes: whole.sizeBytes, sha256: whole.sha256 }, expected);
      assert.is(whole.object.length, framedObjectSize(size, FRAME));
      assert.ok(whole.object.length <= maxFramedObjectSize(size));
      assert.ok((await openFramed(whole.object, KEY, ID, expected)).equals(plaintext));
      const streamed = await sealFramed(plaintext, { wrappingKey: KEY, identity: ID, frameSize: FRAME });
      assert.ok(openObjectWhole(streamed, expected).equals(plaintext));
    }),
    { numRuns: 40 },
  );
});

test("the whole-buffer reader fails as the stream does: a flipped byte, reordered frames, truncation, a trailing byte, a digest or size mismatch", () => {
  const plaintext = randomBytes(4 * FRAME + 100);
  const expected = { sizeBytes: plaintext.length, sha256: sha(plaintext) };
  const { object } = sealWhole(plaintext, { wrappingKey: KEY, identity: ID, frameSize: FRAME });
  const fails = (object: Buffer, declared = expected) =>
    assert.throws(
      () => openObjectWhole(object, declared),
      (error: Error) => error instanceof FramedArtifactError,
    );
  fc.assert(
    fc.property(
      fc.integer({ min: HEADER_SIZE, max: object.length - 1 }),
      fc.integer({ min: 1, max: 255 }),
      (position, mask) => {
        const tampered = Buffer.from(object);
        tampered[position] ^= mask;
        fails(tampered);
      },
    ),
    { numRuns: 60 },
  );
  const frame = FRAME + 16;
  fails(
    Buffer.concat([
      object.subarray(0, HEADER_SIZE),
      object.subarray(HEADER_SIZE + frame, HEADER_SIZE + 2 * frame),
      object.subarray(HEADER_SIZE, HEADER_SIZE + frame),
      object.subarray(HEADER_SIZE + 2 * frame),
    ]),
  );
  fails(object.subarray(0, HEADER_SIZE + 2 * frame));
  fails(object.subarray(0, HEADER_SIZE + 2 * frame), {
    sizeBytes: 2 * FRAME,
    sha256: sha(plaintext.subarray(0, 2 * FRAME)),
  });
  fails(Buffer.concat([object, Buffer.from("}")]));
  fails(object, { sizeBytes: plaintext.length, sha256: "0".repeat(64) });
  fails(object, { sizeBytes: plaintext.length - 1, sha256: sha(plaintext.subarray(0, -1)) });
  assert.throws(
    () => openObjectWhole(object, expected, { ...ID, key: "runs/run-ffffffffffffffff/plan.json" }),
    (error: Error) => error instanceof FramedArtifactError,
  );
});

test.run();
