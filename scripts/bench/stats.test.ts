import { test } from "uvu";
import * as assert from "uvu/assert";
import { median, percentile } from "./stats.ts";

test("the nearest rank: p95 of 1..100 is 95, of 1..20 is 19, of 1..19 is 19", () => {
  const upTo = (n: number) => Array.from({ length: n }, (_, i) => n - i); // unsorted on purpose
  assert.is(percentile(upTo(100), 95), 95);
  assert.is(percentile(upTo(20), 95), 19);
  assert.is(percentile(upTo(19), 95), 19);
  assert.is(percentile(upTo(100), 100), 100);
  assert.is(percentile(upTo(100), 1), 1);
  assert.is(percentile(upTo(100), 0.5), 1);
});

test("the median of an odd count is the middle sample; of an even count the lower middle one", () => {
  assert.is(median([3, 1, 2]), 2);
  assert.is(median([4, 1, 3, 2]), 2);
  assert.is(median([7]), 7);
});

test("the samples are left as they were", () => {
  const samples = [3, 1, 2];
  percentile(samples, 50);
  assert.equal(samples, [3, 1, 2]);
});

test("no samples, or a percentile outside (0, 100], is refused", () => {
  assert.throws(() => median([]), /no samples/);
  assert.throws(() => percentile([1], 0), /not in \(0, 100\]/);
  assert.throws(() => percentile([1], 100.5), /not in \(0, 100\]/);
  assert.throws(() => percentile([1], Number.NaN), /not in \(0, 100\]/);
});

test.run();
