// Shared by the real-bubblewrap sandbox tests (sandbox*.test.ts, warm-sandboxes.test.ts). Not
// imported by production code.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Test } from "uvu";
import * as assert from "uvu/assert";
import { runInSandbox, type SandboxOptions, type SandboxResult } from "./sandbox.ts";
import type { EvidenceRequest } from "./plan-evidence.ts";

export type CollectedResult = SandboxResult & { stdout: string; stderr: string };

/** Runs in the sandbox, collecting stdout and stderr as text (and still handing each chunk to `options.onOutput`). */
export async function runCollecting(options: SandboxOptions): Promise<CollectedResult> {
  let stdout = "";
  let stderr = "";
  const result = await runInSandbox({
    ...options,
    onOutput: (chunk, stream) => {
      if (stream === "stdout") stdout += chunk.toString("utf8");
      else stderr += chunk.toString("utf8");
      options.onOutput?.(chunk, stream);
    },
  });
  return { ...result, stdout, stderr };
}

/**
 * A fresh temporary directory for each case of `test` (the attempts' host directories live there);
 * after each case it must be empty again (every attempt removes its private directory, whatever
 * happened in it), then it is removed and `afterEach` runs. Returns the current case's directory.
 */
export function attemptDirectoryPerCase<T>(
  test: Test<T>,
  prefix: string,
  afterEach: (dir: string) => Promise<void> = async () => undefined,
): () => string {
  let dir = "";
  test.before.each(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  });
  test.after.each(async () => {
    const left = await readdir(dir);
    await rm(dir, { recursive: true, force: true });
    assert.equal(left, [], "attempt directories left behind");
    await afterEach(dir);
  });
  return () => dir;
}

/**
 * An evidence request for sandbox tests without tofu: the "saved plan" is a plan JSON in
 * /work/plan.tfplan, and showing it is `cat` (the launcher still runs it with nothing else alive).
 */
export function catEvidence(runId: string, secretEnv: readonly string[] = []): EvidenceRequest {
  return {
    plan: "/work/plan.tfplan",
    show: ["cat", "/work/plan.tfplan"],
    cwd: "/work",
    planDiff: { runId, secretEnv },
  };
}
