// How a sandbox is confined beyond its bwrap flags, on the host: as root its own uid and its own
// size-limited tmpfs (mounted, unmounted, swept after a runner that died), the release of its host
// side in the background, and the /proc reads that tell a process apart from a reused pid.
import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { runHostTool } from "../host-tools.ts";
import { SANDBOX_UID_BASE, type SandboxLimits } from "./profile.ts";

/** How one sandbox is confined beyond its bwrap flags. */
export interface Confinement {
  limits: SandboxLimits;
  /** As root: the sandbox's own uid. */
  uid?: number;
  /** As root: the sandbox's size-limited tmpfs (holding work/ and tmp/). */
  fsDir?: string;
  /** The seccomp filter, open for bwrap (closed here once bwrap has it). */
  seccompFd?: number;
  /** The host directory mounted read-only at the shape's `readOnlyInputDir`. */
  inputDir?: string;
}

const SANDBOX_UID_RANGE = 1 << 20;

export const isRoot = () => process.getuid?.() === 0;

/** The uids of this process's live sandboxes, so that two never share one (RLIMIT_NPROC counts per uid). */
export const uidsInUse = new Set<number>();

export function allocateUid(): number {
  for (;;) {
    const uid = SANDBOX_UID_BASE + randomInt(SANDBOX_UID_RANGE);
    if (!uidsInUse.has(uid)) {
      uidsInUse.add(uid);
      return uid;
    }
  }
}

/** Mounts the sandbox's own tmpfs (the disk limit) at `dir`, owned by the sandbox's uid. */
export async function mountSandboxFs(dir: string, sizeBytes: number, uid: number, sandboxId: string): Promise<void> {
  await runHostTool("mount", [
    "-t",
    "tmpfs",
    "-o",
    `size=${sizeBytes},mode=0700,uid=${uid},gid=${uid},nosuid,nodev`,
    `stackship-${sandboxId}`,
    dir,
  ]);
}

export async function unmountSandboxFs(dir: string): Promise<void> {
  try {
    await runHostTool("umount", [dir]);
  } catch {
    // Still busy (a process of the sandbox not yet reaped): detach it now, the kernel frees it once unused.
    await runHostTool("umount", ["-l", dir]).catch(() => {});
  }
}

/** Lines of /proc/self/mountinfo: mount points of StackShip sandbox tmpfs mounts. */
async function sandboxMounts(): Promise<string[]> {
  const info = await readFile("/proc/self/mountinfo", "utf8").catch(() => "");
  const points: string[] = [];
  for (const line of info.split("\n")) {
    const [before, after] = line.split(" - ");
    if (after === undefined) continue;
    const [fsType, source] = after.split(" ");
    const mountPoint = before
      .split(" ")[4]
      ?.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    if (
      fsType === "tmpfs" &&
      /^stackship-sbx-[0-9a-z]{16}$/.test(source ?? "") &&
      mountPoint !== undefined &&
      path.basename(mountPoint) === "fs"
    )
      points.push(mountPoint);
  }
  return points;
}

let staleSweep: Promise<void> | undefined;

/**
 * A runner that died (even SIGKILL) leaves its sandboxes' tmpfs mounts behind: their processes died
 * with it (--die-with-parent) but the mounts hold memory until unmounted. Once per process, remove
 * those whose owner (recorded beside the mount as pid and start time) no longer runs.
 */
export function sweepStaleMounts(): Promise<void> {
  staleSweep ??= sweepStaleSandboxMounts().then(
    () => {},
    () => {},
  );
  return staleSweep;
}

/** Unmounts and removes every sandbox tmpfs whose owning runner process is gone; returns their mount points. */
export async function sweepStaleSandboxMounts(): Promise<string[]> {
  const swept: string[] = [];
  for (const mountPoint of await sandboxMounts()) {
    const hostDir = path.dirname(mountPoint);
    const owner = await readFile(path.join(hostDir, "owner"), "utf8").catch(() => undefined);
    const [pid, startTime] = (owner ?? "").trim().split(" ");
    if (owner !== undefined && isRunning({ pid: Number(pid), startTime })) continue;
    await unmountSandboxFs(mountPoint);
    await rm(hostDir, { recursive: true, force: true }).catch(() => {});
    swept.push(mountPoint);
  }
  return swept;
}

/** Sandboxes whose host side is still being removed (`run` with `releaseLater`). */
const pendingReleases = new Set<Promise<void>>();

export function trackRelease(release: Promise<void>): void {
  // A failed unmount leaves a mount that the next start's sweep removes (sweepStaleSandboxMounts).
  const tracked: Promise<void> = release.catch(() => undefined).finally(() => pendingReleases.delete(tracked));
  pendingReleases.add(tracked);
}

/** Resolves once every sandbox released later has its host side removed. */
export async function sandboxReleasesSettled(): Promise<void> {
  while (pendingReleases.size > 0) await Promise.all([...pendingReleases]);
}

/** A process as pid and start time (pids are reused), of bwrap's first child. */
export function processIdentity(bwrapPid: number | undefined): { pid: number; startTime: string } | undefined {
  if (bwrapPid === undefined) return undefined;
  try {
    const [child] = readFileSync(`/proc/${bwrapPid}/task/${bwrapPid}/children`, "utf8").trim().split(/\s+/).map(Number);
    if (!Number.isInteger(child)) return undefined;
    const fields = statFields(child);
    return fields === undefined ? undefined : { pid: child, startTime: fields[19] };
  } catch {
    return undefined;
  }
}

/** The fields of /proc/<pid>/stat after the command name (state first), or undefined if gone. */
export function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Whether this very process still runs (a zombie has exited). */
export function isRunning(process: { pid: number; startTime: string }): boolean {
  const fields = statFields(process.pid);
  return fields !== undefined && fields[19] === process.startTime && fields[0] !== "Z";
}
