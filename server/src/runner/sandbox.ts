// Over 500 lines (house rule, issue 14, allows three such files with a reason): the one module that
// boots, confines (uid, seccomp, rlimits, tmpfs), watches (limits), hands an attempt to and tears
// down a bubblewrap sandbox. Not split yet: the warm-pool, limit-watcher and launcher-handoff parts
// share the Sandbox object's private state; they are the first candidates for their own files.
import { spawn } from "node:child_process";
import { runHostTool } from "./host-tools.ts";
import { randomBytes, randomInt } from "node:crypto";
import {
  accessSync,
  closeSync,
  constants as fsConstants,
  existsSync,
  fstatSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFile as readFileCallback,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  writeFileSync,
} from "node:fs";
import { chmod, chown, cp, lchown, mkdir, mkdtemp, readdir, readFile, realpath, rm, statfs, writeFile } from "node:fs/promises";
import type net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { recordSandboxBoot } from "../metrics/registry.ts";
import { ControlReader, type EvidenceRequest } from "./plan-evidence.ts";
import { API_SOCKET_NAME, openApiChannel, SANDBOX_API_PORT, SANDBOX_API_SOCKET_DIR, SANDBOX_API_SOCKET_PATH, type ApiChannel, type ApiTarget } from "./api-channel.ts";

/**
 * One command in one fresh bubblewrap sandbox. See `bwrapArgs` for what the sandbox is made of,
 * `sandbox-launcher.mjs` for its first process, `api-channel.ts` for its only way out.
 */

/** The name of the isolation profile every attempt records; change it when `bwrapArgs` changes meaningfully. */
export const SANDBOX_BASE_PROFILE = "stackship-standard-v2";
/** The private, writable work directory inside the sandbox (also HOME and the working directory). */
export const SANDBOX_WORK_DIR = "/work";
/** A conventional read-only mount point for the runner's `.tools` directory (tofu, opa, providers). */
export const SANDBOX_TOOLS_DIR = "/opt/stackship/tools";
/** PATH inside the sandbox unless the caller's env sets one. */
export const SANDBOX_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

const DEFAULT_KILL_GRACE_MS = 5_000;
const DEFAULT_INTERRUPT_GRACE_MS = 30_000;
const DEFAULT_COLLECT_MAX_BYTES = 256 * 1024 * 1024;
/**
 * Files the runner hands over or collects up to this size are written and read with synchronous
 * calls: on the sandbox's tmpfs they return at once, and the thread pool's round trips (several per
 * file) cost more than the copying. Larger ones go through the thread pool.
 */
export const SYNC_IO_MAX_BYTES = 1024 * 1024;
const TMP_SIZE_BYTES = 256 * 1024 * 1024;

const LAUNCHER_HOST_PATH = fileURLToPath(new URL("./sandbox-launcher.mjs", import.meta.url));
/** The seccomp filter scripts/bootstrap-tools compiles (scripts/sandbox-seccomp). */
export const DEFAULT_SECCOMP_FILTER = fileURLToPath(new URL("../../../.tools/seccomp/sandbox.bpf", import.meta.url));
/** bwrap reads the seccomp filter from this descriptor (the fifth stdio slot). */
const SECCOMP_FD = 4;

const MIB = 1024 * 1024;

/** Which limit of a sandbox stopped its command. */
export type SandboxLimitKind = "memory" | "processes" | "file_size" | "disk" | "cpu";

/**
 * What one sandbox may use. Memory, processes and CPU time count everything in the sandbox
 * together (a watcher on the host samples its process tree and ends the sandbox once one is
 * reached), backed by per-process rlimits on the command (RLIMIT_NPROC, which the kernel counts
 * per uid, so every sandbox gets a uid of its own; RLIMIT_DATA; RLIMIT_CPU). The largest file is
 * RLIMIT_FSIZE. The disk limit is the size of the tmpfs that holds /work and /tmp (as root;
 * without root there is no such tmpfs and the disk limit is not enforced).
 */
