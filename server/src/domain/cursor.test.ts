import { createHmac } from "node:crypto";
import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { decodeRunCursor, encodeRunCursor, MAX_CURSOR_LENGTH, type RunCursorKey } from "./cursor.ts";
import { DomainError } from "./errors.ts";
import { newId } from "./ids.ts";

const SECRET = Buffer.from("0123456789abcdef0123456789abcdef");
const OTHER_SECRET = Buffer.from("fedcba9876543210fedcba9876543210");
const KEY: RunCursorKey = { createdAt: "2026-12-01T00:00:00.000Z", id: "run-0123456789abcdef" };
const BASE64URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Signs an arbitrary payload the way the codec does, to forge well-signed but invalid cursors. */
function sign(payload: unknown, secret = SECRET): string {
  const part = Buffer.from(typeof payload === "string" ? payload : JSON.stringify(payload), "utf8").toString(
    "base64url",
  );
  return `${part}.${createHmac("sha256", secret).update(part).digest().subarray(0, 16).toString("base64url")}`;
}

function assertInvalid(token: unknown, label: string, secret = SECRET): void {
  try {
    decodeRunCursor(token as string, secret);
  } catch (error) {
    assert.instance(error, DomainError, label);
    const domainError = error as DomainError;
    assert.is(domainError.code, "RUN_LIST_CURSOR_INVALID", label);
    assert.is(domainError.kind, "invalid", label);
    assert.equal(domainError.source, { parameter: "cursor" }, label);
    return;
  }
  assert.unreachable(`${label}: decoded`);
}

const codec = suite("run cursor codec");

codec("round-trips a key", () => {
  assert.equal(decodeRunCursor(encodeRunCursor(KEY, SECRET), SECRET), KEY);
});

codec("is opaque: base64url payload, a dot, a 16-byte base64url MAC", () => {
  const token = encodeRunCursor(KEY, SECRET);
  assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
  assert.not.match(token, /2026|run-/);
  assert.equal(JSON.parse(Buffer.from(token.split(".")[0], "base64url").toString()), {
    v: 1,
    c: KEY.createdAt,
    i: KEY.id,
  });
});

codec("is deterministic and depends on the secret", () => {
  assert.is(encodeRunCursor(KEY, SECRET), encodeRunCursor(KEY, SECRET));
  assert.is.not(encodeRunCursor(KEY, SECRET), encodeRunCursor(KEY, OTHER_SECRET));
});

codec("rejects legacy and malformed cursors", () => {
  const valid = encodeRunCursor(KEY, SECRET);
  const [payload, mac] = valid.split(".");
  const cases: Array<[string, unknown]> = [
    ["bare timestamp", "2026-12-01T00:00:00Z"],
    ["bare ISO timestamp", "2026-12-01T00:00:00.000Z"],
    ["delimiter cursor", "2026-12-01T00:00:00Z|run-x"],
    ["delimiter cursor with a real id", `${KEY.createdAt}|${KEY.id}`],
    ["garbage", "not a cursor at all"],
    ["empty", ""],
    ["only a dot", "."],
    ["missing mac", `${payload}.`],
    ["missing payload", `.${mac}`],
    ["no dot", payload],
    ["extra dot at the end", `${valid}.`],
    ["extra segment", `${payload}.${mac}.${mac}`],
    ["padding", `${payload}=.${mac}`],
    ["standard base64 characters", `${payload}+/.${mac}`],
    ["whitespace", ` ${valid}`],
    ["percent-encoded", encodeURIComponent(`${payload}=`) + `.${mac}`],
    ["truncated mac", `${payload}.${mac.slice(0, 21)}`],
    ["long mac", `${payload}.${mac}AA`],
    ["oversize", `${"A".repeat(MAX_CURSOR_LENGTH)}.${mac}`],
    ["null", null],
    ["undefined", undefined],
    ["number", 42],
  ];
  for (const [label, token] of cases) assertInvalid(token, label);
});

codec("rejects a tampered payload or MAC and a foreign secret", () => {
  const valid = encodeRunCursor(KEY, SECRET);
  const [, mac] = valid.split(".");
  const otherPayload = encodeRunCursor({ ...KEY, id: "run-zzzzzzzzzzzzzzzz" }, SECRET).split(".")[0];
  assertInvalid(`${otherPayload}.${mac}`, "payload swapped under the old MAC");
  const flipped = Buffer.from(mac, "base64url");
  flipped[0] ^= 1;
  assertInvalid(`${valid.split(".")[0]}.${flipped.toString("base64url")}`, "one MAC bit flipped");
  assertInvalid(valid, "signed with another secret", OTHER_SECRET);
});

