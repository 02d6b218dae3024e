import { execFile, spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";

/**
 * Runs the host tools a sandbox needs around it (`mount`/`umount` of its tmpfs) without forking
 * this process. Spawning from a Node process forks it whole (page tables of a few hundred MB,
 * then copy-on-write faults while it keeps running): measured at about 4 ms of CPU per spawn
 * in the runner, two of them per sandbox. A small shell started once does the fork and exec
 * instead; it reads one command at a time on its stdin (the argument count, then one argument
 * per line) and answers with the exit status. It ends when this process closes its stdin, or
 * dies. An argument with a newline or NUL, or a helper that cannot run, falls back to
 * `execFile`, which is also what reports a failure's message.
 */

const TOOL_PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

// POSIX sh (dash): read the argument count, then the arguments into "$@", run it, print $?.
const HELPER_SCRIPT = [
  "while IFS= read -r n; do",
  "  set --",
  "  i=0",
  '  while [ "$i" -lt "$n" ]; do IFS= read -r arg || exit 0; set -- "$@" "$arg"; i=$((i + 1)); done',
  '  "$@" </dev/null >/dev/null 2>&1',
  "  echo $?",
  "done",
].join("\n");

/** Runs `command args` with the tool PATH; rejects with its stderr when it fails. */
export function execTool(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { env: { PATH: TOOL_PATH } }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(" ")}: ${String(stderr).trim() || error.message}`));
      else resolve();
    });
  });
}

type Helper = ChildProcessByStdio<Writable, Readable, null>;

let helper: Helper | undefined;
/** Answers the helper owes, in order; each gets the exit status (or null when the helper went away). */
const waiting: ((status: number | null) => void)[] = [];

function startHelper(): Helper {
  const child = spawn("/bin/sh", ["-c", HELPER_SCRIPT], { stdio: ["pipe", "pipe", "ignore"], env: { PATH: TOOL_PATH } });
  let pending = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (data: string) => {
    pending += data;
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const status = Number(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
      waiting.shift()?.(Number.isInteger(status) ? status : null);
      if (waiting.length === 0) idle(child);
    }
  });
  const gone = () => {
    if (helper === child) helper = undefined;
    for (const answer of waiting.splice(0)) answer(null);
  };
  child.once("error", gone);
  child.once("exit", gone);
  child.stdin.on("error", () => {});
  idle(child);
  return child;
}

/** An idle helper does not keep this process alive (it ends when our end of its stdin closes). */
function idle(child: Helper): void {
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  (child.stdout as unknown as { unref?: () => void }).unref?.();
}

function busy(child: Helper): void {
  child.ref();
  (child.stdin as unknown as { ref?: () => void }).ref?.();
  (child.stdout as unknown as { ref?: () => void }).ref?.();
}

/** The exit status of `command args` run by the helper, or null when the helper could not run it. */
function viaHelper(command: string, args: string[]): Promise<number | null> {
  const argv = [command, ...args];
  if (argv.some((arg) => /[\n\0]/.test(arg))) return Promise.resolve(null);
  if (helper === undefined || helper.exitCode !== null || helper.stdin.destroyed) {
    try {
      helper = startHelper();
    } catch {
      helper = undefined;
      return Promise.resolve(null);
    }
  }
  const child = helper;
  return new Promise((resolve) => {
    waiting.push(resolve);
    busy(child);
    child.stdin.write(`${argv.length}\n${argv.map((arg) => `${arg}\n`).join("")}`);
  });
}

/**
 * Runs `command args` (a host tool such as mount) through the helper; when the helper cannot run
 * it, or it fails, through execFile, which reports the failure's message. A failed command thus
 * runs twice: only for idempotent commands whose failure leaves nothing behind.
 */
export async function runTool(command: string, args: string[]): Promise<void> {
  if ((await viaHelper(command, args)) === 0) return;
  await execTool(command, args);
}

/** Ends the helper (tests; a process that exits ends it anyway). */
export function stopToolHelper(): void {
  helper?.stdin.end();
  helper = undefined;
}
