import fc from "fast-check";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { durationsIn, readDurations, shardFiles } from "./test-shards.mjs";

test("shardFiles puts the longest files first onto the lightest shard", () => {
  const durations = { "a.test.ts": 100, "b.test.ts": 60, "c.test.ts": 50, "d.test.ts": 10 };
  const shards = shardFiles(Object.keys(durations), durations, 2);
  assert.equal(shards, [
    { seconds: 110, files: ["a.test.ts", "d.test.ts"] },
    { seconds: 110, files: ["b.test.ts", "c.test.ts"] },
  ]);
});

test("a file without a record counts as the median of the known ones; with none known, 1 s each", () => {
  const shards = shardFiles(
    ["new.test.ts", "a.test.ts", "b.test.ts", "c.test.ts"],
    { "a.test.ts": 1, "b.test.ts": 5, "c.test.ts": 9 },
    2,
  );
  // c (9) and b (5) first, then new (counted as 5) onto b's shard and a (1) onto c's.
  assert.equal(shards, [
    { seconds: 10, files: ["a.test.ts", "c.test.ts"] },
    { seconds: 10, files: ["b.test.ts", "new.test.ts"] },
  ]);
  assert.equal(
    shardFiles(["x", "y", "z"], {}, 2).map((shard) => shard.seconds),
    [2, 1],
  );
});

test("never more shards than files, never fewer than one", () => {
  assert.is(shardFiles(["only.test.ts"], {}, 4).length, 1);
  assert.is(shardFiles(["a", "b"], {}, 0).length, 1);
});

test("property: every file lands in exactly one shard, whatever the order it came in", () => {
  fc.assert(
    fc.property(
      // Any names, "constructor" and "__proto__" too: only a file's own record counts.
      fc.uniqueArray(
        fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom("constructor", "__proto__", "toString")),
        {
          minLength: 1,
          maxLength: 40,
        },
      ),
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 0, max: 1000 }),
      (files, count, seed) => {
        const durations = Object.fromEntries(
          files.filter((_, i) => (i + seed) % 3 !== 0).map((f, i) => [f, (i * 7 + seed) % 50]),
        );
        const shards = shardFiles(files, durations, count);
        assert.equal(shards.flatMap((shard) => shard.files).sort(), [...files].sort());
        const reversed = shardFiles([...files].reverse(), durations, count);
        assert.equal(reversed, shards);
      },
    ),
  );
});

test("durationsIn reads the [test-duration] lines; readDurations tolerates a missing or broken file", () => {
  const output = "Total: 3\n[test-duration] 12.5 server/test/a.test.ts\n[test-duration] 0.0 b.test.ts\nDone\n";
  assert.equal(durationsIn(output), { "server/test/a.test.ts": 12.5, "b.test.ts": 0 });
  const dir = mkdtempSync(join(tmpdir(), "durations-"));
  try {
    assert.equal(readDurations(join(dir, "missing.json")), {});
    writeFileSync(join(dir, "broken.json"), "{");
    assert.equal(readDurations(join(dir, "broken.json")), {});
    writeFileSync(join(dir, "list.json"), "[1]");
    assert.equal(readDurations(join(dir, "list.json")), {});
    writeFileSync(join(dir, "good.json"), '{"a.test.ts": 3}');
    assert.equal(readDurations(join(dir, "good.json")), { "a.test.ts": 3 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
