// Files into and out of a sandbox's /work on the host side: the attempt's files and read-only
// files at the handoff (made the sandbox's own), and the collected files read back without
// following a link the sandbox planted.
import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  lchownSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFile as readFileCallback,
  readSync,
  realpathSync,
  writeFileSync,
} from "node:fs";
import { cp, lchown, mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { Confinement } from "./confinement.ts";
import { isUnder, type SandboxRun } from "./profile.ts";

/**
 * Files the runner hands over or collects up to this size are written and read with synchronous
 * calls: on the sandbox's tmpfs they return at once, and the thread pool's round trips (several per
 * file) cost more than the copying. Larger ones go through the thread pool.
 */
export const SYNC_IO_MAX_BYTES = 1024 * 1024;

/** A relative path that stays inside the work directory, normalised; throws otherwise. */
export function workRelative(p: string, what: string): string {
  const normal = path.posix.normalize(p);
  if (p === "" || path.posix.isAbsolute(p) || normal === "." || normal === ".." || normal.startsWith("../")) {
    throw new Error(`${what}: '${p}' is not a relative path inside the work directory`);
  }
  return normal;
}

/**
 * The attempt's files into /work (`copyDir` first, then `files`), made the sandbox's own as root,
 * and its read-only files into the read-only input directory.
 */
export async function handOverFiles(
  workDir: string,
  confinement: Confinement,
  files: readonly (readonly [string, string | Uint8Array])[],
  options: Pick<SandboxRun, "copyDir" | "readOnlyFiles">,
): Promise<void> {
  if (options.copyDir !== undefined) {
    await cp(options.copyDir, workDir, { recursive: true, verbatimSymlinks: true, errorOnExist: false, force: true });
  }
  const small =
    files.reduce(
      (total, [, contents]) =>
        total + (typeof contents === "string" ? Buffer.byteLength(contents) : contents.byteLength),
      0,
    ) <= SYNC_IO_MAX_BYTES;
  await Promise.all(
    files.map(async ([relative, contents]) => {
      const full = path.join(workDir, relative);
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
  if (confinement.uid !== undefined)
    await chownTree(workDir, confinement.uid, { sync: small && options.copyDir === undefined });
  await writeReadOnlyFiles(confinement.inputDir, options.readOnlyFiles);
}

/** The attempt's read-only files, owned by the runner (0444), into the sandbox's read-only input directory. */
async function writeReadOnlyFiles(inputDir: string | undefined, files: SandboxRun["readOnlyFiles"]): Promise<void> {
  const entries = Object.entries(files ?? {});
  if (entries.length === 0) return;
  if (inputDir === undefined) throw new Error("readOnlyFiles: this sandbox has no readOnlyInputDir");
  for (const [name, contents] of entries) {
    if (!/^[A-Za-z0-9._-]+$/.test(name) || name === "." || name === "..")
      throw new Error(`readOnlyFiles: '${name}' is not a plain file name`);
    await writeFile(path.join(inputDir, name), contents, { mode: 0o444, flag: "wx" });
  }
}

export async function readCollected(workDir: string, relative: string, maxBytes: number): Promise<Buffer | null> {
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
    fd = openSync(
      path.join(parent, path.basename(full)),
      fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK,
    );
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
      for (let n; filled < buffer.length && (n = readSync(fd, buffer, filled, buffer.length - filled, filled)) > 0;)
        filled += n;
      // Still growing (a process left behind writes to it): read to its end like a large file.
      if (filled <= stat.size) return buffer.subarray(0, filled);
    }
    return await readFileOfFd(fd);
  } finally {
    closeSync(fd);
  }
}

const readFileOfFd = promisify((fd: number, callback: (error: NodeJS.ErrnoException | null, data: Buffer) => void) =>
  readFileCallback(fd, callback),
);

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