codec("rejects well-signed payloads that are not a v1 key", () => {
  const cases: Array<[string, unknown]> = [
    ["version 2", { v: 2, c: KEY.createdAt, i: KEY.id }],
    ["version as string", { v: "1", c: KEY.createdAt, i: KEY.id }],
    ["no version", { c: KEY.createdAt, i: KEY.id }],
    ["extra member", { v: 1, c: KEY.createdAt, i: KEY.id, x: 1 }],
    ["timestamp without millis", { v: 1, c: "2026-12-01T00:00:00Z", i: KEY.id }],
    ["timestamp with offset", { v: 1, c: "2026-12-01T00:00:00.000+00:00", i: KEY.id }],
    ["impossible date", { v: 1, c: "2026-02-30T00:00:00.000Z", i: KEY.id }],
    ["hour 24", { v: 1, c: "2026-12-01T24:00:00.000Z", i: KEY.id }],
    ["numeric timestamp", { v: 1, c: 1764547200000, i: KEY.id }],
    ["not a run id", { v: 1, c: KEY.createdAt, i: "ws-0123456789abcdef" }],
    ["short id", { v: 1, c: KEY.createdAt, i: "run-x" }],
    ["array", [1, KEY.createdAt, KEY.id]],
    ["null", null],
    ["string", "hello"],
  ];
  for (const [label, payload] of cases) assertInvalid(sign(payload), label);
  assertInvalid(sign("{not json"), "not JSON");
  // Sanity check of the forging helper itself.
  assert.equal(decodeRunCursor(sign({ v: 1, c: KEY.createdAt, i: KEY.id }), SECRET), KEY);
});

codec("refuses to encode a key it could not decode", () => {
  assert.throws(() => encodeRunCursor({ createdAt: "2026-12-01T00:00:00Z", id: KEY.id }, SECRET), TypeError);
  assert.throws(() => encodeRunCursor({ createdAt: KEY.createdAt, id: "run-x" }, SECRET), TypeError);
});

codec("requires a secret of at least 16 bytes", () => {
  assert.throws(() => encodeRunCursor(KEY, Buffer.from("short")), TypeError);
  assert.throws(() => decodeRunCursor(encodeRunCursor(KEY, SECRET), Buffer.alloc(0)), TypeError);
});

const keyArbitrary = fc.record({
  createdAt: fc
    .date({ min: new Date("1970-01-01T00:00:00.000Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true })
    .map((date) => date.toISOString()),
  id: fc.stringMatching(/^[0-9a-z]{16}$/).map((suffix) => `run-${suffix}`),
});

codec("round-trips any key (property)", () => {
  fc.assert(
    fc.property(keyArbitrary, (key) => {
      assert.equal(decodeRunCursor(encodeRunCursor(key, SECRET), SECRET), { ...key });
    }),
    { numRuns: 500 },
  );
});

codec("never decodes a one-character mutation (property)", () => {
  const replacement = fc.oneof(
    fc.constantFrom(...BASE64URL_ALPHABET, ".", "=", "+", "/", "|", " "),
    fc.string({ minLength: 1, maxLength: 1 }),
  );
  fc.assert(
    fc.property(keyArbitrary, fc.nat(), replacement, (key, position, character) => {
      const token = encodeRunCursor(key, SECRET);
      const index = position % token.length;
      const mutated = token.slice(0, index) + character + token.slice(index + 1);
      fc.pre(mutated !== token);
      assertInvalid(mutated, `mutation at ${index}`);
    }),
    { numRuns: 2000 },
  );
});

codec("never decodes another secret’s cursor (property)", () => {
  fc.assert(
    fc.property(keyArbitrary, fc.uint8Array({ minLength: 16, maxLength: 64 }), (key, secretBytes) => {
      const secret = Buffer.from(secretBytes);
      fc.pre(!secret.equals(SECRET));
      assertInvalid(encodeRunCursor(key, secret), "foreign secret");
    }),
    { numRuns: 200 },
  );
});

codec("accepts ids newId makes", () => {
  const key = { createdAt: new Date().toISOString(), id: newId("run") };
  assert.equal(decodeRunCursor(encodeRunCursor(key, SECRET), SECRET), { ...key });
});

codec.run();
