// The plan-diff's bounds (MAX_RESOURCES, MAX_BYTES), each tested on both sides; the other rules are plan-diff.test.ts.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildPlanDiff, MAX_BYTES, MAX_RESOURCES } from "./plan-diff.mjs";

const U = { $stackship: "unknown" };

function plan(entries: unknown[], extra: Record<string, unknown> = {}) {
  return { format_version: "1.2", terraform_version: "1.12.6", resource_changes: entries, errored: false, ...extra };
}

const bounds = suite("plan-diff: the bounds, exactly");

function small(i: number, actions = ["create"]) {
  return {
    address: `terraform_data.r[${i}]`,
    mode: "managed",
    type: "terraform_data",
    name: "r",
    index: i,
    provider_name: "terraform.io/builtin/terraform",
    change: {
      actions,
      before: null,
      after: { input: `v${i}` },
      after_unknown: { id: true, output: true },
      before_sensitive: false,
      after_sensitive: {},
    },
  };
}

function withPadding(entry: ReturnType<typeof small>, key: string, length: number) {
  return { ...entry, change: { ...entry.change, after: { ...entry.change.after, [key]: "x".repeat(length) } } };
}

bounds("5,000 changed resources: all kept, not truncated (no-ops do not count)", () => {
  const entries = [];
  for (let i = 0; i < MAX_RESOURCES; i++) entries.push(small(i), small(i + 100_000, ["no-op"]));
  const { artifact } = buildPlanDiff(plan(entries));
  assert.is(artifact.resources.length, 5000);
  assert.is(artifact.truncated, false);
  assert.equal(artifact.truncation, {
    max_resources: 5000,
    max_bytes: MAX_BYTES,
    changed_resources: 5000,
    cut: 0,
    withheld: 0,
    dropped: 0,
  });
});

bounds("5,001 changed resources: the last is cut before redaction, the first 5,000 in plan order kept", () => {
  const entries = [];
  for (let i = 0; i < MAX_RESOURCES; i++) entries.push(small(i));
  // The cut entry would fail closed if redaction ran on it; it must simply not be there.
  entries.push({ ...small(5000), change: { ...small(5000).change, after_sensitive: "broken" } });
  const { artifact } = buildPlanDiff(plan(entries));
  assert.is(artifact.resources.length, 5000);
  assert.is(artifact.resources[4999].address, "terraform_data.r[4999]");
  assert.is(artifact.truncated, true);
  assert.equal(artifact.truncation, {
    max_resources: 5000,
    max_bytes: MAX_BYTES,
    changed_resources: 5001,
    cut: 1,
    withheld: 0,
    dropped: 0,
  });
  assert.ok(artifact.resources.every((r) => r.detail_withheld !== true));
});

/** A plan whose artifact is exactly `target` bytes: one big resource padded to size, one small one. */
function planOfSize(target: number) {
  const big = withPadding(small(0), "blob", 1000);
  const probe = buildPlanDiff(plan([big, small(1)])).bytes;
  return plan([withPadding(small(0), "blob", 1000 + target - probe), small(1)]);
}

bounds("an artifact of exactly 4 MiB (4,194,304 bytes) is kept whole", () => {
  const { artifact, bytes } = buildPlanDiff(planOfSize(MAX_BYTES));
  assert.is(bytes, 4_194_304);
  assert.is(artifact.truncated, false);
  assert.is(artifact.resources.filter((r) => r.detail_withheld).length, 0);
});

bounds("one byte over 4 MiB: the largest resource's detail is withheld, the rest kept", () => {
  const { artifact, bytes, json } = buildPlanDiff(planOfSize(MAX_BYTES + 1));
  assert.ok(bytes <= MAX_BYTES);
  assert.is(bytes, Buffer.byteLength(json));
  assert.is(artifact.truncated, true);
  assert.equal(artifact.truncation, {
    max_resources: 5000,
    max_bytes: MAX_BYTES,
    changed_resources: 2,
    cut: 0,
    withheld: 1,
    dropped: 0,
  });
  assert.equal(
    [artifact.resources[0].detail_withheld, artifact.resources[0].withheld_reason, artifact.resources[0].after],
    [true, "size_limit", undefined],
  );
  assert.equal(
    [artifact.resources[0].address, artifact.resources[0].provider, artifact.resources[0].actions],
    ["terraform_data.r[0]", "terraform.io/builtin/terraform", ["create"]],
  );
  assert.equal(artifact.resources[1].after, { input: "v1", id: U, output: U });
});

