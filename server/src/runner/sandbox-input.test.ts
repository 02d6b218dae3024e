import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startSandbox } from "./sandbox.ts";

// The read-only input directory (the plan's state file, plan-state.ts): written by the runner at
// the handoff, readable inside, not writable, not replaceable.
const input = suite("sandbox read-only input directory");
let tmpDir = "";
input.before(async () => {
  tmpDir = await mkdtemp(path.join(os.tmpdir(), "ss-input-"));
});
input.after(async () => {
  await rm(tmpDir, { recursive: true, force: true });
});

async function runIn(readOnlyFiles: Record<string, string> | undefined, script: string) {
  const sandbox = await startSandbox({ tmpDir, readOnlyInputDir: "/opt/stackship/state" });
  let output = "";
  const result = await sandbox.run({ argv: ["sh", "-c", script], readOnlyFiles, timeoutMs: 30_000, onOutput: (chunk) => (output += chunk.toString("utf8")) });
  return { result, output };
}

input("the file is readable; writing, removing, chmod-ing it or adding a file next to it fails", async () => {
  const script = [
    "cat /opt/stackship/state/terraform.tfstate",
    "echo x >> /opt/stackship/state/terraform.tfstate && echo APPENDED",
    "rm -f /opt/stackship/state/terraform.tfstate && echo REMOVED",
    "chmod 0666 /opt/stackship/state/terraform.tfstate && echo CHMODDED",
    "touch /opt/stackship/state/other && echo CREATED",
    "cat /opt/stackship/state/terraform.tfstate",
  ].join("; ");
  const { result, output } = await runIn({ "terraform.tfstate": '{"serial":3}\n' }, script);
  assert.is(result.exitCode, 0, output);
  assert.is(output.split('{"serial":3}').length, 3, output);
  for (const word of ["APPENDED", "REMOVED", "CHMODDED", "CREATED"]) assert.not.match(output, word);
});

input("without files the directory is empty; a name that is not a plain file name is refused before the command", async () => {
  const { result, output } = await runIn(undefined, "ls -A /opt/stackship/state; echo END");
  assert.is(output.trim(), "END");
  assert.is(result.exitCode, 0);
  try {
    await runIn({ "../escape": "x" }, "true");
    assert.unreachable("a path was accepted");
  } catch (error) {
    assert.match((error as Error).message, "is not a plain file name");
  }
});

input.run();
