// The run's clock and its interrupt against real bubblewrap (sandbox/run.ts): the wall-clock limit
// (SIGTERM, then SIGKILL after the grace) and an abort (SIGINT, then SIGTERM), before and during
// the command.
import { readdirSync, readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { SandboxOptions } from "./sandbox.ts";
import { attemptDirectoryPerCase, runCollecting, type CollectedResult } from "./sandbox-test-support.ts";

const test = suite("sandbox: timeout and abort");
const tmpDir = attemptDirectoryPerCase(test, "stackship-sandbox-signals-");

/** Runs in the sandbox, collecting stdout as text; attempts live under the case's directory. */
const run = (options: SandboxOptions): Promise<CollectedResult> => runCollecting({ tmpDir: tmpDir(), ...options });

test("timeout: SIGTERM at the wall-clock limit, promptly", async () => {
  const started = Date.now();
  const result = await run({ argv: ["sleep", "30"], timeoutMs: 500 });
  const elapsed = Date.now() - started;
  assert.ok(result.timedOut);
  assert.not.ok(result.interrupted);
  assert.not.ok(result.killed);
  assert.is(result.signal, "SIGTERM");
  assert.is(result.exitCode, null);
  assert.ok(elapsed < 2500, `took ${elapsed} ms`);
});

test("timeout: a command that ignores SIGTERM is killed after the grace period", async () => {
  const started = Date.now();
  // Ignored signals stay ignored across exec, so sleep ignores TERM and INT too.
  const marker = `30.${Date.now() % 1000}17`;
  // The limit leaves the shell time to install its trap even on a loaded machine (a SIGTERM that
  // arrives before the trap ends it with SIGTERM, which is not what this case is about).
  const result = await run({
    argv: ["sh", "-c", `trap "" TERM INT; sleep ${marker}`],
    timeoutMs: 1500,
    killGraceMs: 300,
  });
  const elapsed = Date.now() - started;
  assert.ok(result.timedOut);
  assert.ok(result.killed);
  assert.is(result.signal, "SIGKILL");
  assert.ok(elapsed < 4000, `took ${elapsed} ms`);
  // Killing bwrap takes the whole PID namespace with it: nothing of the sandbox survives.
  const survivors = readdirSync("/proc")
    .filter((p) => /^[0-9]+$/.test(p))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    });
  assert.equal(survivors, []);
});

test("abort: SIGINT to the command, reported as interrupted", async () => {
  const controller = new AbortController();
  // Aborted once the command has surely started (its first output), not after a fixed delay: on a
  // loaded machine the sandbox may still be booting after one.
  const result = await run({
    argv: ["sh", "-c", "echo started; exec sleep 30"],
    signal: controller.signal,
    onOutput: () => controller.abort(),
  });
  assert.ok(result.interrupted);
  assert.not.ok(result.timedOut);
  assert.is(result.signal, "SIGINT");
  assert.ok(result.durationMs < 2500, `took ${result.durationMs} ms`);
});

test("abort: a command that ignores SIGINT gets SIGTERM after the interrupt grace", async () => {
  const controller = new AbortController();
  // Aborted once the sandbox surely runs (a loaded machine can take a while to start it).
  const timer = setTimeout(() => controller.abort(), 1500);
  const result = await run({
    argv: ["sh", "-c", 'trap "" INT; sleep 30'],
    signal: controller.signal,
    interruptGraceMs: 300,
  });
  clearTimeout(timer);
  assert.ok(result.interrupted);
  assert.is(result.signal, "SIGTERM");
  // Not a speed target: it proves SIGTERM ended the 30 s sleep early.
  assert.ok(result.durationMs < 20_000, `took ${result.durationMs} ms`);
});

test("abort before start: nothing runs", async () => {
  const controller = new AbortController();
  controller.abort();
  const result = await run({ argv: ["true"], signal: controller.signal });
  assert.ok(result.interrupted);
  assert.not.ok(result.started);
  assert.is(result.exitCode, null);
});

test.run();