bounds("withholding goes largest first and stops as soon as the artifact fits", () => {
  const entries = [
    withPadding(small(0), "blob", 1_500_000),
    withPadding(small(1), "blob", 2_000_000),
    withPadding(small(2), "blob", 1_000_000),
    small(3),
  ];
  const { artifact, bytes } = buildPlanDiff(plan(entries));
  assert.ok(bytes <= MAX_BYTES);
  assert.equal(
    artifact.resources.map((r) => r.withheld_reason ?? null),
    [null, "size_limit", null, null],
  );
  assert.is(artifact.truncation.withheld, 1);
});

bounds("withholding every detail is still too big: trailing resources are dropped, exactly as few as needed", () => {
  // ~1,000-byte addresses: 5,000 withheld entries alone are about 5 MB.
  const entries: Array<{ address: string; index: string }> = [];
  for (let i = 0; i < MAX_RESOURCES; i++) {
    const key = `${"k".repeat(950)}-${i}`;
    entries.push({ ...small(i), address: `terraform_data.r["${key}"]`, index: key });
  }
  const { artifact, bytes, json } = buildPlanDiff(plan(entries));
  assert.ok(bytes <= MAX_BYTES);
  assert.is(bytes, Buffer.byteLength(json));
  assert.is(artifact.truncated, true);
  const { withheld, dropped, cut } = artifact.truncation;
  assert.is(cut, 0);
  assert.ok(dropped > 0);
  assert.is(artifact.resources.length, 5000 - dropped);
  assert.is(withheld, artifact.resources.length);
  assert.ok(artifact.resources.every((r, i) => r.detail_withheld === true && r.address === entries[i].address));
  // One more (withheld) resource would not have fit.
  const next = JSON.stringify({ ...artifact.resources[0], address: entries[artifact.resources.length].address });
  assert.ok(bytes + 1 + Buffer.byteLength(next) > MAX_BYTES);
});

bounds(
  "every bound from all-withheld to whole: the fewest details withheld, counters' digits included (9 → 10)",
  () => {
    // Twelve resources of the same size (two-digit indices), so withholding goes in plan order.
    const entries = Array.from({ length: 12 }, (_, i) => withPadding(small(10 + i), "blob", 200));
    const whole = buildPlanDiff(plan(entries));
    const allWithheld =
      12 *
      Buffer.byteLength(
        JSON.stringify({
          ...whole.artifact.resources[0],
          before: undefined,
          after: undefined,
          detail_withheld: true,
          withheld_reason: "size_limit",
        }),
      );
    let sawTenWithheld = false;
    for (let maxBytes = allWithheld; maxBytes <= whole.bytes; maxBytes++) {
      const { artifact, bytes, json } = buildPlanDiff(plan(entries), { maxBytes });
      assert.is(bytes, Buffer.byteLength(json));
      assert.ok(bytes <= maxBytes);
      const { withheld, dropped } = artifact.truncation;
      if (!artifact.truncated) {
        // Whole (a few bytes below `whole.bytes`: the header's max_bytes has fewer digits here).
        assert.ok(maxBytes > whole.bytes - 7);
        assert.equal(artifact.resources, whole.artifact.resources);
        continue;
      }
      if (dropped > 0) {
        // Below what twelve withheld resources need: all withheld, the fewest dropped.
        assert.is(withheld, artifact.resources.length);
        continue;
      }
      assert.ok(withheld >= 1);
      if (withheld >= 10) sawTenWithheld = true;
      assert.ok(artifact.resources.every((r, i) => (r.withheld_reason === "size_limit") === i < withheld));
      if (withheld === 1) continue;
      // One detail fewer withheld (the header's counter one smaller too) would not have fitted.
      const fewer = {
        ...artifact,
        truncation: { ...artifact.truncation, withheld: withheld - 1 },
        resources: artifact.resources.map((r, i) => (i === withheld - 1 ? whole.artifact.resources[i] : r)),
      };
      assert.ok(Buffer.byteLength(JSON.stringify(fewer)) > maxBytes, `at ${maxBytes}`);
    }
    assert.ok(sawTenWithheld);
  },
);

bounds.run();