export interface SandboxLimits {
  /** Resident anonymous memory of all the sandbox's processes together. */
  memoryBytes: number;
  /** Processes and threads of the sandbox's uid (the launcher's included). */
  processes: number;
  /** The largest file the command may write. */
  fileSizeBytes: number;
  /** Bytes in /work and /tmp together. */
  diskBytes: number;
  /** CPU time of all the sandbox's processes together. */
  cpuSeconds: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = {
  memoryBytes: 3072 * MIB,
  processes: 1024,
  fileSizeBytes: 1024 * MIB,
  diskBytes: 2048 * MIB,
  cpuSeconds: 3600,
};

/** How often the host samples a running sandbox's processes. */
const WATCH_INTERVAL_MS = 100;
/** A tmpfs with less free space than this counts as full. */
const DISK_FULL_SLACK_BYTES = 256 * 1024;
/** As root, each sandbox runs as a uid of its own from this range (no account needed: nothing on the host is owned by it). */
export const SANDBOX_UID_BASE = 3_000_000_000;
const SANDBOX_UID_RANGE = 1 << 20;
/** The uid and gid inside a user namespace, when the runner is not root. */
const UNPRIVILEGED_INSIDE_ID = 1000;
const SETPRIV = "/usr/bin/setpriv";
/** The launcher's real gid as root (see bwrapArgs): owns nothing the sandbox can write. */
const NOGROUP_GID = 65534;
const PRLIMIT = "/usr/bin/prlimit";
const CLOCK_TICKS_PER_SECOND = 100;
const SANDBOX_LAUNCHER_PATH = "/run/stackship/launcher.mjs";
/** The module the launcher imports, bound beside it (same file name inside and on the host). */
const LAUNCHER_UNPACK_MODULE = "sandbox-unpack.mjs";
/** bwrap passes inherited descriptors through; the launcher's control channel is the fourth stdio slot. */
const CONTROL_FD = 3;

const SANDBOX_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
// 252 is the largest multiple of 36 below 256: bytes from it up are dropped so every character is equally likely.
const SANDBOX_ID_UNBIASED_LIMIT = 252;
const SANDBOX_ID_PATTERN = /^sbx-[0-9a-z]{16}$/;
// A hostname label, which is also what the name is used as inside.
const SANDBOX_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export type OutputStream = "stdout" | "stderr";

/** A host path made visible read-only inside the sandbox, at `target` (default: the same path). */
export interface ReadOnlyBind {
  source: string;
  target?: string;
}

/**
 * What a sandbox is made of, fixed when it starts: for a warm sandbox (`startSandbox`) that is
 * before its attempt is known, so none of it may depend on the attempt.
 */
export interface SandboxShape {
  /** Hostname inside and the recorded sandbox name; a DNS label. Default: the sandbox id. */
  name?: string;
  /** Preassigned id (`sbx-` + 16 of [0-9a-z]), e.g. one already recorded on the attempt. Default: a new one. */
  sandboxId?: string;
  /** Open an API channel for this sandbox to this host:port; inside, it is SANDBOX_API_URL. Closed when the sandbox ends. */
  api?: ApiTarget;
  /**
   * Alternatively, an API channel socket the caller manages (see `openApiChannel`). As root the
   * sandbox runs as its own uid, so the socket is made connectable by anyone (mode 0666): keep it
   * in a private directory.
   */
  apiSocketPath?: string;
  /** Host paths to mount read-only, e.g. `{ source: '<repo>/.tools', target: SANDBOX_TOOLS_DIR }`. */
  readOnlyBinds?: ReadonlyArray<string | ReadOnlyBind>;
  /**
   * The plan-diff builder (`plan-diff.mjs`) as seen inside the sandbox (it must be under one of
   * `readOnlyBinds`): the launcher loads it into a worker at boot, for a run's `planDiff`.
   */
  planDiffBuilder?: string;
  /** Parent directory of the sandbox's private host directory. Default: os.tmpdir(). */
  tmpDir?: string;
  /** Default /usr/bin/bwrap. */
  bwrapPath?: string;
  /** The node binary that runs the launcher inside. Default: the one running this process. */
  nodePath?: string;
  /** What the sandbox may use; missing entries take DEFAULT_SANDBOX_LIMITS. */
  limits?: Partial<SandboxLimits>;
  /** The compiled seccomp filter (bwrap --seccomp). Default DEFAULT_SECCOMP_FILTER; a sandbox refuses to start without it. */
  seccompFilter?: string;
  /** Where an empty directory is mounted read-only, for the attempt's `readOnlyFiles` (written by the runner at the handoff, never read back). */
  readOnlyInputDir?: string;
}

/** What one attempt hands its sandbox: the command, its files and environment, its limits. */
export interface SandboxRun {
  /** The command, run with the working directory /work; argv[0] is looked up in the sandbox's PATH. */
  argv: readonly string[];
  /** Files to create in /work before the command starts: relative path → contents. Applied after `copyDir`. */
  files?: Readonly<Record<string, string | Uint8Array>>;
  /** A host directory whose contents are copied into /work before the command starts (e.g. an unpacked configuration). */
  copyDir?: string;
  /** Files (plain names) to create in the shape's `readOnlyInputDir` before the command starts: the sandbox can read them, not change them. */
  readOnlyFiles?: Readonly<Record<string, string | Uint8Array>>;
  /**
   * The command's whole environment; nothing of the runner's leaks in. PATH defaults to
   * SANDBOX_DEFAULT_PATH and HOME to /work. Passed over the launcher's control channel, never on a
   * command line, so values do not appear in the host's process list; a warm sandbox gets it only
   * at the handoff.
   */
  env?: Readonly<Record<string, string>>;
  /** Wall-clock limit from the handoff: then SIGTERM to the command's process group, SIGKILL of the sandbox after `killGraceMs`. */
  timeoutMs?: number;
  /** Grace between SIGTERM and SIGKILL. Default 5 s. */
  killGraceMs?: number;
  /** Grace between the interrupt (SIGINT) of an abort and the SIGTERM that follows. Default 30 s. */
  interruptGraceMs?: number;
  /** Abort = interrupt: SIGINT so tofu can stop cleanly, then SIGTERM, then SIGKILL. */
  signal?: AbortSignal;
  /** Called with every chunk the command writes, in order per stream. Must not throw (a throw stops the calls and rejects the run afterwards). */
  onOutput?: (chunk: Buffer, stream: OutputStream) => void;
  /** Relative paths in /work to read back after the command ended; missing (or non-regular) files come back as null. */
  collect?: readonly string[];
  /** Largest file `collect` reads back. Default 256 MiB; a larger file is an error. */
  collectMaxBytes?: number;
  /**
   * After the command exited 0, the launcher derives the plan's evidence itself, with nothing
   * else of the sandbox left alive, and sends it over its control channel (plan-evidence.ts):
   * it arrives in `SandboxResult.artifacts` and through `onArtifact`, never from /work.
   */
  evidence?: EvidenceRequest;
  /** Called with each artifact of `evidence` as it arrives (before the exit report). Must not throw. */
  onArtifact?: (name: string, bytes: Buffer) => void;
  /**
   * Before the command: the launcher unpacks the gzip'd tar `archive` into `into` (absent before)
   * and copies `copy` into its `workingDirectory` (sandbox-unpack.mjs); paths inside the sandbox.
   * When it cannot, it leaves nothing behind and the command finds `into` missing.
   */
  unpack?: { archive: string; into: string; workingDirectory: string; copy: readonly string[] };
  /**
   * Called with each step mark the command writes (its fd 3) while it runs, and a reader of files
   * in /work as `collect` reads them (null when missing; rejects once the sandbox is gone). Must
   * not throw.
   */
  onMark?: (name: string, read: (relative: string) => Promise<Buffer | null>) => void;
}

export type SandboxOptions = SandboxShape & SandboxRun;

/** When things happened in one sandbox, as wall-clock milliseconds (`performance.timeOrigin` based). */
export interface SandboxTimings {
  /** bwrap was spawned. */
  spawnedAt: number;
  /** The launcher reported it booted (null if it never did). */
  readyAt: number | null;
  /** The attempt's files were in place and its start message was sent. */
  handedOverAt: number;
  /** The command was spawned inside (null if it never was). */
  startedAt: number | null;
  /** Step boundaries the command marked (its fd 3), and `plan-diff` when the launcher built it. */
  marks: { name: string; at: number }[];
  /** The launcher reported the exit (after the plan-diff, if any). */
  exitedAt: number | null;
  /** bwrap ended. */
  endedAt: number;
  /** The collected files were read back. */
  collectedAt: number;
}

export interface SandboxResult {
  sandboxId: string;
  name: string;
  baseProfile: typeof SANDBOX_BASE_PROFILE;
  /** Whether the command itself was started inside the sandbox. */
  started: boolean;
  /** The command's exit code; null when it was killed by a signal or the sandbox was killed. Set to bwrap's status when the sandbox failed before the command ran. */
  exitCode: number | null;
  /** The signal that ended the command (or the sandbox, when it had to be SIGKILLed). */
  signal: NodeJS.Signals | null;
  /** The wall-clock limit was reached. */
  timedOut: boolean;
  /** The abort signal fired (before or during the run). */
  interrupted: boolean;
  /** The sandbox had to be SIGKILLed after the grace period. */
  killed: boolean;
  durationMs: number;
  /** The `collect` files by relative path. */
  files: Record<string, Buffer | null>;
  /** A sandbox-level failure (bwrap or the launcher), not the command's own. */
  error?: string;
  /** The limit that stopped the command (it was ended, or failed on it), or null. */
  limit: SandboxLimitKind | null;
  /** With `evidence`: the artifacts the launcher sent over its control channel, by name (only those of an exit report; see plan-evidence.ts). */
  artifacts: Record<string, Buffer>;
  /** The most the sandbox used while it ran, as sampled by the host. */
  usage: { memoryBytes: number; processes: number; cpuSeconds: number; diskBytes: number | null };
  timings: SandboxTimings;
}

/** A fresh sandbox id: `sbx-` and 16 characters of [0-9a-z]. */
export function newSandboxId(): string {
  let suffix = "";
  while (suffix.length < 16) {
    for (const byte of randomBytes(32)) {
      if (byte >= SANDBOX_ID_UNBIASED_LIMIT) continue;
      suffix += SANDBOX_ID_ALPHABET[byte % SANDBOX_ID_ALPHABET.length];
      if (suffix.length === 16) break;
    }
  }
  return `sbx-${suffix}`;
}

export function isSandboxId(value: unknown): value is string {
  return typeof value === "string" && SANDBOX_ID_PATTERN.test(value);
}

/** What `bwrapArgs` needs to know about one attempt's host side. */
export interface BwrapLayout {
  name: string;
  /** Host directory mounted read-write at /work. */
  workDir: string;
  /** Host directory holding the generated passwd, group, hosts and nsswitch.conf. */
  etcDir: string;
  launcherPath: string;
  nodePath: string;
  /** Host directory holding the API channel socket (named API_SOCKET_NAME), if the attempt has one. */
  apiSocketDir?: string;
  /** A caller-managed API channel socket, if the attempt uses one. */
  apiSocketPath?: string;
  readOnlyBinds: ReadonlyArray<Required<ReadOnlyBind>>;
  /** The plan-diff builder's path inside, for the launcher to load at boot. */
  planDiffBuilder?: string;
  /**
   * As root: the sandbox's own uid (and gid); bwrap keeps only the capabilities setpriv needs to
   * switch to it, and setpriv drops them all before the launcher starts. Otherwise (undefined):
   * a user namespace with UNPRIVILEGED_INSIDE_ID inside.
   */
  uid?: number;
  /** Host directory mounted read-write at /tmp (on the sandbox's size-limited tmpfs); default a private tmpfs. */
  tmpDir?: string;
  /** Whether bwrap gets the seccomp filter on SECCOMP_FD. */
  seccomp: boolean;
}

/**
 * The whole bwrap command line, in one place. As root without a user namespace, every isolation
 * property here comes from a flag; removing one removes that property.
 */
export function bwrapArgs(layout: BwrapLayout): string[] {
  const args: string[] = [];
  const add = (...parts: string[]) => args.push(...parts);
  // bwrap makes the missing parents of a mount point owner-only (0700, root's): create them
  // world-traversable first, or the sandbox's own uid could not reach e.g. /etc/ssl.
  const made = new Set<string>(["/"]);
  const parents = (target: string) => {
    const missing: string[] = [];
    for (let dir = path.posix.dirname(target); !made.has(dir) && !isUnder(dir, "/usr") && dir !== "/usr"; dir = path.posix.dirname(dir)) missing.unshift(dir);
    for (const dir of missing) {
      made.add(dir);
      add("--perms", "0755", "--dir", dir);
    }
  };

  // Namespaces.
  add("--unshare-pid"); // own PID namespace: sees only its own processes; all die with its pid 1
  add("--unshare-ipc"); // no System V IPC / POSIX message queues shared with the host
  add("--unshare-uts"); // own hostname, so --hostname does not touch the host's
  add("--unshare-cgroup"); // /proc/self/cgroup shows the sandbox as the root, hiding the host's layout
  add("--unshare-net"); // only a private loopback: no route anywhere; the API channel is the one way out
  add("--hostname", layout.name); // the attempt's sandbox name, visible to the command and in logs

  // Process lifetime and privileges.
  add("--die-with-parent"); // PR_SET_PDEATHSIG: if the runner dies (even SIGKILL), the sandbox dies with it
  add("--new-session"); // setsid(): no controlling terminal, so no TIOCSTI injection into the runner's tty
  if (layout.uid !== undefined) {
    // As root: only what setpriv needs to become the sandbox's own uid; it then clears every
    // capability set (effective, permitted, inheritable, ambient, bounding) before the launcher.
    add("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP");
  } else {
    // Not root: a user namespace mapping the runner's uid to an ordinary uid inside, no capabilities.
    add("--unshare-user", "--uid", String(UNPRIVILEGED_INSIDE_ID), "--gid", String(UNPRIVILEGED_INSIDE_ID));
    add("--cap-drop", "ALL");
  }
  // The seccomp filter (scripts/sandbox-seccomp): ptrace, mount, namespaces, keyrings, bpf, perf,
  // modules… fail with EPERM. bwrap also sets no_new_privs, so nothing can regain a privilege.
  if (layout.seccomp) add("--seccomp", String(SECCOMP_FD));

  // Environment: the launcher gets only these; the command's env comes over the control channel.
  add("--clearenv"); // nothing of the runner's environment (tokens, keys, DATABASE_URL…) leaks in
  add("--setenv", "PATH", SANDBOX_DEFAULT_PATH);
  add("--setenv", "HOME", SANDBOX_WORK_DIR);

  // Filesystem: a fresh tmpfs root holding only what a tofu run needs, made read-only at the end.
  add("--ro-bind", "/usr", "/usr"); // binaries and libraries (sh, coreutils, libc, node on Debian)
  for (const top of ["bin", "sbin", "lib", "lib32", "lib64", "libx32"]) {
    // Debian's merged /usr makes these symlinks; recreate them as such (or bind a real directory).
    const host = `/${top}`;
    const kind = hostEntryKind(host);
    if (kind === "symlink") add("--symlink", readlinkSync(host), host);
    else if (kind === "directory") add("--ro-bind", host, host);
  }
  parents("/etc/ld.so.cache");
  add("--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"); // the dynamic loader's library index
  add("--ro-bind-try", "/etc/alternatives", "/etc/alternatives"); // Debian's symlinks behind e.g. awk
  add("--ro-bind-try", "/etc/ssl", "/etc/ssl"); // CA certificates, should a provider ever need TLS to the channel
  for (const file of ["passwd", "group", "hosts", "nsswitch.conf"]) {
    // Generated minimal files instead of the host's: no host accounts or host names inside.
    add("--ro-bind", path.join(layout.etcDir, file), `/etc/${file}`);
  }
  add("--proc", "/proc"); // a procfs of the sandbox's own PID namespace only
  add("--dev", "/dev"); // a minimal /dev: null, zero, full, random, urandom, tty, shm, pts
  if (layout.tmpDir !== undefined)
    add("--bind", layout.tmpDir, "/tmp"); // private scratch space on the sandbox's size-limited tmpfs
  else add("--size", String(TMP_SIZE_BYTES), "--tmpfs", "/tmp"); // private, bounded scratch space
  add("--bind", layout.workDir, SANDBOX_WORK_DIR); // the private work dir, a host temp dir so results can be read back
  parents(SANDBOX_LAUNCHER_PATH);
  add("--ro-bind", layout.launcherPath, SANDBOX_LAUNCHER_PATH); // the first process (and loopback forwarder)
  add("--ro-bind", path.join(path.dirname(layout.launcherPath), LAUNCHER_UNPACK_MODULE), path.posix.join(path.posix.dirname(SANDBOX_LAUNCHER_PATH), LAUNCHER_UNPACK_MODULE)); // the launcher's unpacker
  if (!isUnder(layout.nodePath, "/usr")) {
    parents(layout.nodePath);
    add("--ro-bind", layout.nodePath, layout.nodePath);
  } // node outside /usr
  if (layout.apiSocketDir !== undefined) {
    add("--ro-bind", layout.apiSocketDir, SANDBOX_API_SOCKET_DIR); // the API channel; connect() works on a read-only mount
  } else if (layout.apiSocketPath !== undefined) {
    parents(SANDBOX_API_SOCKET_PATH);
    add("--ro-bind", layout.apiSocketPath, SANDBOX_API_SOCKET_PATH);
  }
  for (const bind of layout.readOnlyBinds) {
    parents(bind.target);
    add("--ro-bind", bind.source, bind.target); // e.g. .tools
  }
  add("--remount-ro", "/"); // the root tmpfs (and so /etc, /run, /opt) becomes read-only; /work and /tmp stay writable
  // As root, bwrap itself (without CAP_DAC_OVERRIDE) cannot enter the sandbox uid's /work: the
  // launcher starts the command there instead.
  if (layout.uid === undefined) add("--chdir", SANDBOX_WORK_DIR);

  if (layout.uid !== undefined) {
    const id = String(layout.uid);
    // The effective gid nogroup, the real gid the sandbox's own: the launcher switches its
    // effective gid to the real one first thing, which makes it non-dumpable (fs.suid_dumpable), so
    // the command, although of the same uid, cannot open its /proc/<pid>/mem (plan-evidence.ts).
    // The command it starts has the sandbox's gid for real, effective and saved.
    add(SETPRIV, `--reuid=${id}`, `--rgid=${id}`, `--egid=${NOGROUP_GID}`, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--");
  }
  add(layout.nodePath, SANDBOX_LAUNCHER_PATH);
  if (layout.apiSocketDir !== undefined || layout.apiSocketPath !== undefined) {
    add("--api-socket", SANDBOX_API_SOCKET_PATH, "--api-port", String(SANDBOX_API_PORT));
  }
  if (layout.planDiffBuilder !== undefined) add("--plan-diff-builder", layout.planDiffBuilder);
  return args;
}

function hostEntryKind(p: string): "symlink" | "directory" | "other" | "missing" {
  try {
    const stat = lstatSync(p);
    if (stat.isSymbolicLink()) return "symlink";
    return stat.isDirectory() ? "directory" : "other";
  } catch {
    return "missing";
  }
}

function isUnder(p: string, dir: string): boolean {
  const relative = path.relative(dir, p);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

/** A relative path that stays inside the work directory, normalised; throws otherwise. */
function workRelative(p: string, what: string): string {
  const normal = path.posix.normalize(p);
  if (p === "" || path.posix.isAbsolute(p) || normal === "." || normal === ".." || normal.startsWith("../")) {
    throw new Error(`${what}: '${p}' is not a relative path inside the work directory`);
  }
  return normal;
}

/** The attempt's read-only files, owned by the runner (0444), into the sandbox's read-only input directory. */
async function writeReadOnlyFiles(inputDir: string | undefined, files: SandboxRun["readOnlyFiles"]): Promise<void> {
  const entries = Object.entries(files ?? {});
  if (entries.length === 0) return;
  if (inputDir === undefined) throw new Error("readOnlyFiles: this sandbox has no readOnlyInputDir");
  for (const [name, contents] of entries) {
    if (!/^[A-Za-z0-9._-]+$/.test(name) || name === "." || name === "..") throw new Error(`readOnlyFiles: '${name}' is not a plain file name`);
    await writeFile(path.join(inputDir, name), contents, { mode: 0o444, flag: "wx" });
  }
}

function resolveBinds(binds: SandboxOptions["readOnlyBinds"]): Required<ReadOnlyBind>[] {
  return (binds ?? []).map((bind) => {
    const { source, target } = typeof bind === "string" ? { source: bind, target: bind } : bind;
    const resolvedTarget = path.posix.normalize(target ?? source);
    if (!path.isAbsolute(source) || !path.posix.isAbsolute(resolvedTarget)) {
      throw new Error(`readOnlyBinds: '${source}' → '${resolvedTarget}' must both be absolute`);
    }
    for (const reserved of ["/", "/usr", "/etc", "/proc", "/dev", "/tmp", "/run", SANDBOX_WORK_DIR]) {
      if (resolvedTarget === reserved || (reserved !== "/" && isUnder(resolvedTarget, reserved))) {
        throw new Error(`readOnlyBinds: target '${resolvedTarget}' would cover the sandbox's own ${reserved}`);
      }
    }
    return { source, target: resolvedTarget };
  });
}

function etcFiles(name: string, uid: number): Record<string, string> {
  return {
    passwd: `root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nstackship:x:${uid}:${uid}:StackShip sandbox:/work:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\nstackship:x:${uid}:\nnogroup:x:65534:\n`,
    hosts: `127.0.0.1\tlocalhost ${name}\n::1\tlocalhost ip6-localhost ip6-loopback\n`,
    "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
  };
}

async function readCollected(workDir: string, relative: string, maxBytes: number): Promise<Buffer | null> {
  const full = path.join(workDir, relative);
  // The sandbox wrote this tree: a symlink in it must not make the runner read a host file.
  // Opened, checked and (when small) read with synchronous calls: the sandbox's tmpfs answers at
  // once, and the thread pool's round trips cost more than the reads (SYNC_IO_MAX_BYTES).
  let parent: string;
  try {
    parent = realpathSync(path.dirname(full));
  } catch {
    return null;
  }
  if (parent !== workDir && !isUnder(parent, workDir)) return null;
  let fd: number;
  try {
    fd = openSync(path.join(parent, path.basename(full)), fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return null;
    if (stat.size > maxBytes) throw new Error(`collect: ${relative} is ${stat.size} bytes, more than ${maxBytes}`);
    if (stat.size <= SYNC_IO_MAX_BYTES) {
      const buffer = Buffer.allocUnsafe(stat.size + 1);
      let filled = 0;
      for (let n; filled < buffer.length && (n = readSync(fd, buffer, filled, buffer.length - filled, filled)) > 0;) filled += n;
      // Still growing (a process left behind writes to it): read to its end like a large file.
      if (filled <= stat.size) return buffer.subarray(0, filled);
    }
    return await readFileOfFd(fd);
  } finally {
    closeSync(fd);
  }
}

const readFileOfFd = promisify((fd: number, callback: (error: NodeJS.ErrnoException | null, data: Buffer) => void) => readFileCallback(fd, callback));

const now = () => performance.timeOrigin + performance.now();

const isRoot = () => process.getuid?.() === 0;

/** The limits with every default filled in; throws on a value that is not a positive whole number. */
export function resolveLimits(limits: Partial<SandboxLimits> | undefined): SandboxLimits {
  const resolved = { ...DEFAULT_SANDBOX_LIMITS, ...Object.fromEntries(Object.entries(limits ?? {}).filter(([, v]) => v !== undefined)) };
  for (const [key, value] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`sandbox limits: ${key} must be a positive whole number, not ${value}`);
  }
  return resolved as SandboxLimits;
}

/** The uids of this process's live sandboxes, so that two never share one (RLIMIT_NPROC counts per uid). */
const uidsInUse = new Set<number>();

function allocateUid(): number {
  for (;;) {
    const uid = SANDBOX_UID_BASE + randomInt(SANDBOX_UID_RANGE);
    if (!uidsInUse.has(uid)) {
      uidsInUse.add(uid);
      return uid;
    }
  }
}

/** Mounts the sandbox's own tmpfs (the disk limit) at `dir`, owned by the sandbox's uid. */
async function mountSandboxFs(dir: string, sizeBytes: number, uid: number, sandboxId: string): Promise<void> {
  await runHostTool("mount", ["-t", "tmpfs", "-o", `size=${sizeBytes},mode=0700,uid=${uid},gid=${uid},nosuid,nodev`, `stackship-${sandboxId}`, dir]);
}

async function unmountSandboxFs(dir: string): Promise<void> {
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
    const mountPoint = before.split(" ")[4]?.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    if (fsType === "tmpfs" && /^stackship-sbx-[0-9a-z]{16}$/.test(source ?? "") && mountPoint !== undefined && path.basename(mountPoint) === "fs") points.push(mountPoint);
  }
  return points;
}

let staleSweep: Promise<void> | undefined;

/**
 * A runner that died (even SIGKILL) leaves its sandboxes' tmpfs mounts behind: their processes died
 * with it (--die-with-parent) but the mounts hold memory until unmounted. Once per process, remove
 * those whose owner (recorded beside the mount as pid and start time) no longer runs.
 */
/** Sandboxes whose host side is still being removed (`run` with `releaseLater`). */
const pendingReleases = new Set<Promise<void>>();

function trackRelease(release: Promise<void>): void {
  // A failed unmount leaves a mount that the next start's sweep removes (sweepStaleSandboxMounts).
  const tracked: Promise<void> = release.catch(() => undefined).finally(() => pendingReleases.delete(tracked));
  pendingReleases.add(tracked);
}

/** Resolves once every sandbox released later has its host side removed. */
export async function sandboxReleasesSettled(): Promise<void> {
  while (pendingReleases.size > 0) await Promise.all([...pendingReleases]);
}

function sweepStaleMounts(): Promise<void> {
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

/** Gives the sandbox's uid everything the runner wrote into its work directory (no symlink is followed). */
async function chownTree(dir: string, uid: number, { sync = false } = {}): Promise<void> {
  // Synchronously for the few files of a handoff (SYNC_IO_MAX_BYTES).
  if (sync) {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      lchownSync(full, uid, uid);
      if (entry.isDirectory()) await chownTree(full, uid, { sync });
    }
    return;
  }
  const entries = await readdir(dir, { withFileTypes: true });
  await Promise.all(
    entries.map(async (entry) => {
      const full = path.join(dir, entry.name);
      await lchown(full, uid, uid);
      if (entry.isDirectory()) await chownTree(full, uid);
    }),
  );
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
      if (fields !== undefined) sample.cpuSeconds += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_SECOND;
    } catch {
      // Exited meanwhile.
    }
  }
  return sample;
}

