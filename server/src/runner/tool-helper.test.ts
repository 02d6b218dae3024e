import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { runTool, stopToolHelper } from "./tool-helper.ts";

// Host tools run through one long-lived shell instead of a fork of this process each.
const tools = suite("tool helper");
let dir = "";
tools.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ss-tool-helper-"));
});
tools.after(async () => {
  stopToolHelper();
  await rm(dir, { recursive: true, force: true });
});

/** The helper shell's pid: this process's child running `sh -c` with the helper loop. */
function helperPids(): number[] {
  const out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((line) => line.includes("/bin/sh -c while IFS= read -r n"))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

tools("arguments arrive verbatim (spaces, quotes, $, backslashes, empty), one helper serves every call", async () => {
  const target = path.join(dir, "a file with 'quotes' $HOME \\ back");
  await runTool("touch", [target]);
  assert.ok(existsSync(target));
  const [first] = helperPids();
  assert.ok(first > 0, "a helper shell runs");
  await Promise.all(["one", "two", "three"].map((name) => runTool("touch", [path.join(dir, name)])));
  for (const name of ["one", "two", "three"]) assert.ok(existsSync(path.join(dir, name)), name);
  assert.equal(helperPids(), [first], "the same helper, no other");
  await runTool("sh", ["-c", 'printf "%s|" "$@" > "$0"', path.join(dir, "args"), "", "x y", "-n"]);
  assert.is(readFileSync(path.join(dir, "args"), "utf8"), "|x y|-n|");
});

tools("a failing command rejects with its own message (execFile reports it)", async () => {
  try {
    await runTool("ls", [path.join(dir, "missing")]);
    assert.unreachable("ls of a missing file must fail");
  } catch (error) {
    assert.match((error as Error).message, /missing/);
    assert.match((error as Error).message, /No such file/);
  }
});

tools("an argument with a newline still runs (without the helper)", async () => {
  const target = path.join(dir, "new\nline");
  await runTool("touch", [target]);
  assert.ok(existsSync(target));
});

tools("a helper that died is replaced on the next call", async () => {
  const [before] = helperPids();
  process.kill(before, "SIGKILL");
  await new Promise((resolve) => setTimeout(resolve, 100));
  await runTool("touch", [path.join(dir, "after")]);
  assert.ok(existsSync(path.join(dir, "after")));
  const [after] = helperPids();
  assert.ok(after > 0 && after !== before, `${before} -> ${after}`);
});

tools.run();
