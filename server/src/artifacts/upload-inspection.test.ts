import { suite } from "uvu";
import * as assert from "uvu/assert";
import { crc32, deflateRawSync, gzipSync } from "node:zlib";
import { gzipWithComment, tarArchive } from "../../test/support/tar.ts";
import { isDomainError } from "../domain/errors.ts";
import { DEFAULT_INSPECTION_LIMITS, UploadInspector, type InspectionLimits } from "./upload-inspection.ts";
import { inspectUpload } from "./upload-inspection-worker.ts";

/** A tar of exactly `tarBytes` bytes (one zero-filled file; a multiple of 512, at least 1536). */
function tarOf(tarBytes: number): Buffer {
  const tar = tarArchive([{ name: "zeros.bin", data: Buffer.alloc(tarBytes - 1536) }]);
  assert.is(tar.length, tarBytes);
  return tar;
}

/** `tar` gzipped to exactly `compressedBytes` bytes (the gzip header's comment pads it). */
function gzipTo(tar: Buffer, compressedBytes: number): Buffer {
  const deflated = { raw: deflateRawSync(tar, { level: 9 }), crc32: crc32(tar), inputLength: tar.length };
  const plain = gzipWithComment(deflated, 1);
  assert.ok(
    plain.length <= compressedBytes,
    `cannot reach ${compressedBytes} bytes: the plain gzip is ${plain.length}`,
  );
  const gz = gzipWithComment(deflated, 1 + compressedBytes - plain.length);
  assert.is(gz.length, compressedBytes);
  return gz;
}

const limits = suite("upload inspection limits (inspectUpload)");

limits(
  "the ratio limit: exactly 100 times the compressed size is accepted, one compressed byte less is refused",
  async () => {
    assert.is(DEFAULT_INSPECTION_LIMITS.maxRatio, 100);
    // 1,280,000 bytes of tar (over the 1 MiB floor) = 100 × 12,800.
    const tar = tarOf(1_280_000);
    const atLimit = await inspectUpload(gzipTo(tar, 12_800), DEFAULT_INSPECTION_LIMITS);
    assert.equal(atLimit, { ok: true, unpackedBytes: 1_280_000, entries: 1 });
    const over = await inspectUpload(gzipTo(tar, 12_799), DEFAULT_INSPECTION_LIMITS);
    assert.is(over.ok, false);
    assert.match((over as { refusal: string }).refusal, "more than 100 times its compressed size");
    // Inflation stopped at the limit: at most one inflated chunk past 1,279,900 bytes.
    assert.ok(over.unpackedBytes <= 1_279_900 + 64 * 1024, String(over.unpackedBytes));
  },
);

limits("the ratio floor: up to 1 MiB unpacked is accepted whatever the ratio, 512 bytes more is refused", async () => {
  assert.is(DEFAULT_INSPECTION_LIMITS.ratioFloorBytes, 1024 * 1024);
  const atFloor = gzipSync(tarOf(1024 * 1024));
  assert.ok(atFloor.length * 100 < 1024 * 1024, `ratio ${(1024 * 1024) / atFloor.length}`);
  assert.equal(await inspectUpload(atFloor, DEFAULT_INSPECTION_LIMITS), {
    ok: true,
    unpackedBytes: 1024 * 1024,
    entries: 1,
  });
  const over = await inspectUpload(gzipSync(tarOf(1024 * 1024 + 512)), DEFAULT_INSPECTION_LIMITS);
  assert.is(over.ok, false);
  assert.match((over as { refusal: string }).refusal, "compression bomb");
});

limits(
  "the size limit: exactly maxUnpackedBytes is accepted, 512 bytes more is refused (a small limit stands in for 512 MiB)",
  async () => {
    assert.is(DEFAULT_INSPECTION_LIMITS.maxUnpackedBytes, 512 * 1024 * 1024);
    const small: InspectionLimits = {
      ...DEFAULT_INSPECTION_LIMITS,
      maxUnpackedBytes: 2 * 1024 * 1024,
      maxRatio: 1_000_000,
    };
    assert.equal(await inspectUpload(gzipSync(tarOf(2 * 1024 * 1024)), small), {
      ok: true,
      unpackedBytes: 2 * 1024 * 1024,
      entries: 1,
    });
    const over = await inspectUpload(gzipSync(tarOf(2 * 1024 * 1024 + 512)), small);
    assert.is(over.ok, false);
    assert.match((over as { refusal: string }).refusal, "unpacks to more than 2 MiB");
  },
);

limits(
  "a bomb (0.5 MB of gzip inflating to 500 MiB) is refused after inflating at most 100 times its size",
  async () => {
    const bomb = gzipSync(Buffer.alloc(500 * 1024 * 1024), { level: 9 });
    const result = await inspectUpload(bomb, DEFAULT_INSPECTION_LIMITS);
    assert.is(result.ok, false);
    assert.match((result as { refusal: string }).refusal, "compression bomb");
    assert.ok(
      result.unpackedBytes <= 100 * bomb.length + 64 * 1024,
      `${result.unpackedBytes} inflated from ${bomb.length}`,
    );
  },
);

limits("not gzip, or truncated gzip: refused as not decompressing", async () => {
  const good = gzipSync(tarArchive([{ name: "a.tf", data: "x" }]));
  for (const bytes of [good.subarray(0, good.length - 9), Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3])]) {
    const result = await inspectUpload(bytes, DEFAULT_INSPECTION_LIMITS);
    assert.is(result.ok, false);
    assert.match((result as { refusal: string }).refusal, "does not decompress");
  }
});

const pool = suite("UploadInspector (worker threads)");

pool("inspects on a worker and reports the same outcome as inspectUpload", async () => {
  const inspector = new UploadInspector({ concurrency: 1, maxWaiting: 0 });
  try {
    const good = gzipSync(tarArchive([{ name: "main.tf", data: "# x\n" }]));
    assert.equal(await inspector.inspect(good), { ok: true, unpackedBytes: 2048, entries: 1 });
    const traversal = await inspector.inspect(gzipSync(tarArchive([{ name: "../x.tf", data: "# x\n" }])));
    assert.is(traversal.ok, false);
    assert.match((traversal as { refusal: string }).refusal, "path traversal");
  } finally {
    await inspector.close();
  }
});

pool(
  "at most `concurrency` run at once, `maxWaiting` wait in order, one more is refused with CONFIGURATION_UPLOAD_BUSY",
  async () => {
    const inspector = new UploadInspector({ concurrency: 2, maxWaiting: 1 });
    try {
      const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
      const settled: number[] = [];
      const three = [0, 1, 2].map((i) => inspector.inspect(bomb).then((result) => (settled.push(i), result)));
      assert.is(inspector.inFlight, 2);
      assert.is(inspector.queued, 1);
      let busy: unknown;
      try {
        await inspector.inspect(bomb);
      } catch (error) {
        busy = error;
      }
      assert.ok(isDomainError(busy), String(busy));
      assert.is((busy as { code: string }).code, "CONFIGURATION_UPLOAD_BUSY");
      // Once one has finished, the waiting one has its slot: nobody waits, never more than two run.
      await Promise.race(three);
      assert.is(inspector.queued, 0);
      assert.ok(inspector.inFlight >= 1 && inspector.inFlight <= 2, String(inspector.inFlight));
      const results = await Promise.all(three);
      for (const result of results) assert.is(result.ok, false);
      assert.is(settled.length, 3);
      assert.is(inspector.inFlight, 0);
      assert.is(inspector.queued, 0);
    } finally {
      await inspector.close();
    }
  },
);

limits.run();
pool.run();
