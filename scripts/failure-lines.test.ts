import { test } from "uvu";
import * as assert from "uvu/assert";
import { failedTests } from "./failure-lines.mjs";

// uvu's own output for two files, one with two failures (taken from a real run, NO_COLOR=1).
const output = [
  "server/test/api/a.test.ts",
  " my suite  • ✘ ✘   (1 / 3)",
  "",
  '   FAIL  my suite  "fails here"',
  "    one is not two  (is)",
  "",
  "        ++2    (Expected)",
  "        --1    (Actual)",
  "        ",
  "    at assert (file:///work/main/node_modules/uvu/assert/index.mjs:33:8)",
  "    at Object.handler (/work/main/server/test/api/a.test.ts:5:32)",
  "",
  "",
  '   FAIL  my suite  "throws"',
  "    boom",
  "second line",
  "    at Object.handler (/work/main/server/test/api/a.test.ts:6:27)",
  "",
  "web/test/e2e/b.test.ts",
  " other  • •   (2 / 2)",
  "",
  "  Total:     5",
  "  Passed:    3",
].join("\n");

test("failedTests names each failed test with its file, suite and message, without the stack", () => {
  assert.equal(failedTests(output), [
    {
      file: "server/test/api/a.test.ts",
      suite: "my suite",
      title: "fails here",
      message: ["one is not two  (is)", "++2    (Expected)", "--1    (Actual)"],
    },
    { file: "server/test/api/a.test.ts", suite: "my suite", title: "throws", message: ["boom", "second line"] },
  ]);
});

test("failedTests keeps at most the given number of message lines, and finds nothing in a clean run", () => {
  assert.equal(failedTests(output, 1)[0].message, ["one is not two  (is)"]);
  assert.equal(failedTests("server/test/x.test.ts\n x  • •   (2 / 2)\n  Total:     2\n  Passed:    2\n"), []);
});

test("failedTests reads a failure of uvu's unnamed default suite", () => {
  const unnamed =
    'ports.test.ts\n   FAIL  "skips a taken port"\n    Expected values not to be strictly equal  (is.not)\n    at x\n';
  assert.equal(failedTests(unnamed), [
    {
      file: "ports.test.ts",
      suite: "",
      title: "skips a taken port",
      message: ["Expected values not to be strictly equal  (is.not)"],
    },
  ]);
});

test("failedTests reads through colour codes", () => {
  const coloured =
    'a.test.ts\n\u001b[31m   FAIL \u001b[39m my suite  "t"\n    \u001b[1mwhy\u001b[22m\n    at x (a.ts:1:1)\n';
  assert.equal(failedTests(coloured), [{ file: "a.test.ts", suite: "my suite", title: "t", message: ["why"] }]);
});

test.run();

// @web/test-runner's static output for one file with two failures (taken from a real run, NO_COLOR=1).
const wtrOutput = [
  "Running 2 test files...",
  "",
  "\u001b[2K\u001b[1A\u001b[2K\u001b[Gweb/src/zz.test.ts:",
  "",
  " 🚧 Browser logs:",
  "      Lit is in dev mode. Not recommended for production!",
  "",
  " ❌ top-level fails",
  "      Error: Timeout of 10000ms exceeded.",
  "        at createTimeoutError (__web-test-runner__/test-framework/autorun.js:1:191373)",
  "",
  " ❌ outer > inner > should fail on purpose",
  "      Error: one is two: expected 2, got 1",
  "",
  "Chromium: |███████████████               | 1/2 test files | 1 passed, 2 failed",
  "",
  "Finished running tests in 16.1s with 2 failed tests.",
].join("\n");

test("failedTests reads @web/test-runner's failures: the file, the describe path, the message", () => {
  assert.equal(failedTests(wtrOutput), [
    {
      file: "web/src/zz.test.ts",
      suite: "",
      title: "top-level fails",
      message: ["Error: Timeout of 10000ms exceeded."],
    },
    {
      file: "web/src/zz.test.ts",
      suite: "outer > inner",
      title: "should fail on purpose",
      message: ["Error: one is two: expected 2, got 1"],
    },
  ]);
});
