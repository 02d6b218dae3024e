// The sandbox's limits on the host side: the per-process backstops the command runs under
// (prlimit), the watcher that samples the sandbox's processes and tmpfs while it runs and ends it
// at the first total reached, and the traces of a limit read after the command.
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { readdir, statfs } from "node:fs/promises";
import path from "node:path";
import { statFields, type Confinement } from "./confinement.ts";
import { MIB, type SandboxLimitKind, type SandboxLimits, type SandboxResult } from "./profile.ts";

/** How often the host samples a running sandbox's processes. */
const WATCH_INTERVAL_MS = 100;
/** A tmpfs with less free space than this counts as full. */
const DISK_FULL_SLACK_BYTES = 256 * 1024;
export const PRLIMIT = "/usr/bin/prlimit";
const CLOCK_TICKS_PER_SECOND = 100;

/** The command line prefix that runs the command under the per-process backstops of the sandbox's limits. */
export function limitWrapper(limits: SandboxLimits): string[] {
  // Twice the sandbox's total: one process alone cannot outrun the watcher far, yet the watcher
  // (which counts every process) sees a growing one reach the total well before this stops it.
  const dataBytes = Math.max(2 * limits.memoryBytes, limits.memoryBytes + 64 * MIB);
  return [
    PRLIMIT,
    `--nproc=${limits.processes}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--data=${dataBytes}`,
    // The watcher ends the sandbox at the total first; this only catches a process it missed.
    `--cpu=${limits.cpuSeconds + 2}:${limits.cpuSeconds + 5}`,
    "--core=0",
    "--",
  ];
}

/**
 * Samples the sandbox's processes (and its tmpfs) every WATCH_INTERVAL_MS while the command runs;
 * calls `onLimit` once with the first limit reached. Returns the stop function.
 */
export function watch(
  pid: number | undefined,
  confinement: Confinement,
  result: SandboxResult,
  onLimit: (kind: SandboxLimitKind) => void,
): () => void {
  const { limits, fsDir } = confinement;
  let stopped = false;
  let busy = false;
  const tick = async () => {
    if (stopped || busy || pid === undefined) return;
    busy = true;
    try {
      const sample = sampleProcesses(pid);
      const usage = result.usage;
      usage.memoryBytes = Math.max(usage.memoryBytes, sample.memoryBytes);
      usage.processes = Math.max(usage.processes, sample.processes);
      usage.cpuSeconds = Math.max(usage.cpuSeconds, sample.cpuSeconds);
      if (fsDir !== undefined) {
        const fs = await statfs(fsDir).catch(() => undefined);
        if (fs !== undefined) usage.diskBytes = Math.max(usage.diskBytes ?? 0, (fs.blocks - fs.bfree) * fs.bsize);
      }
      if (stopped) return;
      if (sample.memoryBytes >= limits.memoryBytes) onLimit("memory");
      else if (sample.processes >= limits.processes) onLimit("processes");
      else if (sample.cpuSeconds >= limits.cpuSeconds) onLimit("cpu");
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), WATCH_INTERVAL_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/** After a command that did not succeed: which limit it ran into, if its traces say so. */
export async function limitAfterwards(
  confinement: Confinement,
  workDir: string,
  result: SandboxResult,
): Promise<SandboxLimitKind | null> {
  const { limits, fsDir } = confinement;
  if (result.signal === "SIGXFSZ") return "file_size";
  if (result.signal === "SIGXCPU") return "cpu";
  const fs = fsDir !== undefined ? await statfs(fsDir).catch(() => undefined) : undefined;
  // On the sandbox's own tmpfs, a file of the size limit needs at least that much of it in use:
  // below that, no walk of the tree is needed.
  const couldHoldOne = fs === undefined || (fs.blocks - fs.bfree) * fs.bsize >= limits.fileSizeBytes;
  if (couldHoldOne && (await hasFileOfSize(fsDir ?? workDir, limits.fileSizeBytes))) return "file_size";
  if (fs !== undefined && fs.bfree * fs.bsize < DISK_FULL_SLACK_BYTES) return "disk";
  if (result.usage.processes >= limits.processes && !(result.exitCode === 0 && result.signal === null))
    return "processes";
  return null;
}

/** Whether some regular file under `dir` is at least `size` bytes (RLIMIT_FSIZE stops a file exactly there). Bounded walk. */
async function hasFileOfSize(dir: string, size: number, budget = { entries: 20_000 }): Promise<boolean> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const entry of entries) {
    if (--budget.entries < 0) return false;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (await hasFileOfSize(full, size, budget)) return true;
    } else if (entry.isFile()) {
      try {
        if (lstatSync(full).size >= size) return true;
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return false;
}

/** One sample of a sandbox's processes: bwrap's descendants, without its own init. */
function sampleProcesses(bwrapPid: number): { memoryBytes: number; processes: number; cpuSeconds: number } {
  const sample = { memoryBytes: 0, processes: 0, cpuSeconds: 0 };
  const seen = new Set<number>([bwrapPid]);
  const queue = [bwrapPid];
  let innerInit = true;
  while (queue.length > 0) {
    const pid = queue.shift()!;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let children: string;
      try {
        children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8");
      } catch {
        continue;
      }
      for (const child of children.trim().split(/\s+/)) {
        const childPid = Number(child);
        if (child === "" || seen.has(childPid)) continue;
        seen.add(childPid);
        queue.push(childPid);
      }
    }
    if (pid === bwrapPid) continue;
    // bwrap's first child is the namespace's init (bwrap's, root-owned, tiny): not the sandbox's work.
    if (innerInit) {
      innerInit = false;
      continue;
    }
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      sample.processes += Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
      sample.memoryBytes += Number(/^RssAnon:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
      const fields = statFields(pid);
      if (fields !== undefined)
        sample.cpuSeconds +=
          (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_SECOND;
    } catch {
      // Exited meanwhile.
    }
  }
  return sample;
}
