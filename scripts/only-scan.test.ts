// The `.only(` scanner scripts/run-tests.mjs runs over every test file before the suites.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findOnlyCalls, scanForOnly } from "./only-scan.mjs";

// Built from parts so this file does not itself hold what it looks for.
const ONLY = ".on" + "ly(";

test("finds test.only, describe.only, suite.only, it.only and a named uvu suite's .only, with lines", () => {
  const text = [
    'import { test, suite } from "uvu";',
    `test${ONLY}"a", () => {});`,
    `describe${ONLY}"b", () => {});`,
    `suite${ONLY}"c", () => {});`,
    `  it${ONLY}"d", () => {});`,
    'const recovery = suite("recovery");',
    `recovery${ONLY}"e", async () => {});`,
    "recovery .on" + 'ly ("f", async () => {});',
  ].join("\n");
  const found = findOnlyCalls(text);
  assert.equal(
    found.map((hit) => [hit.line, hit.call]),
    [
      [2, "test" + ONLY],
      [3, "describe" + ONLY],
      [4, "suite" + ONLY],
      [5, "it" + ONLY],
      [7, "recovery" + ONLY],
      [8, "recovery" + ONLY],
    ],
  );
  assert.is(found[3].column, 3);
  assert.is(found[4].text, `recovery${ONLY}"e", async () => {});`);
});

test("ignores comments, look-alike names and plain tests", () => {
  const text = [
    `// test${ONLY}"commented out", () => {});`,
    `/* describe${ONLY}"in a block comment") */ test("kept", () => {});`,
    "/*",
    ` it${ONLY}"inside a multi-line comment")`,
    "*/",
    'test("plain", () => {});',
    'test.skip("skipped", () => {});',
    "const onlyOne = items.onlyIf(x);",
    `x.only;`,
    `a.b${ONLY}"property of a property is not a runner")`,
  ].join("\n");
  assert.equal(findOnlyCalls(text), []);
});

test("a text with no test in it and an empty text have nothing", () => {
  assert.equal(findOnlyCalls(""), []);
  assert.equal(findOnlyCalls("export const only = 1;\n"), []);
});

test("scanForOnly names the file and the line", () => {
  const dir = mkdtempSync(join(tmpdir(), "ss-only-scan-"));
  try {
    writeFileSync(join(dir, "clean.test.ts"), 'test("a", () => {});\ntest.run();\n');
    writeFileSync(join(dir, "focused.test.ts"), `test("a", () => {});\n\ntest${ONLY}"b", () => {});\ntest.run();\n`);
    const problems = scanForOnly(dir, ["clean.test.ts", "focused.test.ts"]);
    assert.equal(
      problems.map((p) => `${p.file}:${p.line}: ${p.call}`),
      ["focused.test.ts:3: test" + ONLY],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
