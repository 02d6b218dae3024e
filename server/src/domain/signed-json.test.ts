import { createHmac } from "node:crypto";
import fc from "fast-check";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openSignedJson, signJson } from "./signed-json.ts";

const KEY = Buffer.alloc(32, 1);
const OTHER_KEY = Buffer.alloc(32, 2);
const LABEL = "stackship/test/v1:";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

test("round-trips a JSON object under its key and label, and only there", () => {
  const token = signJson({ a: 1, b: "two" }, KEY, LABEL);
  assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
  assert.equal(openSignedJson(token, KEY, LABEL), { a: 1, b: "two" });
  assert.is(openSignedJson(token, OTHER_KEY, LABEL), undefined, "another key");
  assert.is(openSignedJson(token, KEY, "stackship/other/v1:"), undefined, "another label");
  assert.is(openSignedJson(token, KEY, ""), undefined, "no label");
  assert.is(openSignedJson(token, KEY, LABEL, token.length - 1), undefined, "one character over the limit");
  assert.equal(openSignedJson(token, KEY, LABEL, token.length), { a: 1, b: "two" }, "exactly at the limit");
});

test("refuses well-signed payloads that are not a JSON object", () => {
  assert.equal(openSignedJson(signText('{"p":1}'), KEY, LABEL), { p: 1 }, "the documented format opens");
  for (const text of ["[1]", "null", "42", '"s"', "{", "x"]) {
    assert.is(openSignedJson(signText(text), KEY, LABEL), undefined, text);
  }
});

test("every other spelling of a valid token is refused, including the ones Buffer.from would accept", () => {
  fc.assert(
    fc.property(
      fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer())),
      fc.nat(),
      fc.constantFrom(...ALPHABET),
      (value, at, replacement) => {
        const token = signJson(value, KEY, LABEL);
        const index = at % token.length;
        if (token[index] === "." || token[index] === replacement) return;
        const changed = `${token.slice(0, index)}${replacement}${token.slice(index + 1)}`;
        assert.is(openSignedJson(changed, KEY, LABEL), undefined, changed);
      },
    ),
    { numRuns: 2000 },
  );
});

test("a MAC whose last character differs only in unused bits is refused", () => {
  const token = signJson({ p: 1 }, KEY, LABEL);
  const last = ALPHABET.indexOf(token.at(-1)!);
  // 16 bytes are 22 base64url characters; only the top 2 bits of the last one carry data.
  const sameBytes = `${token.slice(0, -1)}${ALPHABET[last ^ 1]}`;
  assert.equal(
    Buffer.from(sameBytes.split(".")[1], "base64url"),
    Buffer.from(token.split(".")[1], "base64url"),
    "Buffer.from decodes both spellings to the same MAC",
  );
  assert.is(openSignedJson(sameBytes, KEY, LABEL), undefined);
});

test("refuses values that are not a token", () => {
  const token = signJson({ p: 1 }, KEY, LABEL);
  const [payload, mac] = token.split(".");
  for (const bad of [undefined, null, 42, "", ".", `${payload}.`, `.${mac}`, payload, `${token}.`, ` ${token}`]) {
    assert.is(openSignedJson(bad, KEY, LABEL), undefined, String(bad));
  }
  assert.is(openSignedJson(`${payload}=.${mac}`, KEY, LABEL), undefined, "padding");
});

/** Signs a raw payload text the documented way (HMAC-SHA256 over label + payload part, 16 bytes). */
function signText(text: string): string {
  const part = Buffer.from(text, "utf8").toString("base64url");
  return `${part}.${createHmac("sha256", KEY).update(`${LABEL}${part}`).digest().subarray(0, 16).toString("base64url")}`;
}

test.run();
