import { suite } from "uvu";
import * as assert from "uvu/assert";
import { WarmSandboxPool } from "./warm-sandboxes.ts";
import { attemptDirectoryPerCase } from "./sandbox-test-support.ts";

// A refill asked for a little later (after an attempt, so that the boot does not hold up the run's
// last writes and its clients) starts at once when a sandbox is wanted or the pool is awaited.
const test = suite("warm pool: a later refill");
const tmpDir = attemptDirectoryPerCase(test, "ss-warm-pool-");

async function emptyPool() {
  const pool = new WarmSandboxPool({ size: 1, shape: () => ({ tmpDir: tmpDir() }), idleMs: 60_000 });
  pool.start();
  const first = await pool.take();
  await first!.destroy();
  assert.is(pool.size, 0);
  return pool;
}

test("nothing boots before the delay; a take meanwhile starts the refill and gets its sandbox", async () => {
  const pool = await emptyPool();
  try {
    pool.refill({ afterMs: 60_000 });
    assert.is(pool.size, 0, "the refill waits");
    const sandbox = await pool.take();
    assert.ok(sandbox?.available, "take started the refill and waited for it");
    await sandbox.destroy();
  } finally {
    await pool.stop();
  }
});

test("settled starts a refill that is still waiting, and resolves with the pool full", async () => {
  const pool = await emptyPool();
  try {
    pool.refill({ afterMs: 60_000 });
    await pool.settled();
    assert.is(pool.size, 1);
  } finally {
    await pool.stop();
  }
});

test("the refill boots on its own after the delay; stop cancels one still waiting", async () => {
  const pool = await emptyPool();
  try {
    pool.refill({ afterMs: 20 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.is(pool.size, 1, "booting or ready");
    await pool.settled();
  } finally {
    await pool.stop();
  }
  const stopped = await emptyPool();
  stopped.refill({ afterMs: 20 });
  await stopped.stop();
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.is(stopped.size, 0, "nothing booted after stop");
});

test.run();