/** The run options checked and normalised; throws before anything starts. */
function checkRun(options: SandboxRun) {
  if (options.argv.length === 0) throw new Error("runInSandbox: argv is empty");
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (!/^[^=\0]+$/.test(key) || typeof value !== "string" || value.includes("\0")) {
      throw new Error(`runInSandbox: env ${JSON.stringify(key)} is not a valid environment entry`);
    }
  }
  return {
    files: Object.entries(options.files ?? {}).map(([p, contents]) => [workRelative(p, "files"), contents] as const),
    collect: (options.collect ?? []).map((p) => [p, workRelative(p, "collect")] as const),
  };
}

/** A process as pid and start time (pids are reused), of bwrap's first child. */
function processIdentity(bwrapPid: number | undefined): { pid: number; startTime: string } | undefined {
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
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Whether this very process still runs (a zombie has exited). */
function isRunning(process: { pid: number; startTime: string }): boolean {
  const fields = statFields(process.pid);
  return fields !== undefined && fields[19] === process.startTime && fields[0] !== "Z";
}

/** How one sandbox is confined beyond its bwrap flags. */
interface Confinement {
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

type ControlMessage = { type?: unknown; code?: unknown; signal?: unknown; message?: unknown; name?: unknown; at?: unknown; output?: unknown };

/**
 * One started sandbox: bwrap and its launcher, booted and waiting for exactly one attempt
 * (`run`), or to be destroyed. Nothing of the attempt is in it before `run`.
 */
export class Sandbox {
  /** Resolves true once the launcher reported it booted, false if the sandbox ended before. */
  readonly ready: Promise<boolean>;
  private readonly child: ReturnType<typeof spawn>;
  private readonly control: net.Socket;
  private readonly closed: Promise<[number | null, NodeJS.Signals | null]>;
  private ended = false;
  private used = false;
  private cleanup: Promise<void> | undefined;
  private readonly spawnedAt = now();
  private readyAt: number | null = null;
  private startedAt: number | null = null;
  private exitedAt: number | null = null;
  private readonly marks: { name: string; at: number }[] = [];
  /** The namespace's init process on the host (bwrap's child), learnt once the launcher is up. */
  private innerInit: { pid: number; startTime: string } | undefined;
  private report: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** The artifacts the launcher sent (plan-evidence.ts), and who hears of each as it arrives. */
  private readonly artifacts: Record<string, Buffer> = {};
  private onArtifact: ((name: string, bytes: Buffer) => void) | undefined;
  /** Resolves when the launcher reports the command's exit (never if it does not). */
  private readonly exitReported: Promise<void>;
  private markExitReported: () => void = () => {};
  /** Bytes received on bwrap's stdout and stderr, and what the exit report says the launcher wrote there. */
  private readonly received = { stdout: 0, stderr: 0 };
  private reportedOutput: { stdout: number; stderr: number } | undefined;
  /** Resolves once all the output the exit report counts has arrived (never if it does not add up). */
  private readonly outputDrained: Promise<void>;
  private markOutputDrained: () => void = () => {};
  private launcherError: string | undefined;
  private onOutput: ((chunk: Buffer, stream: OutputStream) => void) | undefined;
  private onMark: ((name: string) => void) | undefined;
  /** Output before the handoff (the launcher prints none; kept for the attempt's log should it). */
  private early: [Buffer, OutputStream][] = [];

  /** @internal use `startSandbox`. */
  constructor(
    readonly sandboxId: string,
    readonly name: string,
    private readonly hostDir: string,
    private readonly workDir: string,
    private readonly channel: ApiChannel | undefined,
    args: string[],
    bwrapPath: string,
    private readonly confinement: Confinement,
  ) {
    this.child = spawn(bwrapPath, args, { stdio: ["ignore", "pipe", "pipe", "pipe", confinement.seccompFd ?? "ignore"], env: {} });
    if (confinement.seccompFd !== undefined) closeSync(confinement.seccompFd);
    this.control = this.child.stdio[CONTROL_FD] as net.Socket;
    const deliver = (stream: OutputStream) => (chunk: Buffer) => {
      this.received[stream] += chunk.length;
      this.checkDrained();
      if (this.onOutput) this.onOutput(chunk, stream);
      else if (!this.used) this.early.push([chunk, stream]);
    };
    this.child.stdout!.on("data", deliver("stdout"));
    this.child.stderr!.on("data", deliver("stderr"));
    let markReady: (ready: boolean) => void = () => {};
    this.exitReported = new Promise((resolve) => (this.markExitReported = resolve));
    this.outputDrained = new Promise((resolve) => (this.markOutputDrained = resolve));
    this.ready = new Promise((resolve) => (markReady = resolve));
    this.closed = new Promise((resolve) => {
      this.child.once("error", (error) => {
        this.launcherError ??= `bwrap: ${error.message}`;
        resolve([null, null]);
      });
      this.child.once("close", (code, signal) => resolve([code, signal]));
    }).then(async (status) => {
      await this.innerInitGone();
      this.ended = true;
      markReady(false);
      return status as [number | null, NodeJS.Signals | null];
    });
    const reader = new ControlReader(
      DEFAULT_COLLECT_MAX_BYTES,
      (item) => {
        if (item.kind === "artifact") {
          // Only before the exit report: the evidence is what the launcher sent for this attempt.
          if (this.report !== undefined || item.name in this.artifacts) return;
          this.artifacts[item.name] = item.bytes;
          this.onArtifact?.(item.name, item.bytes);
          return;
        }
        const message = item.message as ControlMessage;
        const at = typeof message.at === "number" ? message.at : now();
        if (message.type === "ready") {
          this.readyAt = at;
          this.innerInit = processIdentity(this.child.pid);
          markReady(true);
        } else if (message.type === "started") this.startedAt = at;
        else if (message.type === "mark" && typeof message.name === "string") {
          this.marks.push({ name: message.name, at });
          this.onMark?.(message.name);
        } else if (message.type === "exit") {
          this.exitedAt = at;
          this.report = {
            code: typeof message.code === "number" ? message.code : null,
            signal: typeof message.signal === "string" ? (message.signal as NodeJS.Signals) : null,
          };
          const output = message.output as { stdout?: unknown; stderr?: unknown } | undefined;
          if (typeof output?.stdout === "number" && typeof output.stderr === "number") this.reportedOutput = { stdout: output.stdout, stderr: output.stderr };
          this.markExitReported();
          this.checkDrained();
        } else if (message.type === "error") this.launcherError = String(message.message);
      },
      (problem) => (this.launcherError ??= `the launcher's control channel: ${problem}`),
    );
    this.control.on("error", () => {});
    this.control.on("data", (data: Buffer) => reader.push(data));
  }

  /** Exactly the reported bytes arrived on both streams (more than reported: something else wrote there; only bwrap's end says then). */
  private checkDrained(): void {
    const expected = this.reportedOutput;
    if (expected !== undefined && this.received.stdout === expected.stdout && this.received.stderr === expected.stderr) this.markOutputDrained();
  }

  /** Resolves once bwrap ended (its whole PID namespace with it). */
  get whenEnded(): Promise<void> {
    return this.closed.then(() => undefined);
  }

  /**
   * bwrap can end before its inner init (the PID namespace's pid 1, which reaps everything in the
   * namespace) has finished exiting: wait for that too, so that nothing of the sandbox runs once it
   * counts as ended. Bounded; a zombie (dead, waiting for the host's init to reap it) counts as gone.
   */
  private async innerInitGone(): Promise<void> {
    const inner = this.innerInit;
    if (inner === undefined) return;
    const deadline = performance.now() + 2_000;
    while (isRunning(inner) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  /** Whether the sandbox is still running and has not been handed an attempt. */
  get available(): boolean {
    return !this.ended && !this.used;
  }

  /** bwrap's process id on the host (undefined if it could not be spawned). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  private send(message: object): void {
    if (!this.control.destroyed && this.control.writable) this.control.write(`${JSON.stringify(message)}\n`);
  }

  /** Ends the sandbox (if still running) and removes its host side. Idempotent. */
  async destroy(): Promise<void> {
    this.used = true;
    await this.end();
    await this.release();
  }

  /**
   * Ends a sandbox that is still running: closing the control channel makes the launcher kill
   * its command's process group and exit, so bwrap reaps the whole PID namespace before it ends
   * (a SIGKILL of bwrap would leave its inner init to be reaped by the host's); SIGKILL only if
   * that does not happen within a second.
   */
  private async end(): Promise<void> {
    if (this.ended) return;
    this.control.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 1_000);
    await this.closed;
    clearTimeout(timer);
  }

  private release(): Promise<void> {
    this.cleanup ??= (async () => {
      this.control.destroy();
      await this.channel?.close();
      if (this.confinement.fsDir !== undefined) await unmountSandboxFs(this.confinement.fsDir);
      await rm(this.hostDir, { recursive: true, force: true });
      if (this.confinement.uid !== undefined) uidsInUse.delete(this.confinement.uid);
    })();
    return this.cleanup;
  }

  /** The command line prefix that runs the command under the per-process backstops of the sandbox's limits. */
  private limitWrapper(): string[] {
    const { limits } = this.confinement;
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
  private watch(result: SandboxResult, onLimit: (kind: SandboxLimitKind) => void): () => void {
    const { limits, fsDir } = this.confinement;
    const pid = this.child.pid;
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

  /** What `run` needs once the command reported its exit: the collected files and the traces of a limit. */
  private async inspectAfterExit(
    result: SandboxResult,
    report: { code: number | null; signal: NodeJS.Signals | null },
    collect: readonly (readonly [string, string])[],
    collectMaxBytes: number,
  ): Promise<{ files: (Buffer | null)[]; limit: SandboxLimitKind | null }> {
    const [files, limit] = await Promise.all([
      Promise.all(collect.map(([, relative]) => readCollected(this.workDir, relative, collectMaxBytes))),
      this.limitAfterwards({ ...result, exitCode: report.code, signal: report.signal }),
    ]);
    return { files, limit };
  }

  /** After a command that did not succeed: which limit it ran into, if its traces say so. */
  private async limitAfterwards(result: SandboxResult): Promise<SandboxLimitKind | null> {
    const { limits, fsDir } = this.confinement;
    if (result.signal === "SIGXFSZ") return "file_size";
    if (result.signal === "SIGXCPU") return "cpu";
    const fs = fsDir !== undefined ? await statfs(fsDir).catch(() => undefined) : undefined;
    // On the sandbox's own tmpfs, a file of the size limit needs at least that much of it in use:
    // below that, no walk of the tree is needed.
    const couldHoldOne = fs === undefined || (fs.blocks - fs.bfree) * fs.bsize >= limits.fileSizeBytes;
    if (couldHoldOne && (await hasFileOfSize(fsDir ?? this.workDir, limits.fileSizeBytes))) return "file_size";
    if (fs !== undefined && fs.bfree * fs.bsize < DISK_FULL_SLACK_BYTES) return "disk";
    if (result.usage.processes >= limits.processes && !(result.exitCode === 0 && result.signal === null)) return "processes";
    return null;
  }

  /**
   * Hands the attempt over: its files into /work, then its command and environment over the
   * control channel. The wall-clock limit counts from here. A sandbox serves one attempt only and
   * is gone (process tree and host directory) when this returns.
   */
  async run(options: SandboxRun, { startedForThisRun = false, releaseLater = false } = {}): Promise<SandboxResult> {
    if (this.used) throw new Error(`sandbox ${this.sandboxId} already served an attempt`);
    this.used = true;
    let checked: ReturnType<typeof checkRun>;
    try {
      checked = checkRun(options);
    } catch (error) {
      await this.destroy();
      throw error;
    }
    const { files, collect } = checked;
    const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    const interruptGraceMs = options.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS;
    const collectMaxBytes = options.collectMaxBytes ?? DEFAULT_COLLECT_MAX_BYTES;
    let handedOverAt = now();
    const result: SandboxResult = {
      sandboxId: this.sandboxId,
      name: this.name,
      baseProfile: SANDBOX_BASE_PROFILE,
      started: false,
      exitCode: null,
      signal: null,
      timedOut: false,
      interrupted: false,
      killed: false,
      durationMs: 0,
      files: Object.fromEntries(collect.map(([p]) => [p, null])),
      limit: null,
      artifacts: {},
      usage: { memoryBytes: 0, processes: 0, cpuSeconds: 0, diskBytes: this.confinement.fsDir !== undefined ? 0 : null },
      timings: { spawnedAt: this.spawnedAt, readyAt: null, handedOverAt, startedAt: null, marks: this.marks, exitedAt: null, endedAt: handedOverAt, collectedAt: handedOverAt },
    };
    if (options.signal?.aborted) {
      result.interrupted = true;
      await this.destroy();
      return result;
    }

    let outputError: unknown;
    const timers = new Set<NodeJS.Timeout>();
    let finished = false;
    let stopWatching = () => {};
    try {
      if (options.copyDir !== undefined) {
        await cp(options.copyDir, this.workDir, { recursive: true, verbatimSymlinks: true, errorOnExist: false, force: true });
      }
      const small = files.reduce((total, [, contents]) => total + (typeof contents === "string" ? Buffer.byteLength(contents) : contents.byteLength), 0) <= SYNC_IO_MAX_BYTES;
      await Promise.all(
        files.map(async ([relative, contents]) => {
          const full = path.join(this.workDir, relative);
          if (small) {
            mkdirSync(path.dirname(full), { recursive: true });
            writeFileSync(full, contents);
            return;
          }
          await mkdir(path.dirname(full), { recursive: true });
          await writeFile(full, contents);
        }),
      );
      // As root the sandbox runs as its own uid: what the runner wrote becomes the sandbox's.
      if (this.confinement.uid !== undefined) await chownTree(this.workDir, this.confinement.uid, { sync: small && options.copyDir === undefined });
      await writeReadOnlyFiles(this.confinement.inputDir, options.readOnlyFiles);

      const onOutput = options.onOutput;
      this.onOutput = (chunk, stream) => {
        if (outputError !== undefined || onOutput === undefined) return;
        try {
          onOutput(chunk, stream);
        } catch (error) {
          outputError = error;
        }
      };
      for (const [chunk, stream] of this.early.splice(0)) this.onOutput(chunk, stream);
      const onMark = options.onMark;
      if (onMark !== undefined) {
        const read = async (relative: string) => readCollected(this.workDir, workRelative(relative, "collect"), collectMaxBytes);
        this.onMark = (name) => onMark(name, read);
      }
      this.onArtifact = options.onArtifact;

      const later = (ms: number, fn: () => void) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!finished) fn();
        }, ms);
        timers.add(timer);
      };
      let terminating = false;
      const terminate = () => {
        if (terminating) return;
        terminating = true;
        this.send({ type: "signal", signal: "SIGTERM" });
        later(killGraceMs, () => {
          result.killed = true;
          this.child.kill("SIGKILL");
        });
      };
      const onAbort = () => {
        result.interrupted = true;
        this.send({ type: "signal", signal: "SIGINT" });
        later(interruptGraceMs, terminate);
      };

      const env = { PATH: SANDBOX_DEFAULT_PATH, HOME: SANDBOX_WORK_DIR, ...options.env };
      handedOverAt = result.timings.handedOverAt = now();
      this.send({
        type: "start",
        argv: options.argv,
        wrapper: this.limitWrapper(),
        env,
        cwd: SANDBOX_WORK_DIR,
        ...(options.evidence ? { evidence: options.evidence } : {}),
        ...(options.unpack ? { unpack: options.unpack } : {}),
      });
      stopWatching = this.watch(result, (kind) => {
        // A limit reached: the whole sandbox ends at once (a fork bomb gets no grace period).
        if (result.limit !== null) return;
        result.limit = kind;
        result.killed = true;
        this.child.kill("SIGKILL");
      });
      if (options.timeoutMs !== undefined) {
        later(options.timeoutMs, () => {
          result.timedOut = true;
          terminate();
        });
      }
      options.signal?.addEventListener("abort", onAbort, { once: true });
      // An abort that landed while the files were being written.
      if (options.signal?.aborted && !result.interrupted) onAbort();

      // Once the command reported its exit, what it left is read (and checked for the traces of a
      // limit) while bwrap tears the sandbox down. This returns once bwrap ended or, when the
      // caller releases the sandbox later, as soon as all the output the exit report counts has
      // arrived (the rest of the teardown is then part of the release).
      const afterExit = Promise.race([this.exitReported, this.closed]).then(() =>
        this.report === undefined ? undefined : this.inspectAfterExit(result, this.report, collect, collectMaxBytes),
      );
      afterExit.catch(() => undefined);
      const ended = await Promise.race([this.closed, ...(releaseLater ? [this.outputDrained.then(() => null)] : [])]);
      const [bwrapCode, bwrapSignal] = ended ?? [null, null];
      // Output after this point (of a process the command left behind) is not the attempt's.
      this.onOutput = undefined;
      finished = true;
      stopWatching();
      options.signal?.removeEventListener("abort", onAbort);
      result.timings.endedAt = now();
      result.durationMs = Math.round(result.timings.endedAt - (startedForThisRun ? this.spawnedAt : handedOverAt));
      result.started = this.startedAt !== null;

      if (this.report !== undefined) {
        result.exitCode = this.report.code;
        result.signal = this.report.signal;
        // Whatever arrived before the exit report (an attempt that failed keeps none).
        if (this.report.code === 0 && this.report.signal === null) result.artifacts = { ...this.artifacts };
      } else if (bwrapSignal !== null) {
        result.signal = bwrapSignal;
      } else {
        result.exitCode = bwrapCode;
        result.error = this.launcherError ?? `the sandbox ended before the command reported an exit (bwrap status ${bwrapCode})`;
      }
      if (this.launcherError !== undefined) result.error = this.launcherError;
      Object.assign(result.timings, { readyAt: this.readyAt, startedAt: this.startedAt, exitedAt: this.exitedAt });

      // Even after an exit 0: a program that ignores a failed write (tofu show into a full disk)
      // leaves a truncated file behind, which must not pass for a result.
      const inspected = this.report !== undefined ? await afterExit : undefined;
      if (result.limit === null && result.started) result.limit = inspected ? inspected.limit : await this.limitAfterwards(result);
      const read = inspected ? inspected.files : await Promise.all(collect.map(([, relative]) => readCollected(this.workDir, relative, collectMaxBytes)));
      collect.forEach(([original], index) => (result.files[original] = read[index]));
      result.timings.collectedAt = now();
    } finally {
      finished = true;
      stopWatching();
      for (const timer of timers) clearTimeout(timer);
      // Only after a failure above, or when it returned on its output, is the sandbox still running
      // here. Ending it, unmounting and removing the host side is off the caller's path when it asks
      // so (the attempt's result no longer depends on it); `sandboxReleasesSettled` waits for it.
      if (releaseLater && outputError === undefined) trackRelease(this.end().then(() => this.release()));
      else {
        await this.end();
        await this.release();
      }
    }
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what was caught, as it was
    if (outputError !== undefined) throw outputError;
    return result;
  }
}

/**
 * Starts a sandbox (bwrap and its launcher, plus its API channel) that waits for one attempt:
 * `run` hands the attempt over, `destroy` ends it unused. A `readOnlyBinds` or `name` is part of
 * the sandbox, not of the attempt, since both are fixed when bwrap starts.
 */
export async function startSandbox(options: SandboxShape): Promise<Sandbox> {
  // Counted for /metrics (stackship_sandbox_boots_total) by outcome.
  return bootSandbox(options).then(
    (sandbox) => (recordSandboxBoot("ok"), sandbox),
    (error: unknown) => (recordSandboxBoot("failed"), Promise.reject(error)),
  );
}

async function bootSandbox(options: SandboxShape): Promise<Sandbox> {
  const sandboxId = options.sandboxId ?? newSandboxId();
  if (!isSandboxId(sandboxId)) throw new Error(`runInSandbox: '${sandboxId}' is not a sandbox id`);
  const name = options.name ?? sandboxId;
  if (!SANDBOX_NAME_PATTERN.test(name)) throw new Error(`runInSandbox: name '${name}' is not a lowercase DNS label`);
  if (options.api !== undefined && options.apiSocketPath !== undefined) {
    throw new Error("runInSandbox: give either api or apiSocketPath, not both");
  }
  const readOnlyBinds = resolveBinds(options.readOnlyBinds);
  if (options.planDiffBuilder !== undefined && !readOnlyBinds.some((bind) => bind.target === options.planDiffBuilder || isUnder(options.planDiffBuilder!, bind.target))) {
    throw new Error(`runInSandbox: the plan-diff builder '${options.planDiffBuilder}' is not under a read-only bind`);
  }
  const nodePath = realpathSync(options.nodePath ?? process.execPath);
  const limits = resolveLimits(options.limits);
  const seccompFilter = options.seccompFilter ?? DEFAULT_SECCOMP_FILTER;
  if (!existsSync(seccompFilter)) {
    throw new Error(`runInSandbox: the sandbox's seccomp filter ${seccompFilter} is missing; build it with scripts/bootstrap-tools`);
  }
  const root = isRoot();
  if (root) {
    for (const tool of [SETPRIV, PRLIMIT]) if (!existsSync(tool)) throw new Error(`runInSandbox: ${tool} is missing (Debian package util-linux)`);
    await sweepStaleMounts();
  }

  const hostDir = await realpath(await mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), `stackship-${sandboxId}-`)));
  let channel: ApiChannel | undefined;
  const confinement: Confinement = { limits };
  try {
    const etcDir = path.join(hostDir, "etc");
    const channelDir = path.join(hostDir, "channel");
    let workDir = path.join(hostDir, "work");
    let tmpDir: string | undefined;
    if (root) {
      // Its own uid, and its own tmpfs for /work and /tmp: the disk limit is the tmpfs's size.
      confinement.uid = allocateUid();
      const fsDir = path.join(hostDir, "fs");
      await mkdir(fsDir, { mode: 0o700 });
      // Who owns the mount, for the sweep after a runner that died without unmounting.
      await writeFile(path.join(hostDir, "owner"), `${process.pid} ${statFields(process.pid)?.[19] ?? ""}\n`);
      await mountSandboxFs(fsDir, limits.diskBytes, confinement.uid, sandboxId);
      confinement.fsDir = fsDir;
      workDir = path.join(fsDir, "work");
      tmpDir = path.join(fsDir, "tmp");
      await mkdir(workDir, { mode: 0o700 });
      await mkdir(tmpDir, { mode: 0o700 });
      await chown(workDir, confinement.uid, confinement.uid);
      await chown(tmpDir, confinement.uid, confinement.uid);
    } else {
      await mkdir(workDir, { mode: 0o700 });
    }
    if (options.readOnlyInputDir !== undefined) {
      confinement.inputDir = path.join(confinement.fsDir ?? hostDir, "input");
      await mkdir(confinement.inputDir, { mode: 0o755 });
      readOnlyBinds.push(...resolveBinds([{ source: confinement.inputDir, target: options.readOnlyInputDir }]));
    }
    await mkdir(etcDir, { mode: 0o700 });
    await Promise.all(Object.entries(etcFiles(name, confinement.uid ?? UNPRIVILEGED_INSIDE_ID)).map(([file, contents]) => writeFile(path.join(etcDir, file), contents)));
    if (options.api !== undefined) {
      await mkdir(channelDir, { mode: 0o700 });
      const socketPath = path.join(channelDir, API_SOCKET_NAME);
      channel = await openApiChannel({ socketPath, target: options.api });
      if (confinement.uid !== undefined) {
        await chown(channelDir, confinement.uid, confinement.uid);
        await chown(socketPath, confinement.uid, confinement.uid);
      }
    }
    if (options.apiSocketPath !== undefined && confinement.uid !== undefined) await chmod(options.apiSocketPath, 0o666);
    confinement.seccompFd = openSync(seccompFilter, "r");
    const args = bwrapArgs({
      name,
      workDir,
      etcDir,
      launcherPath: LAUNCHER_HOST_PATH,
      nodePath,
      apiSocketDir: channel !== undefined ? channelDir : undefined,
      apiSocketPath: options.apiSocketPath,
      readOnlyBinds,
      planDiffBuilder: options.planDiffBuilder,
      uid: confinement.uid,
      tmpDir,
      seccomp: true,
    });
    return new Sandbox(sandboxId, name, hostDir, workDir, channel, args, options.bwrapPath ?? "/usr/bin/bwrap", confinement);
  } catch (error) {
    if (confinement.seccompFd !== undefined) closeSync(confinement.seccompFd);
    await channel?.close();
    if (confinement.fsDir !== undefined) await unmountSandboxFs(confinement.fsDir);
    await rm(hostDir, { recursive: true, force: true });
    if (confinement.uid !== undefined) uidsInUse.delete(confinement.uid);
    throw error;
  }
}

