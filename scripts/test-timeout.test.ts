// The per-test timeout (scripts/test-timeout.cjs) against a real uvu process: a hung test fails
// naming its suite and title, the tests after it still run, and the process ends.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

function uvu(dir: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  const args = ["-r", "tsx", "-r", join(root, "scripts/test-timeout.cjs"), dir, "\\.fixture\\.ts$"];
  return new Promise((resolve) => {
    execFile(
      join(root, "node_modules/.bin/uvu"),
      args,
      { cwd: root, env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, output: stdout + stderr });
      },
    );
  });
}

function fixture(source: string): string {
  mkdirSync(join(root, ".stackship-test"), { recursive: true });
  const dir = mkdtempSync(join(root, ".stackship-test", "timeout-"));
  writeFileSync(join(dir, "case.fixture.ts"), source);
  return dir;
}

test("a hung test fails with its suite and title, the next test runs, the process ends", async () => {
  const dir = fixture(`
import { suite } from "uvu";
import * as assert from "uvu/assert";
const t = suite("hanging", { timeoutSeconds: 1 });
t("before it", () => assert.ok(true));
t("never settles", () => new Promise(() => { setInterval(() => {}, 1000); }));
t("after it", () => assert.ok(true));
t.run();
`);
  try {
    const { code, output } = await uvu(dir);
    assert.is(code, 1, output);
    assert.match(output, /timed out after 1 s: "hanging" › "never settles"/);
    assert.match(output, /Total:\s+3/);
    assert.match(output, /Passed:\s+2/);
    assert.match(output, /1 test\(s\) or hook\(s\) timed out/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a hook counts too; STACKSHIP_TEST_TIMEOUT_SECONDS sets the default; quick tests pass", async () => {
  const dir = fixture(`
import { suite } from "uvu";
import * as assert from "uvu/assert";
const hooked = suite("hung hook");
hooked.before(() => new Promise(() => { setInterval(() => {}, 1000); }));
hooked("would pass", () => assert.ok(true));
hooked.run();
const quick = suite("quick");
quick("settles in 50 ms", async () => { await new Promise((r) => setTimeout(r, 50)); });
quick.run();
`);
  try {
    const { code, output } = await uvu(dir, { STACKSHIP_TEST_TIMEOUT_SECONDS: "1" });
    assert.is(code, 1, output);
    assert.match(output, /\[test\] timed out after 1 s: "hung hook" › its before hook/);
    assert.match(output, /Total:\s+2/);
    assert.match(output, /Passed:\s+1/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("without a timeout nothing changes: all pass, exit 0; the file's time is printed", async () => {
  const dir = fixture(`
import { suite } from "uvu";
import * as assert from "uvu/assert";
const t = suite("plain", { timeoutSeconds: 5 });
t("one", async () => { await new Promise((r) => setTimeout(r, 20)); assert.ok(true); });
t.run();
`);
  try {
    const { code, output } = await uvu(dir);
    assert.is(code, 0, output);
    assert.match(output, /Passed:\s+1/);
    assert.not.match(output, /timed out/);
    // The file's time, after uvu's summary: at least the 20 ms the test waited.
    const seconds = Number(/\[test-duration\] (\d+\.\d) case\.fixture\.ts\n/.exec(output)?.[1]);
    assert.ok(seconds >= 0 && seconds < 5, output);
    assert.ok(output.indexOf("[test-duration]") > output.indexOf("Duration:"), output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
