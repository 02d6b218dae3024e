import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildPlanDiff } from "./plan-diff.mjs";

// Random nested values with a sensitivity flag and an unknown flag per node, encoded the way
// OpenTofu's encoder does (plan-json.md §3.1, §3.3), then fed through the builder.

type Shape =
  | { s: boolean; u: boolean; kind: "leaf"; leaf: string | number | boolean | null }
  | { s: boolean; u: boolean; kind: "arr"; items: Shape[] }
  | { s: boolean; u: boolean; kind: "obj"; entries: Array<[string, Shape]> };

const KEYS = [
  "a",
  "b",
  "id",
  "tags",
  "$x",
  "$stackship",
  "constructor",
  "__proto__",
  "toString",
  "password",
  "DB_PASSWORD",
];

const { node } = fc.letrec<{ node: Shape; leaf: Shape; arr: Shape; obj: Shape }>((tie) => ({
  node: fc.oneof({ maxDepth: 4, depthSize: "small", withCrossShrink: true }, tie("leaf"), tie("arr"), tie("obj")),
  leaf: fc.record({
    s: fc.boolean(),
    u: fc.boolean(),
    kind: fc.constant("leaf" as const),
    leaf: fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null)),
  }),
  arr: fc.record({
    s: fc.boolean(),
    u: fc.boolean(),
    kind: fc.constant("arr" as const),
    items: fc.array(tie("node"), { maxLength: 4 }),
  }),
  obj: fc.record({
    s: fc.boolean(),
    u: fc.boolean(),
    kind: fc.constant("obj" as const),
    entries: fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), tie("node")), { maxLength: 5, selector: ([k]) => k }),
  }),
}));
// Flags are rare enough that most trees have visible parts.
const root = fc
  .tuple(
    fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), node), { minLength: 1, maxLength: 6, selector: ([k]) => k }),
    fc.integer({ min: 0, max: 2 ** 30 }),
  )
  .map(([entries, seed]): { shape: Shape; seed: number } => ({
    shape: { s: false, u: false, kind: "obj", entries },
    seed,
  }));

