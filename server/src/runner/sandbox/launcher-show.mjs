// The processes of the sandbox as the launcher sees them: the process group signals reach (the
// command's, then the evidence's show), every other process killed before the evidence is derived,
// and the show itself run with nothing else alive, its output spooled to a file it makes afresh.
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { outputSettled, writeOutput } from "./launcher-output.mjs";

/** The process group that signals reach: the command's, then the evidence's show while it runs. */
let signalTarget;

/** A signal that came before the command was started (while the configuration was unpacked): sent to it once it is. */
let pendingSignal;

/** Signals from now on reach `process`'s group (it leads its own: spawned detached). */
export function setSignalTarget(process) {
  signalTarget = process;
}

/** Sends a signal that came before the command was started, if one did, now that it is. */
export function sendPendingSignal() {
  if (pendingSignal !== undefined) killGroup(pendingSignal);
}

export function killGroup(signal) {
  if (!signalTarget || signalTarget.pid === undefined) {
    pendingSignal = signal;
    return;
  }
  try {
    // The command leads its own process group (detached), so `sh -c 'tofu …'` and tofu both get it.
    process.kill(-signalTarget.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Whether this process runs where `killOthers` may signal everything it can: the sandbox's own PID
 * namespace, whose pid 1 is bwrap and this launcher's parent. (kill(-1) anywhere else would reach
 * every process of its user.)
 */
function inSandboxPidNamespace() {
  try {
    const init = readFileSync("/proc/1/cmdline", "latin1").split("\0")[0];
    return process.ppid === 1 && process.pid !== 1 && /(^|\/)bwrap$/.test(init);
  } catch {
    return false;
  }
}

/** The processes of this PID namespace other than its init and this launcher that are still alive (zombies are dead). */
function otherLiveProcesses() {
  const alive = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === 1 || pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "latin1");
      const state = stat.charAt(stat.lastIndexOf(")") + 2);
      if (state !== "Z" && state !== "X") alive.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return alive;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * SIGKILLs every other process of the sandbox (kill(-1): all this uid may signal in this PID
 * namespace, which is the sandbox's whole tree, whatever its process group or session) until none
 * is left alive; false when that cannot be done or does not succeed (the evidence is then refused).
 */
export function killOthers() {
  if (!inSandboxPidNamespace()) return false;
  for (let round = 0; round < 400; round++) {
    try {
      process.kill(-1, "SIGKILL");
    } catch {
      // ESRCH: nothing left to signal.
    }
    if (otherLiveProcesses().length === 0) return true;
    Atomics.wait(pause, 0, 0, 5);
  }
  return false;
}

/** Largest artifact the launcher sends (the runner's collect limit applies too). */
const EVIDENCE_MAX_BYTES = 256 * 1024 * 1024;

/** A regular file under /work (after following symlinks) of at most EVIDENCE_MAX_BYTES, or undefined. */
export function readEvidenceFile(file) {
  try {
    const real = realpathSync(String(file));
    if (!real.startsWith("/work/")) return undefined;
    const stats = statSync(real);
    if (!stats.isFile() || stats.size > EVIDENCE_MAX_BYTES) return undefined;
    return readFileSync(real);
  } catch {
    return undefined;
  }
}

/** A command of the evidence request (an argv: a non-empty array of strings), or undefined. */
export function commandOf(value) {
  return Array.isArray(value) && value.length > 0 && value.every((a) => typeof a === "string") ? value : undefined;
}

/** Where the show's output is spooled: made afresh by the launcher once nothing else is alive. */
const SHOW_SPOOL_DIR = "/work/.stackship-evidence";

/**
 * Runs the evidence's `show` command (under the sandbox's limit wrapper) with nothing else alive in
 * the sandbox; its stdout goes to a file the launcher made afresh (so that the plan JSON counts
 * against the sandbox's disk and file-size limits, as any file the run writes), its stderr to the
 * log. Once it exited, whatever it started is killed and the file is read into memory. Resolves
 * `{code, signal, stdout}` (stdout undefined when there is no complete output).
 */
export function runShow(command, cwd, env, spool = "plan.json") {
  return new Promise((resolve) => {
    let show;
    let fd;
    try {
      if (spool === "plan.json") {
        rmSync(SHOW_SPOOL_DIR, { recursive: true, force: true });
        mkdirSync(SHOW_SPOOL_DIR, { mode: 0o700 });
      }
      fd = openSync(`${SHOW_SPOOL_DIR}/${spool}`, "wx", 0o600);
      show = spawn(command[0], command.slice(1), { cwd, env, stdio: ["ignore", fd, "pipe"], detached: true });
    } catch {
      resolve({ code: 127, signal: null, stdout: undefined });
      return;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    signalTarget = show;
    show.stderr.on("data", (chunk) => writeOutput("stderr", chunk));
    show.once("error", () => resolve({ code: 127, signal: null, stdout: undefined }));
    show.once("exit", (code, signal) => {
      // Whatever show started (its providers) ends before its output counts.
      const killed = killOthers();
      const closed = new Promise((done) => (show.stderr.closed ? done() : show.stderr.once("close", done)));
      void outputSettled(closed).then(() =>
        resolve({
          code: killed ? code : 1,
          signal,
          stdout: killed ? readEvidenceFile(`${SHOW_SPOOL_DIR}/${spool}`) : undefined,
        }),
      );
    });
  });
}
