// bwrap's arguments: the whole command line of a sandbox (namespaces, privileges, seccomp, the
// filesystem it sees), in one place, with the host files it mounts.
import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SANDBOX_API_PORT, SANDBOX_API_SOCKET_DIR, SANDBOX_API_SOCKET_PATH } from "../api-channel.ts";
import { isUnder, SANDBOX_DEFAULT_PATH, SANDBOX_WORK_DIR, type ReadOnlyBind, type SandboxOptions } from "./profile.ts";

const TMP_SIZE_BYTES = 256 * 1024 * 1024;

export const LAUNCHER_HOST_PATH = fileURLToPath(new URL("../sandbox-launcher.mjs", import.meta.url));
/** bwrap reads the seccomp filter from this descriptor (the fifth stdio slot). */
const SECCOMP_FD = 4;

/** The uid and gid inside a user namespace, when the runner is not root. */
export const UNPRIVILEGED_INSIDE_ID = 1000;
export const SETPRIV = "/usr/bin/setpriv";
/** The launcher's real gid as root (see bwrapArgs): owns nothing the sandbox can write. */
const NOGROUP_GID = 65534;
const SANDBOX_LAUNCHER_PATH = "/run/stackship/launcher.mjs";
/** The module the launcher imports, bound beside it (same file name inside and on the host). */
const LAUNCHER_UNPACK_MODULE = "sandbox-unpack.mjs";
/** The launcher's own modules (sandbox/launcher-*.mjs), each bound at the same path relative to it as on the host. */
const LAUNCHER_MODULES = readdirSync(path.dirname(fileURLToPath(import.meta.url)))
  .filter((name) => /^launcher-[a-z-]+\.mjs$/.test(name))
  .sort()
  .map((name) => `sandbox/${name}`);

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
    for (
      let dir = path.posix.dirname(target);
      !made.has(dir) && !isUnder(dir, "/usr") && dir !== "/usr";
      dir = path.posix.dirname(dir)
    )
      missing.unshift(dir);
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
  add(
    "--ro-bind",
    path.join(path.dirname(layout.launcherPath), LAUNCHER_UNPACK_MODULE),
    path.posix.join(path.posix.dirname(SANDBOX_LAUNCHER_PATH), LAUNCHER_UNPACK_MODULE),
  ); // the launcher's unpacker
  for (const module of LAUNCHER_MODULES) {
    const inside = path.posix.join(path.posix.dirname(SANDBOX_LAUNCHER_PATH), module);
    parents(inside);
    add("--ro-bind", path.join(path.dirname(layout.launcherPath), module), inside); // the launcher's modules
  }
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
    add(
      SETPRIV,
      `--reuid=${id}`,
      `--rgid=${id}`,
      `--egid=${NOGROUP_GID}`,
      "--clear-groups",
      "--inh-caps=-all",
      "--bounding-set=-all",
      "--no-new-privs",
      "--",
    );
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

export function resolveBinds(binds: SandboxOptions["readOnlyBinds"]): Required<ReadOnlyBind>[] {
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

export function etcFiles(name: string, uid: number): Record<string, string> {
  return {
    passwd: `root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nstackship:x:${uid}:${uid}:StackShip sandbox:/work:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\nstackship:x:${uid}:\nnogroup:x:65534:\n`,
    hosts: `127.0.0.1\tlocalhost ${name}\n::1\tlocalhost ip6-localhost ip6-loopback\n`,
    "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
  };
}