function set(o: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Sparse flags: a deterministic thinning so that roughly one node in six is sensitive or unknown. */
function thin(shape: Shape, seed: number, path = "r"): Shape {
  let h = seed;
  for (const c of path) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  const s = shape.s && h % 6 === 0;
  const u = shape.u && (h >>> 3) % 6 === 0;
  if (shape.kind === "arr") return { ...shape, s, u, items: shape.items.map((n, i) => thin(n, seed, `${path}[${i}]`)) };
  if (shape.kind === "obj")
    return { ...shape, s, u, entries: shape.entries.map(([k, n]) => [k, thin(n, seed, `${path}.${k}`)]) };
  return { ...shape, s, u };
}

interface Encoded {
  before: unknown;
  beforeSensitive: unknown;
  after: unknown;
  afterSensitive: unknown;
  afterUnknown: unknown;
  canaries: string[];
  /** Paths (as key/index lists) that are unknown with no sensitive ancestor. */
  unknownPaths: Array<Array<string | number>>;
}

function encode(shape: Shape): Encoded {
  const canaries: string[] = [];
  const unknownPaths: Array<Array<string | number>> = [];
  let n = 0;
  // A value with every leaf under a sensitive node replaced by a fresh canary.
  const value = (x: Shape, secret: boolean, side: "before" | "after"): unknown => {
    const hidden = secret || x.s;
    if (x.kind === "leaf") {
      if (!hidden) return typeof x.leaf === "string" ? `v:${x.leaf}` : x.leaf;
      const canary = `CANARY${side}${n++}Z`;
      canaries.push(canary);
      return canary;
    }
    if (x.kind === "arr") return x.items.map((i) => value(i, hidden, side));
    const o: Record<string, unknown> = {};
    for (const [k, c] of x.entries) set(o, k, value(c, hidden, side));
    return o;
  };
  const sensMask = (x: Shape): unknown => {
    if (x.s) return true;
    if (x.kind === "leaf") return false;
    if (x.kind === "arr") return x.items.map(sensMask);
    const o: Record<string, unknown> = {};
    for (const [k, c] of x.entries) {
      const m = sensMask(c);
      if (m !== false) set(o, k, m);
    }
    return o;
  };
  // After: unknown nodes leave their key out of objects and become null in arrays.
  const afterValue = (x: Shape, secret: boolean): unknown => {
    const hidden = secret || x.s;
    if (x.kind === "leaf") return value(x, secret, "after");
    if (x.kind === "arr") return x.items.map((i) => (i.u ? null : afterValue(i, hidden)));
    const o: Record<string, unknown> = {};
    for (const [k, c] of x.entries) if (!c.u) set(o, k, afterValue(c, hidden));
    return o;
  };
  const unkMask = (x: Shape): unknown => {
    if (x.u) return true;
    if (x.kind === "leaf") return false;
    if (x.kind === "arr") return x.items.map(unkMask);
    const o: Record<string, unknown> = {};
    for (const [k, c] of x.entries) {
      const m = unkMask(c);
      if (m !== false) set(o, k, m);
    }
    return o;
  };
  const collect = (x: Shape, path: Array<string | number>) => {
    if (x.u) {
      unknownPaths.push(path);
      return;
    }
    if (x.s) return;
    if (x.kind === "arr") x.items.forEach((c, i) => collect(c, [...path, i]));
    if (x.kind === "obj") for (const [k, c] of x.entries) collect(c, [...path, k]);
  };
  collect(shape, []);
  return {
    before: value({ ...shape }, false, "before"),
    beforeSensitive: sensMask(shape),
    after: afterValue(shape, false),
    afterSensitive: sensMask(shape),
    afterUnknown: unkMask(shape),
    canaries,
    unknownPaths,
  };
}

/** The plan JSON these properties build: one resource change. */
interface PlanJson {
  format_version: string;
  terraform_version: string;
  resource_changes: Array<{
    address: string;
    mode: string;
    type: string;
    name: string;
    provider_name: string;
    change: Record<string, unknown>;
  }>;
}

/** Through JSON text, as the builder really receives it. */
function planOf(e: Encoded, overrides: Record<string, unknown> = {}): PlanJson {
  const change = {
    actions: ["update"],
    before: e.before,
    after: e.after,
    after_unknown: e.afterUnknown,
    before_sensitive: e.beforeSensitive,
    after_sensitive: e.afterSensitive,
    ...overrides,
  };
  return JSON.parse(
    JSON.stringify({
      format_version: "1.2",
      terraform_version: "1.12.6",
      resource_changes: [{ address: "x.y", mode: "managed", type: "x", name: "y", provider_name: "p", change }],
    }),
  ) as PlanJson;
}

const escape = (k: string | number) => (typeof k === "string" && k.startsWith("$") ? `$${k}` : k);

/** The `$stackship` member of a value (a marker's kind), or undefined. */
const markerOf = (value: unknown): unknown =>
  value !== null && typeof value === "object" ? (value as { $stackship?: unknown }).$stackship : undefined;

const properties = suite("plan-diff: properties over random values and masks");

properties("no value under a sensitive mask appears anywhere in the artifact", () => {
  fc.assert(
    fc.property(root, ({ shape, seed }) => {
      const e = encode(thin(shape, seed));
      const { json } = buildPlanDiff(planOf(e));
      for (const canary of e.canaries) if (json.includes(canary)) return false;
      assert.not.match(json, "CANARY");
      return true;
    }),
    { numRuns: 400 },
  );
});

properties("every unknown position is marked (or covered by a sensitive ancestor); nothing else is", () => {
  fc.assert(
    fc.property(root, ({ shape, seed }) => {
      const thinned = thin(shape, seed);
      const e = encode(thinned);
      const r = buildPlanDiff(planOf(e)).artifact.resources[0];
      assert.is(r.detail_withheld, undefined);
      for (const path of e.unknownPaths) {
        let at: unknown = r.after;
        for (const step of path) {
          if (markerOf(at) === "sensitive") break;
          at = (at as Record<string | number, unknown>)[escape(step)];
        }
        if (markerOf(at) !== "sensitive") assert.is(markerOf(at), "unknown", `at ${JSON.stringify(path)}`);
      }
      const markers = JSON.stringify(r.after).split('"$stackship":"unknown"').length - 1;
      assert.is(markers, e.unknownPaths.length);
    }),
    { numRuns: 400 },
  );
});

/** Every position in a value (a path and the value there). */
function positions(
  v: unknown,
  path: Array<string | number> = [],
): Array<{ path: Array<string | number>; value: unknown }> {
  const out = [{ path, value: v }];
  if (Array.isArray(v)) v.forEach((c, i) => out.push(...positions(c, [...path, i])));
  else if (v !== null && typeof v === "object")
    for (const k of Object.keys(v)) out.push(...positions((v as Record<string, unknown>)[k], [...path, k]));
  return out;
}

/** Replaces the mask node at `path` (creating object members on the way), never below a `true`. */
function corrupt(mask: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  if (mask === true) return undefined;
  const [step, ...rest] = path;
  if (typeof step === "number") {
    if (!Array.isArray(mask)) return undefined;
    const copy = mask.slice();
    const inner = corrupt(copy[step], rest, replacement);
    if (inner === undefined) return undefined;
    copy[step] = inner;
    return copy;
  }
  const base =
    mask !== null && typeof mask === "object" && !Array.isArray(mask)
      ? mask
      : mask === false || mask === undefined
        ? {}
        : undefined;
  if (base === undefined) return undefined;
  const copy: Record<string, unknown> = {};
  for (const k of Object.keys(base)) set(copy, k, (base as Record<string, unknown>)[k]);
  const inner = corrupt(
    Object.prototype.hasOwnProperty.call(base, step) ? (base as Record<string, unknown>)[step] : undefined,
    rest,
    replacement,
  );
  if (inner === undefined) return undefined;
  set(copy, step, inner);
  return copy;
}

properties("every unresolvable mask withholds the resource (and leaks nothing)", () => {
  fc.assert(
    fc.property(
      root,
      fc.nat(),
      fc.constantFrom("B1", "B2", "B3", "B4"),
      fc.constantFrom("before", "after"),
      ({ shape, seed }, pick, defect, side) => {
        const e = encode(thin(shape, seed));
        const value = side === "before" ? e.before : e.after;
        const mask = side === "before" ? e.beforeSensitive : e.afterSensitive;
        // Positions the walk reaches: a non-null value with no sensitive mask on or above it.
        const candidates = positions(value).filter(({ path, value: v }) => {
          if (v === null) return false;
          let m: unknown = mask;
          for (const step of path) {
            if (m === true) return false;
            m = m !== null && typeof m === "object" ? (m as Record<string | number, unknown>)[step] : undefined;
          }
          return m !== true;
        });
        const target = candidates[pick % candidates.length];
        let replacement: unknown;
        if (defect === "B4")
          replacement = fc.sample(fc.constantFrom("yes", 1, null, "true"), { numRuns: 1, seed: pick })[0];
        else if (defect === "B1")
          replacement = Array.isArray(target.value) || typeof target.value !== "object" ? {} : undefined;
        else if (defect === "B2") replacement = !Array.isArray(target.value) ? [] : undefined;
        else replacement = Array.isArray(target.value) ? new Array(target.value.length + 1).fill(false) : undefined;
        if (replacement === undefined) return true; // this defect does not apply to this position
        const broken = corrupt(mask, target.path, replacement);
        if (broken === undefined) return true;
        const { json, artifact } = buildPlanDiff(
          planOf(e, { [side === "before" ? "before_sensitive" : "after_sensitive"]: broken }),
        );
        const r = artifact.resources[0];
        assert.equal(
          [r.detail_withheld, r.withheld_reason, r.before, r.after],
          [true, "unresolvable_masks", undefined, undefined],
        );
        assert.not.match(json, "CANARY");
        assert.not.match(json, "v:");
        return true;
      },
    ),
    { numRuns: 400 },
  );
});

properties("an unknown mask that contradicts the value, or has a non-boolean leaf, withholds the resource", () => {
  fc.assert(
    fc.property(root, fc.nat(), fc.constantFrom("known-marked-unknown", "B4"), ({ shape, seed }, pick, defect) => {
      const e = encode(thin(shape, seed));
      // Positions of `after` the walk reaches: a non-null value with no sensitive mask on or above it.
      const candidates = positions(e.after).filter(({ path, value: v }) => {
        if (v === null || path.length === 0) return false;
        let m: unknown = e.afterSensitive;
        for (const step of path) {
          if (m === true) return false;
          m = m !== null && typeof m === "object" ? (m as Record<string | number, unknown>)[step] : undefined;
        }
        return m !== true;
      });
      if (candidates.length === 0) return true;
      const target = candidates[pick % candidates.length];
      const broken = corrupt(e.afterUnknown, target.path, defect === "B4" ? "yes" : true);
      if (broken === undefined) return true;
      const { json, artifact } = buildPlanDiff(planOf(e, { after_unknown: broken }));
      assert.is(artifact.resources[0].withheld_reason, "unresolvable_masks");
      assert.not.match(json, "CANARY");
      return true;
    }),
    { numRuns: 300 },
  );
});

properties("a missing mask beside a non-null value withholds (B5)", () => {
  fc.assert(
    fc.property(
      root,
      fc.constantFrom("before_sensitive", "after_sensitive", "after_unknown"),
      ({ shape, seed }, which) => {
        const e = encode(thin(shape, seed));
        const plan = planOf(e);
        delete plan.resource_changes[0].change[which];
        const r = buildPlanDiff(plan).artifact.resources[0];
        assert.is(r.withheld_reason, "unresolvable_masks");
      },
    ),
    { numRuns: 100 },
  );
});

properties.run();
