// The artifact store's whole-object path: artifacts up to MAIN_THREAD_MAX_BYTES held in memory are
// sealed and written in one step, and read back whole, with the same checks as the streaming path.
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { FramedArtifactStore, MAIN_THREAD_MAX_BYTES } from "./artifact-store.ts";
import { LocalObjectBackend } from "./backends/local.ts";
import { FramedArtifactError } from "./framed.ts";
import { ObjectNotFoundError } from "./object-backend.ts";

interface Context {
  dir: string;
  calls: { writeWhole: number; readWhole: number; write: number };
  store: FramedArtifactStore;
}

const WRAP = Buffer.alloc(32, 5);
const WORKSPACE = "ws-0123456789abcdef";
const target = (key: string) => ({ kind: "plan" as const, workspaceId: WORKSPACE, key });

const test = suite<Context>("artifact store: whole small artifacts");

test.before.each((context) => {
  context.dir = mkdtempSync(join(tmpdir(), "ss-artifact-store-"));
  const backend = new LocalObjectBackend(context.dir);
  const calls = { writeWhole: 0, readWhole: 0, write: 0 };
  // The same backend, counting which of its paths the store takes.
  const counting = Object.assign(Object.create(backend) as LocalObjectBackend, {
    writeWhole: (key: string, bytes: Buffer) => (calls.writeWhole++, backend.writeWhole(key, bytes)),
    readWhole: (key: string, maxBytes: number) => (calls.readWhole++, backend.readWhole(key, maxBytes)),
    write: (key: string, source: AsyncIterable<Uint8Array>) => (calls.write++, backend.write(key, source)),
  });
  context.calls = calls;
  context.store = new FramedArtifactStore(counting, WRAP);
});

test.after.each(async (context) => {
  await context.store.close();
  rmSync(context.dir, { recursive: true, force: true });
});

async function drain(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

test("up to MAIN_THREAD_MAX_BYTES a buffer is written and read whole, one byte more streams; both read back either way", async ({
  store,
  calls,
}) => {
  for (const size of [0, 1, MAIN_THREAD_MAX_BYTES, MAIN_THREAD_MAX_BYTES + 1]) {
    const plaintext = randomBytes(size);
    const before = { ...calls };
    const ref = await store.write(target(`runs/r/${size}.bin`), plaintext);
    const whole = size <= MAIN_THREAD_MAX_BYTES;
    assert.is(calls.writeWhole - before.writeWhole, whole ? 1 : 0, `write of ${size} bytes`);
    assert.is(calls.write - before.write, whole ? 0 : 1, `write of ${size} bytes`);
    assert.ok((await store.read(ref, WORKSPACE)).equals(plaintext));
    assert.is(calls.readWhole - before.readWhole, whole ? 1 : 0, `read of ${size} bytes`);
    assert.ok((await drain(await store.open(ref, WORKSPACE))).equals(plaintext));
  }
  // A streamed source of a small size is read whole too.
  const plaintext = randomBytes(5000);
  const ref = await store.write(
    target("runs/r/streamed.bin"),
    (async function* () {
      yield plaintext;
    })(),
  );
  assert.ok((await store.read(ref, WORKSPACE)).equals(plaintext));
});

test("a whole read fails on a flipped byte, an extended or truncated object, another workspace, and an absent object", async ({
  store,
  dir,
}) => {
  const plaintext = randomBytes(3000);
  const ref = await store.write(target("runs/r/plan.bin"), plaintext);
  const file = join(dir, "runs/r/plan.bin");
  const original = readFileSync(file);
  const refused = async (message: RegExp, workspace = WORKSPACE) => {
    try {
      await store.read(ref, workspace);
    } catch (error) {
      assert.instance(error, FramedArtifactError);
      assert.match((error as Error).message, message);
      return;
    }
    assert.unreachable("the read was not refused");
  };
  const flipped = Buffer.from(original);
  flipped[original.length - 20] ^= 1;
  writeFileSync(file, flipped);
  await refused(/authentication/);
  writeFileSync(file, original);
  appendFileSync(file, "x");
  await refused(/does not match its descriptor/);
  // Far larger than any object of this size could be: not even read in.
  appendFileSync(file, Buffer.alloc(64 * 1024));
  await refused(/does not match its descriptor/);
  writeFileSync(file, original);
  truncateSync(file, original.length - 1);
  await refused(/does not match its descriptor/);
  writeFileSync(file, original);
  await refused(/does not unwrap/, "ws-ffffffffffffffff");
  assert.ok((await store.read(ref, WORKSPACE)).equals(plaintext));
  rmSync(file);
  try {
    await store.read(ref, WORKSPACE);
    assert.unreachable("an absent object was read");
  } catch (error) {
    assert.instance(error, ObjectNotFoundError);
  }
});

test("a whole write leaves no temporary file, replaces an object atomically, and makes its directory again when it was removed", async ({
  store,
  dir,
}) => {
  await store.write(target("runs/a/plan.bin"), Buffer.from("one"));
  const second = await store.write(target("runs/a/plan.bin"), Buffer.from("two"));
  assert.equal(readdirSync(join(dir, "runs/a")), ["plan.bin"]);
  assert.is((await store.read(second, WORKSPACE)).toString(), "two");
  rmSync(join(dir, "runs/a"), { recursive: true });
  const third = await store.write(target("runs/a/plan.bin"), Buffer.from("three"));
  assert.equal(readdirSync(join(dir, "runs/a")), ["plan.bin"]);
  assert.is((await store.read(third, WORKSPACE)).toString(), "three");
});

test.run();
