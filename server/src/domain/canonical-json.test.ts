import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { canonicalize, sha256Hex } from "./canonical-json.ts";

/** Rebuilds a JSON value with every object's keys in a seed-determined random order. */
function shuffleKeys(value: unknown, random: () => number): unknown {
  if (Array.isArray(value)) return value.map((item) => shuffleKeys(item, random));
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value);
  for (let index = entries.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [entries[index], entries[other]] = [entries[other], entries[index]];
  }
  // fromEntries defines own properties, so a generated "__proto__" key stays a plain key.
  return Object.fromEntries(entries.map(([key, item]) => [key, shuffleKeys(item, random)]));
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const canonical = suite("canonicalize");

canonical("sorts keys at every depth, keeps array order, has no whitespace", () => {
  assert.is(
    canonicalize({ b: 1, a: [3, 1, { d: true, c: null }], "a b": "x y" }),
    '{"a":[3,1,{"c":null,"d":true}],"a b":"x y","b":1}',
  );
});

canonical("sorts keys by UTF-16 code units, not code points or locale", () => {
  // U+1F600 is the surrogate pair D83D DE00, which sorts before U+FF5E by code unit.
  assert.is(canonicalize({ "\uFF5E": 1, "\u{1F600}": 2, Z: 3, a: 4, é: 5 }), '{"Z":3,"a":4,"é":5,"😀":2,"～":1}');
});

canonical("omits undefined members like JSON.stringify", () => {
  assert.is(canonicalize({ a: undefined, b: 2 }), '{"b":2}');
});

canonical("encodes scalars as JSON does", () => {
  assert.is(canonicalize('line\n"quoted"'), JSON.stringify('line\n"quoted"'));
  assert.is(canonicalize(-0), "0");
  assert.is(canonicalize(1e21), "1e+21");
  assert.is(canonicalize(0.1), "0.1");
  assert.is(canonicalize(null), "null");
  assert.is(canonicalize(false), "false");
  assert.is(canonicalize([]), "[]");
  assert.is(canonicalize({}), "{}");
  assert.is(canonicalize(Object.create(null) as object), "{}");
});

canonical("throws on values without one obvious encoding", () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  for (const [label, value] of [
    ["NaN", { a: Number.NaN }],
    ["Infinity", [Number.POSITIVE_INFINITY]],
    ["-Infinity", Number.NEGATIVE_INFINITY],
    ["bigint", { a: 1n }],
    ["function", { a: () => 1 }],
    ["symbol", { a: Symbol("x") }],
    ["undefined at top level", undefined],
    ["undefined in an array", [1, undefined]],
    ["Date", { a: new Date(0) }],
    ["Map", new Map()],
    ["Buffer", Buffer.from("x")],
    ["cycle", cyclic],
  ] as const) {
    assert.throws(() => canonicalize(value), TypeError, label);
  }
});

canonical("allows the same object twice when it is not a cycle", () => {
  const shared = { x: 1 };
  assert.is(canonicalize({ a: shared, b: [shared] }), '{"a":{"x":1},"b":[{"x":1}]}');
});

canonical("is stable under key order (property)", () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.integer(), (value, seed) => {
      const shuffled = shuffleKeys(value, mulberry32(seed));
      assert.is(canonicalize(shuffled), canonicalize(value));
      assert.is(sha256Hex(canonicalize(shuffled)), sha256Hex(canonicalize(value)));
    }),
    { numRuns: 300 },
  );
});

canonical("round-trips through JSON.parse (property)", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const text = canonicalize(value);
      assert.is(canonicalize(JSON.parse(text)), text);
      // Same members as JSON.stringify, only the order may differ.
      assert.equal(JSON.parse(text), JSON.parse(JSON.stringify(value)));
    }),
    { numRuns: 300 },
  );
});

const sha = suite("sha256Hex");

sha("matches the FIPS 180-2 test vector for strings and bytes", () => {
  const expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  assert.is(sha256Hex("abc"), expected);
  assert.is(sha256Hex(Buffer.from("abc")), expected);
  assert.is(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
});

sha("hashes strings as UTF-8", () => {
  assert.is(sha256Hex("é"), sha256Hex(Buffer.from([0xc3, 0xa9])));
});

canonical.run();
sha.run();
