import { chmodSync, lstatSync, mkdirSync, readdirSync, type Stats } from "node:fs";
import { join } from "node:path";

// The data directory holds the database, the master key, the bootstrap token, the local CA's keys
// and the artifacts: nothing in it is for other local users. It is 0700 and its files 0600; a
// start checks every entry and takes group and other permissions away from what this process owns,
// and warns about what it cannot fix (another owner).

/** What a check changed and what it could not. */
export interface PrivateFilesReport {
  /** Paths whose mode was narrowed, with the old and new mode. */
  fixed: string[];
  /** Paths open to other users that belong to someone else (or could not be read). */
  warnings: string[];
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, "0");

function check(path: string, stats: Stats, report: PrivateFilesReport): void {
  const mode = stats.mode & 0o777;
  const wanted = stats.isDirectory() ? 0o700 : mode & 0o700;
  if (mode === wanted || (!stats.isDirectory() && (mode & 0o077) === 0)) return;
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    if (mode & 0o077)
      report.warnings.push(
        `${path} is mode ${octal(mode)} and owned by uid ${stats.uid}, not this process (uid ${uid}): other users may read it; chmod it to ${octal(wanted)}`,
      );
    return;
  }
  chmodSync(path, wanted);
  report.fixed.push(`${path}: ${octal(mode)} → ${octal(wanted)}`);
}

function walk(path: string, report: PrivateFilesReport): void {
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    report.warnings.push(`${path} could not be checked: ${(error as Error).message}`);
    return;
  }
  // A symbolic link's own mode means nothing, and what it points at is not ours to change.
  if (stats.isSymbolicLink() || !(stats.isDirectory() || stats.isFile())) return;
  check(path, stats, report);
  if (!stats.isDirectory()) return;
  let entries: string[];
  try {
    entries = readdirSync(path);
  } catch (error) {
    report.warnings.push(`${path} could not be listed: ${(error as Error).message}`);
    return;
  }
  for (const entry of entries) walk(join(path, entry), report);
}

/**
 * Makes `dataDir` (created 0700 when missing) and everything under it private, and each of
 * `others` (a database file or artifact directory kept elsewhere: itself and what it holds).
 */
export function makePrivate(dataDir: string, others: readonly string[] = []): PrivateFilesReport {
  const report: PrivateFilesReport = { fixed: [], warnings: [] };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  for (const root of [dataDir, ...others]) walk(root, report);
  return report;
}
