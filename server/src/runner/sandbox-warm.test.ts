// Warm sandboxes against real bubblewrap (sandbox/boot.ts, warm-sandboxes.ts): booted before their
// attempt is known, handed one attempt, destroyed unused; and the warm pool that keeps them.
import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startSandbox } from "./sandbox.ts";
import { attemptDirectoryPerCase } from "./sandbox-test-support.ts";
import { WarmSandboxPool } from "./warm-sandboxes.ts";
import { until } from "../../test/support/poll.ts";
import { alive, environOf, ourBwraps, ourSandboxes, processTree } from "../../test/support/processes.ts";

const test = suite("sandbox: warm sandboxes and the warm pool");
const tmpDir = attemptDirectoryPerCase(test, "stackship-sandbox-warm-");

test("warm: boots without the attempt, gets its env only at the handoff, serves one attempt, leaves nothing behind", async () => {
  const canary = `warm-canary-${Date.now()}`;
  const sandbox = await startSandbox({ tmpDir: tmpDir() });
  assert.ok(await sandbox.ready, "the launcher reports ready");
  assert.ok(sandbox.available);
  assert.is(sandbox.name, sandbox.sandboxId, "a sandbox started ahead is named by its id");
  const idle = processTree(sandbox.pid!);
  assert.ok(idle.length >= 2, `bwrap and the launcher run: ${idle.join(",")}`);
  let launchers = 0;
  for (const pid of idle) {
    const env = environOf(pid);
    assert.not.ok(
      env.some((entry) => entry.includes(canary)),
      "nothing of the run before the handoff",
    );
    const launcher = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[1] === "/run/stackship/launcher.mjs";
    // bwrap itself runs with an empty environment, the launcher with only what bwrap sets.
    // (PWD only where bwrap itself could enter /work: not as root, where /work is the sandbox uid's.)
    assert.equal(
      env.filter((entry) => !entry.startsWith("PWD=")).sort(),
      launcher ? ["HOME=/work", "PATH=/usr/local/bin:/usr/bin:/bin"] : [],
    );
    launchers += launcher ? 1 : 0;
  }
  assert.is(launchers, 1);
  // The launcher's warm-up (a sample unpacked in /tmp, a shell started) is over before it is ready.
  assert.equal(
    idle.filter((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("sh\0")),
    [],
    "the warm-up shell ended",
  );
  let stdout = "";
  const result = await sandbox.run({
    // `ls -A /tmp` prints nothing: the warm-up left nothing there.
    argv: ["sh", "-c", 'echo "$RUN_SECRET"; cat in.txt; hostname; ls -A /tmp'],
    env: { RUN_SECRET: canary },
    files: { "in.txt": "handed over\n" },
    onOutput: (chunk) => (stdout += chunk.toString()),
  });
  assert.is(result.exitCode, 0, result.error);
  assert.is(stdout, `${canary}\nhanded over\n${sandbox.sandboxId}\n`);
  assert.ok(
    result.timings.readyAt! <= result.timings.handedOverAt && result.timings.handedOverAt <= result.timings.startedAt!,
  );
  // One attempt only; afterwards the whole process tree is gone (tmpDir emptiness: test.after.each).
  let message = "";
  await sandbox.run({ argv: ["true"] }).catch((error: Error) => (message = error.message));
  assert.match(message, /already served an attempt/);
  assert.not.ok(sandbox.available);
  assert.equal(idle.filter(alive), []);
});

test("warm: the wall-clock limit counts from the handoff, not from the boot", async () => {
  const sandbox = await startSandbox({ tmpDir: tmpDir() });
  assert.ok(await sandbox.ready);
  // Idle longer than the limit, then a command well inside it (with room for a loaded machine).
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const result = await sandbox.run({ argv: ["sh", "-c", "sleep 0.3; echo done"], timeoutMs: 2500 });
  assert.not.ok(result.timedOut, "the idle time before the handoff does not count");
  assert.is(result.exitCode, 0);
  assert.ok(result.durationMs < 3000, `duration ${result.durationMs} ms counts from the handoff`);
});

test("warm: destroyed unused, or aborted before the handoff, nothing runs and nothing is left", async () => {
  const unused = await startSandbox({ tmpDir: tmpDir() });
  assert.ok(await unused.ready);
  const tree = processTree(unused.pid!);
  await unused.destroy();
  assert.equal(tree.filter(alive), []);
  const aborted = await startSandbox({ tmpDir: tmpDir() });
  const controller = new AbortController();
  controller.abort();
  const result = await aborted.run({ argv: ["true"], signal: controller.signal });
  assert.ok(result.interrupted);
  assert.not.ok(result.started);
});

test("warm pool: one sandbox per slot, each taken once, replaced on refill, none left after stop", async () => {
  const pool = new WarmSandboxPool({ size: 1, shape: () => ({ tmpDir: tmpDir() }), idleMs: 60_000 });
  pool.start();
  try {
    const first = await pool.take();
    assert.ok(first?.available, "take waits for the sandbox that is booting");
    assert.is(await pool.take(), undefined, "nothing else is ready or starting");
    const result = await first.run({ argv: ["true"] });
    assert.is(result.exitCode, 0);
    pool.refill();
    await pool.settled();
    const second = await pool.take();
    assert.ok(second?.available);
    assert.is.not(second.sandboxId, first.sandboxId);
    await second.destroy();
    pool.refill();
    await pool.settled();
    assert.is(ourSandboxes().length, 1, "one warm sandbox waits");
  } finally {
    await pool.stop();
  }
  assert.equal(ourBwraps(), [], "stop leaves no bwrap behind");
  assert.is(await pool.take(), undefined);
});

test("warm pool: a sandbox idle longer than idleMs is replaced by a new one", async () => {
  const pool = new WarmSandboxPool({ size: 1, shape: () => ({ tmpDir: tmpDir() }), idleMs: 300 });
  pool.start();
  try {
    await pool.settled();
    const [before] = ourSandboxes();
    // Replaced within a few idle periods, by exactly one new sandbox.
    let after = ourSandboxes();
    await until(
      async () => {
        await pool.settled();
        after = ourSandboxes();
        return after.length === 1 && after[0] !== before;
      },
      () => `one new sandbox in place of ${before} (now ${after.join(",") || "none"})`,
      60_000,
      50,
    );
    assert.not.ok(alive(before));
  } finally {
    await pool.stop();
  }
  assert.equal(ourBwraps(), []);
});

test.run();