/** What this host lacks to run sandboxes, each with the exact command that fixes it (empty when ready). */
export function sandboxPrerequisites(options: { bwrapPath?: string; seccompFilter?: string } = {}): { problem: string; fix: string }[] {
  const problems: { problem: string; fix: string }[] = [];
  const sudo = isRoot() ? "" : "sudo ";
  const missing: string[] = [];
  const executable = (file: string) => {
    try {
      accessSync(file, fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (!executable(options.bwrapPath ?? "/usr/bin/bwrap")) missing.push("bubblewrap");
  if (!executable(SETPRIV) || !executable(PRLIMIT)) missing.push("util-linux");
  if (isRoot() && (!executable("/usr/bin/mount") || !executable("/usr/bin/umount"))) missing.push("mount");
  if (missing.length > 0) {
    problems.push({
      problem: `the Debian package${missing.length > 1 ? "s" : ""} ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} not installed`,
      fix: `${sudo}apt-get install -y --no-install-recommends ${missing.join(" ")}`,
    });
  }
  if (!existsSync(options.seccompFilter ?? DEFAULT_SECCOMP_FILTER)) {
    problems.push({ problem: `the sandbox's seccomp filter ${options.seccompFilter ?? DEFAULT_SECCOMP_FILTER} has not been built`, fix: "npm run tools" });
  }
  return problems;
}

/** Runs `options.argv` in a fresh sandbox, streams its output, and cleans everything up afterwards. */
export async function runInSandbox(options: SandboxOptions): Promise<SandboxResult> {
  checkRun(options);
  if (options.signal?.aborted) {
    const sandboxId = options.sandboxId ?? newSandboxId();
    const at = now();
    return {
      sandboxId,
      name: options.name ?? sandboxId,
      baseProfile: SANDBOX_BASE_PROFILE,
      started: false,
      exitCode: null,
      signal: null,
      timedOut: false,
      interrupted: true,
      killed: false,
      durationMs: 0,
      files: Object.fromEntries((options.collect ?? []).map((p) => [p, null])),
      limit: null,
      artifacts: {},
      usage: { memoryBytes: 0, processes: 0, cpuSeconds: 0, diskBytes: null },
      timings: { spawnedAt: at, readyAt: null, handedOverAt: at, startedAt: null, marks: [], exitedAt: null, endedAt: at, collectedAt: at },
    };
  }
  // The files are written while bwrap and the launcher boot; the launcher waits for the start message.
  const sandbox = await startSandbox(options);
  return sandbox.run(options, { startedForThisRun: true });
}
