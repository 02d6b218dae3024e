import { test } from "uvu";
import * as assert from "uvu/assert";
import { signToken, verifyToken, type TokenPurpose } from "./signed-tokens.ts";

const KEY = Buffer.alloc(32, 7);
const OTHER_KEY = Buffer.alloc(32, 8);
// A whole second, so the token's exp is exactly this instant.
const EXPIRES = new Date("2026-12-03T15:00:00.000Z");
const BEFORE = new Date("2026-12-03T14:00:00.000Z");
const PURPOSES: TokenPurpose[] = ["configuration-upload", "state-upload", "state-json-upload", "log-read"];

const token = (
  purpose: TokenPurpose = "configuration-upload",
  claims: Record<string, string> = { cv: "cv-1" },
  expiresAt = EXPIRES,
  key = KEY,
) => signToken(key, purpose, claims, expiresAt);

test("a token verifies for its purpose with its key and gives back exactly the named claims", () => {
  assert.equal(verifyToken(KEY, "configuration-upload", token(), ["cv"], BEFORE), { cv: "cv-1" });
  const log = signToken(KEY, "log-read", { run: "run-1", phase: "plan" }, EXPIRES);
  assert.equal(verifyToken(KEY, "log-read", log, ["run", "phase"], BEFORE), { run: "run-1", phase: "plan" });
  assert.match(log, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
});

test("a token for one purpose is refused for every other purpose, claims and key alike", () => {
  for (const minted of PURPOSES) {
    const t = token(minted, { cv: "x", sv: "x", run: "x", phase: "plan" });
    for (const used of PURPOSES) {
      const claims = verifyToken(KEY, used, t, ["cv"], BEFORE);
      if (used === minted) assert.equal(claims, { cv: "x" }, `${minted} for itself`);
      else assert.is(claims, null, `${minted} used as ${used}`);
    }
  }
});

test("expiry: accepted through the exact expiry second, refused from the next millisecond", () => {
  const t = token();
  assert.ok(verifyToken(KEY, "configuration-upload", t, ["cv"], new Date(EXPIRES.getTime() - 1)));
  assert.ok(verifyToken(KEY, "configuration-upload", t, ["cv"], EXPIRES));
  assert.is(verifyToken(KEY, "configuration-upload", t, ["cv"], new Date(EXPIRES.getTime() + 1)), null);
  assert.is(verifyToken(KEY, "configuration-upload", t, ["cv"], new Date(EXPIRES.getTime() + 1000)), null);
});

test("expiry is floored to the second: an expiry 999 ms past a second ends at that second", () => {
  const t = token("configuration-upload", { cv: "cv-1" }, new Date(EXPIRES.getTime() + 999));
  assert.ok(verifyToken(KEY, "configuration-upload", t, ["cv"], EXPIRES));
  assert.is(verifyToken(KEY, "configuration-upload", t, ["cv"], new Date(EXPIRES.getTime() + 1)), null);
});

test("a tampered payload or signature is refused", () => {
  const t = token();
  const [payload, signature] = t.split(".") as [string, string];
  const forged = Buffer.from(JSON.stringify({ cv: "cv-2", exp: EXPIRES.getTime() / 1000 })).toString("base64url");
  assert.is(verifyToken(KEY, "configuration-upload", `${forged}.${signature}`, ["cv"], BEFORE), null);
  const extended = Buffer.from(JSON.stringify({ cv: "cv-1", exp: EXPIRES.getTime() / 1000 + 3600 })).toString(
    "base64url",
  );
  assert.is(verifyToken(KEY, "configuration-upload", `${extended}.${signature}`, ["cv"], BEFORE), null);
  for (let i = 0; i < signature.length; i++) {
    const flipped = signature.slice(0, i) + (signature[i] === "A" ? "B" : "A") + signature.slice(i + 1);
    assert.is(
      verifyToken(KEY, "configuration-upload", `${payload}.${flipped}`, ["cv"], BEFORE),
      null,
      `signature char ${i}`,
    );
  }
  for (const bad of [
    "",
    ".",
    payload,
    `${payload}.`,
    `.${signature}`,
    `${t}.x`,
    `${payload}.${signature.slice(1)}`,
    `${payload}.${signature}A`,
  ]) {
    assert.is(verifyToken(KEY, "configuration-upload", bad, ["cv"], BEFORE), null, bad);
  }
});

test("a token signed with another key is refused", () => {
  assert.is(
    verifyToken(
      KEY,
      "configuration-upload",
      token("configuration-upload", { cv: "cv-1" }, EXPIRES, OTHER_KEY),
      ["cv"],
      BEFORE,
    ),
    null,
  );
  assert.is(verifyToken(OTHER_KEY, "configuration-upload", token(), ["cv"], BEFORE), null);
});

test("a claim that is missing or not a string is refused; exp cannot be a claim", () => {
  assert.is(verifyToken(KEY, "configuration-upload", token(), ["cv", "sv"], BEFORE), null);
  assert.is(verifyToken(KEY, "configuration-upload", token(), ["exp"], BEFORE), null);
  assert.throws(() => signToken(KEY, "log-read", { exp: "9999999999" }, EXPIRES), /exp/);
});

test.run();
