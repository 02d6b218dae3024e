import { readdirSync, readFileSync, readlinkSync } from "node:fs";

// Host processes as /proc shows them, to prove sandboxes leave nothing running.

/** Host processes whose parent chain leads to `root` (itself included). */
export function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const pid of readdirSync("/proc").filter((p) => /^[0-9]+$/.test(p))) {
    try {
      // The command name is in parentheses and may hold spaces; the fields after it are fixed.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      parents.set(Number(pid), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const tree = [root].filter((pid) => parents.has(pid));
  for (let i = 0; i < tree.length; i++) for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  return tree;
}

/**
 * Whether a process still runs. A zombie does not: bwrap's inner init can end after its outer
 * bwrap, and then waits (dead) for the host's init to reap it.
 */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

export function environOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

export function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** Running bwrap processes under this test process: each sandbox's bwrap and its inner init. */
export function ourBwraps(): number[] {
  return processTree(process.pid).filter((pid) => {
    if (!alive(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("/usr/bin/bwrap");
    } catch {
      return false;
    }
  });
}

/** This test process's running sandboxes (their outer bwrap). */
export function ourSandboxes(): number[] {
  return ourBwraps().filter((pid) => parentOf(pid) === process.pid);
}

/** The sandbox name (bwrap's --hostname) a bwrap process runs, if it is one. */
export function sandboxNameOf(pid: number): string | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    if (argv[0] !== "/usr/bin/bwrap") return undefined;
    const at = argv.indexOf("--hostname");
    return at >= 0 ? argv[at + 1] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Running bwrap processes anywhere on the host (not only under this process: an inner init whose
 * bwrap ended is reparented) that run one of these sandboxes.
 */
export function runningSandboxProcesses(names: ReadonlySet<string>): number[] {
  return readdirSync("/proc")
    .filter((p) => /^[0-9]+$/.test(p))
    .map(Number)
    .filter((pid) => {
      const name = sandboxNameOf(pid);
      return name !== undefined && names.has(name) && alive(pid);
    });
}

/** Open descriptors of this process that point at `file`. */
export function openDescriptors(file: string): number {
  let count = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) count += 1;
    } catch {
      // Closed meanwhile.
    }
  }
  return count;
}
