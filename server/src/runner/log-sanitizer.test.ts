import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { LogSanitizer, REDACTED } from "./log-sanitizer.ts";

const sanitizer = suite("LogSanitizer");

sanitizer("replaces a value inside one chunk", () => {
  const s = new LogSanitizer(["hunter2-secret"]);
  assert.is(s.push("password is hunter2-secret!\n") + s.flush(), `password is ${REDACTED}!\n`);
});

sanitizer("replaces a value split across chunks at every position", () => {
  const secret = "p@ss-Wörd-123";
  const text = `a ${secret} b ${secret}`;
  for (let i = 0; i <= text.length; i++) {
    const s = new LogSanitizer([secret]);
    const out = s.push(text.slice(0, i)) + s.push(text.slice(i)) + s.flush();
    assert.is(out, `a ${REDACTED} b ${REDACTED}`, `split at ${i}`);
  }
});

sanitizer("replaces the JSON-escaped spelling too", () => {
  const s = new LogSanitizer(['say "hi"\\now']);
  assert.is(s.push('value: "say \\"hi\\"\\\\now"') + s.flush(), `value: "${REDACTED}"`);
});

sanitizer("replaces the longer of two overlapping values whole", () => {
  const s = new LogSanitizer(["abc", "abcdef"]);
  assert.is(s.push("xabcdefx abc") + s.flush(), `x${REDACTED}x ${REDACTED}`);
});

sanitizer("no secrets: text passes through unchanged and nothing is held back", () => {
  const s = new LogSanitizer([]);
  assert.is(s.push("hello"), "hello");
  assert.is(s.flush(), "");
});

sanitizer("property: no secret survives any chunking", () => {
  fc.assert(
    fc.property(
      // Digits only, fillers letters only: the marker itself can never spell a secret.
      fc.stringMatching(/^[0-9]{4,12}$/),
      fc.array(fc.stringMatching(/^[a-z ]{0,8}$/), { maxLength: 6 }),
      fc.array(fc.nat(), { maxLength: 5 }),
      (secret, fillers, cuts) => {
        const text = fillers.join(secret);
        const s = new LogSanitizer([secret]);
        let out = "";
        let at = 0;
        for (const cut of [...cuts].sort((a, b) => a - b)) {
          const end = Math.min(text.length, at + (cut % 7));
          out += s.push(text.slice(at, end));
          at = end;
        }
        out += s.push(text.slice(at)) + s.flush();
        assert.not.ok(out.includes(secret), JSON.stringify({ secret, text, out }));
      },
    ),
    { numRuns: 300 },
  );
});

sanitizer.run();
