// The sandbox's profile: what a sandbox is made of and may use (its shape, limits and paths inside),
// what an attempt hands it, what comes back, and the sandbox's ids. Types and constants only, plus
// the few pure helpers every other part of the sandbox shares.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { EvidenceRequest } from "../plan-evidence.ts";
import type { ApiTarget } from "../api-channel.ts";

/** The name of the isolation profile every attempt records; change it when `bwrapArgs` changes meaningfully. */
export const SANDBOX_BASE_PROFILE = "stackship-standard-v2";
/** The private, writable work directory inside the sandbox (also HOME and the working directory). */
export const SANDBOX_WORK_DIR = "/work";
/** A conventional read-only mount point for the runner's `.tools` directory (tofu, opa, providers). */
export const SANDBOX_TOOLS_DIR = "/opt/stackship/tools";
/** PATH inside the sandbox unless the caller's env sets one. */
export const SANDBOX_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/** The largest file `collect` reads back and the largest artifact the control channel takes, unless the run says otherwise. */
export const DEFAULT_COLLECT_MAX_BYTES = 256 * 1024 * 1024;

/** The seccomp filter scripts/bootstrap-tools compiles (scripts/sandbox-seccomp). */
export const DEFAULT_SECCOMP_FILTER = fileURLToPath(new URL("../../../../.tools/seccomp/sandbox.bpf", import.meta.url));

export const MIB = 1024 * 1024;

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

/** As root, each sandbox runs as a uid of its own from this range (no account needed: nothing on the host is owned by it). */
export const SANDBOX_UID_BASE = 3_000_000_000;

const SANDBOX_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
// 252 is the largest multiple of 36 below 256: bytes from it up are dropped so every character is equally likely.
const SANDBOX_ID_UNBIASED_LIMIT = 252;
const SANDBOX_ID_PATTERN = /^sbx-[0-9a-z]{16}$/;
// A hostname label, which is also what the name is used as inside.
export const SANDBOX_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

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

export const now = () => performance.timeOrigin + performance.now();

/** Whether `p` is strictly inside `dir`. */
export function isUnder(p: string, dir: string): boolean {
  const relative = path.relative(dir, p);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

/** The limits with every default filled in; throws on a value that is not a positive whole number. */
export function resolveLimits(limits: Partial<SandboxLimits> | undefined): SandboxLimits {
  const resolved = {
    ...DEFAULT_SANDBOX_LIMITS,
    ...Object.fromEntries(Object.entries(limits ?? {}).filter(([, v]) => v !== undefined)),
  };
  for (const [key, value] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new Error(`sandbox limits: ${key} must be a positive whole number, not ${value}`);
  }
  return resolved;
}
