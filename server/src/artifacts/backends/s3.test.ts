/**
 * The S3 backend against a real SeaweedFS (test/support/seaweedfs.ts): the shared conformance
 * suite, and this backend's own checks of the same properties (so the branch that brought it
 * could verify it before the shared suite existed), plus what only S3 has: multipart aborts,
 * prefixes, URL parsing and credentials. Skipped, with a printed note, when .tools/bin/weed is absent.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
} from "@aws-sdk/client-s3";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startSeaweedS3, WEED, type SeaweedS3 } from "../../../test/support/seaweedfs.ts";
import { ObjectNotFoundError, type ObjectBackend } from "../object-backend.ts";
import { runObjectBackendConformance } from "./conformance.ts";
import { createS3Backend, parseS3Url, PART_SIZE } from "./s3.ts";
import { skipTest } from "../../../test/support/skips.ts";

const CANARY = "SECRETCANARY0123456789abcdef";

// ---------------------------------------------------------------------------------------------
// URL parsing: no server needed.
const urls = suite("s3 backend: the artifact URL");

function parseError(text: string): string {
  try {
    parseS3Url(new URL(text));
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`'${text}' was accepted`);
}

urls("bucket, prefix, endpoint, region, path style and credentials come from the URL", () => {
  const parsed = parseS3Url(
    new URL(
      `s3://my-bucket/a/b/?endpoint=http://127.0.0.1:8333&region=eu-west-3&force_path_style=true&access_key_id=AK&secret_access_key=${CANARY}`,
    ),
  );
  assert.is(parsed.bucket, "my-bucket");
  assert.is(parsed.prefix, "a/b");
  assert.is(parsed.client.endpoint, "http://127.0.0.1:8333/");
  assert.is(parsed.client.region, "eu-west-3");
  assert.is(parsed.client.forcePathStyle, true);
  assert.equal(parsed.client.credentials, { accessKeyId: "AK", secretAccessKey: CANARY });
  assert.not.ok(parsed.describe.includes(CANARY));
  assert.is(parseS3Url(new URL("s3://my-bucket")).prefix, "");
  assert.is(parseS3Url(new URL("s3://my-bucket?force_path_style=false")).client.forcePathStyle, false);
  // Without query credentials the SDK's default chain (AWS_* environment) is used.
  assert.is(parseS3Url(new URL("s3://my-bucket")).client.credentials, undefined);
});

urls("a bad URL is refused with a message naming the part, never the secret", () => {
  const cases: Array<[string, RegExp]> = [
    ["http://bucket/x", /s3: scheme/],
    ["s3://Bad_Bucket/x", /not a valid S3 bucket name/],
    ["s3://b/x", /not a valid S3 bucket name/],
    [`s3://bucket/x?secret_access_key=${CANARY}`, /both access_key_id and secret_access_key/],
    ["s3://bucket/x?access_key_id=AK", /both access_key_id and secret_access_key/],
    [`s3://bucket/x?access_key_id=&secret_access_key=${CANARY}`, /must not be empty/],
    [`s3://AK:${CANARY}@bucket/x`, /not in the URL's user part/],
    [`s3://bucket/x?endpoint=http://AK:${CANARY}@127.0.0.1:1`, /must not carry credentials/],
    ["s3://bucket/x?endpoint=ftp://127.0.0.1", /http: or https:/],
    ["s3://bucket/x?endpoint=nope", /not a URL/],
    ["s3://bucket/x?force_path_style=yes", /true or false/],
    [`s3://bucket/x?secret=${CANARY}`, /unknown parameter 'secret'/],
    ["s3://bucket/x?region=a&region=b", /more than once/],
    ["s3://bucket/a//b", /key prefix/],
    ["s3://bucket/a/%2e%2e%2fb", /key prefix/],
    ["s3://bucket/a%20b", /key prefix/],
  ];
  for (const [text, expected] of cases) {
    const message = parseError(text);
    assert.match(message, expected, text);
    assert.not.ok(message.includes(CANARY), `${text}: ${message}`);
  }
});

urls.run();

// ---------------------------------------------------------------------------------------------
// Against SeaweedFS.
if (!existsSync(WEED)) {
  const skipped = suite("s3 backend against SeaweedFS");
  skipTest(
    skipped,
    "the S3 backend against SeaweedFS",
    `${WEED} is absent (bash scripts/bootstrap-tools --with-test-tools, which npm test runs, builds it)`,
  );
  skipped.run();
} else {
  let started: Promise<SeaweedS3 | null> | undefined;
  let prefixes = 0;
  const server = async (): Promise<SeaweedS3> => {
    const s3 = await (started ??= startSeaweedS3());
    if (!s3) throw new Error("SeaweedFS did not start");
    return s3;
  };
  const open = async (prefix = `t${++prefixes}-${process.pid}`): Promise<ObjectBackend> =>
    createS3Backend((await server()).url(prefix));

  runObjectBackendConformance("s3 (SeaweedFS)", () => open());

  const s3 = suite("s3 backend against SeaweedFS");
  let backend: ObjectBackend;
  s3.before(async () => {
    backend = await open("own-checks");
  });

  /** `size` deterministic bytes, streamed in `chunk`-sized pieces. */
  function pattern(size: number, seed = 1): Buffer {
    const out = Buffer.alloc(size);
    for (let i = 0; i < size; i++) out[i] = (i * 31 + seed * 7 + (i >>> 8) * 13 + (i >>> 16)) & 255;
    return out;
  }
  async function* chunks(data: Uint8Array, chunk = 64 * 1024): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < data.length; i += chunk) yield data.subarray(i, Math.min(i + chunk, data.length));
  }
  async function readAll(iterable: AsyncIterable<Uint8Array>): Promise<Buffer> {
    const parts: Uint8Array[] = [];
    for await (const part of iterable) parts.push(part);
    return Buffer.concat(parts);
  }
  async function notFound(promise: Promise<unknown>, key: string) {
    try {
      await promise;
    } catch (error) {
      assert.instance(error, ObjectNotFoundError);
      assert.is((error as ObjectNotFoundError).key, key);
      return;
    }
    assert.unreachable("expected ObjectNotFoundError");
  }
  async function pendingUploads(): Promise<number> {
    const { client, bucket } = await server();
    const listing = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: "own-checks/" }));
    return listing.Uploads?.length ?? 0;
  }

  s3("a small object round-trips; size and length agree", async () => {
    const data = pattern(1000);
    assert.is(await backend.write("small/a", chunks(data, 7)), 1000);
    assert.is(await backend.size("small/a"), 1000);
    assert.ok((await readAll(backend.read("small/a"))).equals(data));
  });

  s3("an empty object exists, has size 0 and reads as nothing at any range", async () => {
    assert.is(await backend.write("empty/a", chunks(Buffer.alloc(0))), 0);
    assert.is(await backend.size("empty/a"), 0);
    assert.is((await readAll(backend.read("empty/a"))).length, 0);
    assert.is((await readAll(backend.read("empty/a", { start: 0, end: 0 }))).length, 0);
    assert.is((await readAll(backend.read("empty/a", { start: 0, end: 10 }))).length, 0);
    assert.is((await readAll(backend.read("empty/a", { start: 5 }))).length, 0);
  });

  s3(
    "an absent key: read throws ObjectNotFoundError (also for an empty range), size is null, delete is fine",
    async () => {
      await notFound(readAll(backend.read("absent/a")), "absent/a");
      await notFound(readAll(backend.read("absent/a", { start: 3, end: 9 })), "absent/a");
      await notFound(readAll(backend.read("absent/a", { start: 4, end: 4 })), "absent/a");
      assert.is(await backend.size("absent/a"), null);
      await backend.delete("absent/a");
    },
  );

  s3("ranges are byte-exact at part boundaries, at the end and past it", async () => {
    const size = 2 * PART_SIZE + 1234;
    const data = pattern(size, 7);
    assert.is(await backend.write("ranges/a", chunks(data, 100_003)), size);
    const P = PART_SIZE;
    const cases: Array<{ start?: number; end?: number }> = [
      {},
      { start: 0 },
      { end: size },
      { start: 0, end: 1 },
      { start: 0, end: P - 1 },
      { start: P - 1, end: P },
      { start: P - 1, end: P + 1 },
      { start: P, end: P + 1 },
      { start: P, end: 2 * P },
      { start: 2 * P - 1, end: 2 * P + 1 },
      { start: size - 1 },
      { start: size - 1, end: size },
      { start: size },
      { start: size, end: size + 10 },
      { start: size + 5 },
      { start: size + 5, end: size + 10 },
      { start: 10, end: 10 },
      { start: 10, end: 5 },
      { start: 0, end: size + 1 },
      { start: P + 17, end: size * 2 },
    ];
    for (const range of cases) {
      const expected = data.subarray(range.start ?? 0, Math.max(range.start ?? 0, Math.min(range.end ?? size, size)));
      const got = await readAll(backend.read("ranges/a", range));
      assert.is(got.length, expected.length, JSON.stringify(range));
      assert.ok(got.equals(expected), JSON.stringify(range));
    }
  });

  s3("a negative or fractional range is refused", async () => {
    await backend.write("ranges/b", chunks(pattern(10)));
    for (const range of [{ start: -1 }, { start: 1.5 }, { end: -2 }, { start: 0, end: 2.5 }]) {
      try {
        await readAll(backend.read("ranges/b", range));
        assert.unreachable(JSON.stringify(range));
      } catch (error) {
        assert.instance(error, RangeError, JSON.stringify(range));
      }
    }
  });

  s3("a write replaces an existing object; delete removes it", async () => {
    await backend.write("replace/a", chunks(pattern(PART_SIZE + 10, 1)));
    const second = pattern(300, 2);
    assert.is(await backend.write("replace/a", chunks(second)), 300);
    assert.is(await backend.size("replace/a"), 300);
    assert.ok((await readAll(backend.read("replace/a"))).equals(second));
    await backend.delete("replace/a");
    assert.is(await backend.size("replace/a"), null);
    await notFound(readAll(backend.read("replace/a")), "replace/a");
  });

  /** A source that yields `bytes` and then fails. */
  async function* failing(bytes: number): AsyncGenerator<Uint8Array> {
    yield* chunks(pattern(bytes, 3));
    throw new Error("source aborted");
  }

  s3(
    "an aborted source leaves nothing: before the first part, and after parts were uploaded (the multipart upload is aborted)",
    async () => {
      // The listing below can see a pending upload: one made by hand shows, then goes.
      const { client, bucket } = await server();
      const { UploadId } = await client.send(
        new CreateMultipartUploadCommand({ Bucket: bucket, Key: "own-checks/aborted/by-hand" }),
      );
      assert.is(await pendingUploads(), 1);
      await client.send(
        new AbortMultipartUploadCommand({ Bucket: bucket, Key: "own-checks/aborted/by-hand", UploadId }),
      );
      assert.is(await pendingUploads(), 0);
      for (const bytes of [0, 1000, PART_SIZE - 1, PART_SIZE, PART_SIZE + 1, 2 * PART_SIZE + 5]) {
        const key = `aborted/a${bytes}`;
        try {
          await backend.write(key, failing(bytes));
          assert.unreachable(`${bytes}: the write resolved`);
        } catch (error) {
          assert.is((error as Error).message, "source aborted", `${bytes}`);
        }
        assert.is(await backend.size(key), null, `${bytes}`);
        await notFound(readAll(backend.read(key)), key);
      }
      assert.is(await pendingUploads(), 0, "no multipart upload is left pending");
    },
  );

  s3("an aborted replace keeps the previous object whole", async () => {
    const first = pattern(PART_SIZE + 99, 5);
    await backend.write("aborted/replace", chunks(first));
    try {
      await backend.write("aborted/replace", failing(2 * PART_SIZE + 1));
      assert.unreachable("the write resolved");
    } catch (error) {
      assert.is((error as Error).message, "source aborted");
    }
    assert.ok((await readAll(backend.read("aborted/replace"))).equals(first));
    assert.is(await pendingUploads(), 0);
  });

  s3("a reader that stops early releases its connection; later reads still work", async () => {
    const data = pattern(3 * PART_SIZE, 9);
    await backend.write("early/a", chunks(data));
    // More early stops than the SDK's 50 sockets: a leaked connection would make a read wait forever.
    const work = (async () => {
      for (let i = 0; i < 60; i++) {
        for await (const _ of backend.read("early/a")) break;
      }
      return readAll(backend.read("early/a", { start: 5, end: 50 }));
    })();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("reads stalled: early stops leaked connections")), 30_000);
    });
    try {
      assert.ok((await Promise.race([work, timeout])).equals(data.subarray(5, 50)));
    } finally {
      clearTimeout(timer);
    }
  });

  s3("keys live under the URL's prefix, and backends with other prefixes do not see them", async () => {
    const { client, bucket } = await server();
    await backend.write("prefixed/a", chunks(pattern(10)));
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: "own-checks/prefixed/a" }));
    assert.is(head.ContentLength, 10);
    const other = await open("another-prefix");
    try {
      assert.is(await other.size("prefixed/a"), null);
    } finally {
      await other.close();
    }
  });

  s3("an invalid key is refused before any request", async () => {
    for (const key of ["../x", "/abs", "Upper", "", "a/../b"]) {
      try {
        await backend.write(key, chunks(pattern(1)));
        assert.unreachable(key);
      } catch (error) {
        assert.match((error as Error).message, /invalid artifact key/);
      }
    }
  });

  s3(
    "credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY when the URL has none; wrong ones fail at open without showing the secret",
    async () => {
      const { endpoint, bucket, accessKeyId, secretAccessKey } = await server();
      const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
      const bare = new URL(`s3://${bucket}/env-creds?endpoint=${endpoint}&force_path_style=true`);
      try {
        process.env.AWS_ACCESS_KEY_ID = accessKeyId;
        process.env.AWS_SECRET_ACCESS_KEY = secretAccessKey;
        const fromEnv = await createS3Backend(bare);
        await fromEnv.write("x", chunks(pattern(3)));
        assert.is(await fromEnv.size("x"), 3);
        await fromEnv.close();
        process.env.AWS_SECRET_ACCESS_KEY = CANARY;
        try {
          await createS3Backend(bare);
          assert.unreachable("wrong credentials were accepted");
        } catch (error) {
          assert.match((error as Error).message, /access denied|InvalidAccessKeyId|SignatureDoesNotMatch/);
          assert.not.ok(
            JSON.stringify({ message: (error as Error).message, stack: (error as Error).stack }).includes(CANARY),
          );
        }
      } finally {
        if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
        else process.env.AWS_ACCESS_KEY_ID = saved.id;
        if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
        else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
      }
    },
  );

  s3("a missing bucket fails at open with a clear message", async () => {
    const { endpoint, accessKeyId, secretAccessKey } = await server();
    try {
      await createS3Backend(
        new URL(
          `s3://no-such-bucket-here/x?endpoint=${endpoint}&force_path_style=true&access_key_id=${accessKeyId}&secret_access_key=${secretAccessKey}`,
        ),
      );
      assert.unreachable("opened");
    } catch (error) {
      assert.match(
        (error as Error).message,
        /s3:\/\/no-such-bucket-here\/x at http:\/\/127\.0\.0\.1:\d+: the bucket does not exist/,
      );
      assert.not.ok((error as Error).message.includes(secretAccessKey));
    }
  });

  s3("a 64 MiB object streams through write and read with bounded memory", async () => {
    const SIZE = 64 * 1024 * 1024;
    const CHUNK = 256 * 1024;
    const block = pattern(CHUNK, 11);
    const gc = (globalThis as { gc?: () => void }).gc;
    const baseline = process.memoryUsage().arrayBuffers;
    let peak = 0;
    const sample = () => {
      gc?.();
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - baseline);
    };
    const written = createHash("sha256");
    async function* source(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < SIZE / CHUNK; i++) {
        // A fresh buffer each time, as a real producer would hand over.
        const chunk = Buffer.from(block);
        chunk.writeUInt32LE(i, 0);
        written.update(chunk);
        if (i % 16 === 0) sample();
        yield chunk;
      }
    }
    assert.is(await backend.write("big/a", source()), SIZE);
    const writePeak = peak;
    assert.is(await backend.size("big/a"), SIZE);
    peak = 0;
    const read = createHash("sha256");
    let count = 0;
    let length = 0;
    for await (const chunk of backend.read("big/a")) {
      read.update(chunk);
      length += chunk.byteLength;
      if (++count % 64 === 0) sample();
    }
    assert.is(length, SIZE);
    assert.is(read.digest("hex"), written.digest("hex"));
    assert.ok(count > 64, `read in ${count} chunks`);
    process.stdout.write(
      `[s3.test] 64 MiB: peak extra buffer memory ${(writePeak / 2 ** 20).toFixed(1)} MiB writing, ${(peak / 2 ** 20).toFixed(1)} MiB reading\n`,
    );
    // Parts in flight bound a write (about (QUEUE_SIZE + 1) × PART_SIZE, ~15 MiB) and a read holds a
    // few chunks; measured peaks include garbage not yet collected (13–33 MiB on a loaded machine).
    // Three quarters of the object is still below what holding it whole would take.
    assert.ok(writePeak < (SIZE * 3) / 4, `write peak ${writePeak}`);
    assert.ok(peak < (SIZE * 3) / 4, `read peak ${peak}`);
  });

  s3.after(async () => {
    await backend?.close();
    // Last suite of this file: leave nothing behind.
    const s3server = await started;
    if (s3server) {
      const left = await s3server.client.send(
        new ListObjectsV2Command({ Bucket: s3server.bucket, Prefix: "own-checks/aborted/" }),
      );
      assert.ok(
        (left.Contents ?? []).every((o) => o.Key === "own-checks/aborted/replace"),
        "only the replaced object is under aborted/",
      );
      await s3server.stop();
    }
  });

  s3.run();
}
