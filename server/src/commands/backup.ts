import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { chmod, copyFile, mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import Database from "better-sqlite3";
import knex from "knex";
import type { Config } from "../config.ts";
import { loadMasterKey } from "../artifacts/keys.ts";
import { sqliteFilename } from "../store/db.ts";
import { sha256Hex } from "../domain/canonical-json.ts";

/**
 * `npm run backup` / `npm run restore` (server/src/backup-main.ts): a deployment's database, its
 * local artifacts and the files of its data directory that cannot be made again (the master key
 * under keys/, the bootstrap token, the local CA), with a manifest of every file's SHA-256.
 *
 * - SQLite: SQLite's online backup API from a connection of its own, all pages in one step (a
 *   read transaction: in WAL mode the serving process keeps writing meanwhile), so the copy is
 *   one consistent moment of the database.
 * - PostgreSQL: `pg_dump --format=custom` (one snapshot); artifacts stored in PostgreSQL are in it.
 * - Artifacts in a local directory are copied after the database: an artifact is written before
 *   the row that refers to it commits, so every artifact the copied database names is there.
 * - Artifacts on S3 are not copied: the bucket's own versioning/replication keeps them (README).
 *
 * The manifest (manifest.json) lists every file with its size and SHA-256 and is itself named
 * by manifest.sha256, written last: a backup without it is incomplete. A restore checks all of
 * it before it writes anything, and refuses a target that already holds a deployment unless told.
 */

/** The manifest's format; a restore refuses any other. */
export const BACKUP_FORMAT = "stackship-backup/1";

/** A problem a backup or restore reports to the operator as is (exit code 1). */
export class BackupError extends Error {}

export interface BackupFile {
  path: string;
  size: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  createdAt: string;
  database: { dialect: "sqlite"; file: string } | { dialect: "postgres"; file: string };
  /** Where the artifacts were: copied from a directory, inside the PostgreSQL dump, or left on S3. */
  artifacts: { kind: "local"; directory: string } | { kind: "postgres" } | { kind: "s3"; url: string };
  /** `included`: keys/master.key is in the backup; `environment`: STACKSHIP_ENCRYPTION_KEY, kept by the operator. */
  masterKey: "included" | "environment";
  /** SHA-256 of a fixed label and the master key: a restore with another key is refused. */
  masterKeyCheck: string;
  files: BackupFile[];
}

const MANIFEST = "manifest.json";
const MANIFEST_DIGEST = "manifest.sha256";
const SQLITE_FILE = "database/stackship.db";
const POSTGRES_FILE = "database/postgres.dump";
/** The data directory's files that are kept (besides the database and the artifacts). */
const DATA_ENTRIES = ["keys", "bootstrap-token", "tls"];

function masterKeyCheck(master: Buffer): string {
  return createHash("sha256").update("stackship-backup-master-key-check\0").update(master).digest("hex");
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Every regular file under `root` (relative paths, `/`-separated), skipping what `skip` names. */
function filesUnder(root: string, skip: (relativePath: string) => boolean = () => false): string[] {
  const out: string[] = [];
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      const rel = relative(root, path).split(sep).join("/");
      if (skip(rel)) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out.push(rel);
    }
  };
  if (existsSync(root)) walk(root);
  return out.sort();
}

function isEmptyDirectory(path: string): boolean {
  return !existsSync(path) || (lstatSync(path).isDirectory() && readdirSync(path).length === 0);
}

/** A PostgreSQL URL without its password, and the password for PGPASSWORD (never on a command line). */
function pgConnection(url: string): { url: string; env: NodeJS.ProcessEnv } {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = "";
  return { url: parsed.toString(), env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) } };
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.once("error", (error) =>
      reject(
        new BackupError(`${command} could not be started: ${error.message} (is the PostgreSQL client installed?)`),
      ),
    );
    child.once("close", (code) =>
      code === 0 ? resolvePromise() : reject(new BackupError(`${command} failed (exit ${code}): ${stderr.trim()}`)),
    );
  });
}

export interface BackupOptions {
  /** Narrates the steps. */
  say?: (message: string) => void;
  clock?: () => Date;
}

/** Backs the deployment `config` describes up into `target` (absent or an empty directory). */
export async function backupDeployment(
  config: Config,
  target: string,
  options: BackupOptions = {},
): Promise<BackupManifest> {
  const say = options.say ?? (() => {});
  const directory = resolve(target);
  if (!isEmptyDirectory(directory))
    throw new BackupError(`${directory} is not empty: back up into a new or empty directory`);
  if (
    config.artifactStore.kind === "local" &&
    (resolve(config.artifactStore.directory) + sep).startsWith(directory + sep)
  ) {
    throw new BackupError(`${directory} holds the artifact directory itself: back up somewhere else`);
  }
  if (!config.encryptionKey && !existsSync(join(config.dataDir, "keys", "master.key"))) {
    throw new BackupError(
      `${config.dataDir} has no keys/master.key and STACKSHIP_ENCRYPTION_KEY is not set: this is not the deployment's data directory`,
    );
  }
  const master = loadMasterKey(config.dataDir, config.encryptionKey);
  await mkdir(join(directory, "database"), { recursive: true, mode: 0o700 });
  await chmod(directory, 0o700);

  let database: BackupManifest["database"];
  if (config.databaseUrl.startsWith("sqlite:")) {
    const file = sqliteFilename(config.databaseUrl);
    if (file === ":memory:") throw new BackupError("an in-memory SQLite database cannot be backed up");
    if (!existsSync(file)) throw new BackupError(`the database ${file} does not exist`);
    say(`copying the SQLite database ${file} with the online backup API`);
    const source = new Database(file, { fileMustExist: true });
    try {
      source.pragma("busy_timeout = 10000");
      // Every remaining page in one step: one read transaction, one consistent moment.
      await source.backup(join(directory, SQLITE_FILE), { progress: () => 0x7fffffff });
    } finally {
      source.close();
    }
    database = { dialect: "sqlite", file: SQLITE_FILE };
  } else {
    const { url, env } = pgConnection(config.databaseUrl);
    say("dumping the PostgreSQL database with pg_dump (one snapshot)");
    await run(
      "pg_dump",
      [
        "--format=custom",
        "--no-owner",
        "--no-privileges",
        `--file=${join(directory, POSTGRES_FILE)}`,
        `--dbname=${url}`,
      ],
      env,
    );
    database = { dialect: "postgres", file: POSTGRES_FILE };
  }

  let artifacts: BackupManifest["artifacts"];
  const setting = config.artifactStore;
  if (setting.kind === "local") {
    const root = resolve(setting.directory);
    // Temporary files of writes in flight are not artifacts yet (backends/local.ts renames them when complete).
    const files = filesUnder(root, (rel) => rel.endsWith(".tmp"));
    say(`copying ${files.length} artifact file(s) from ${root}`);
    for (const rel of files) {
      const to = join(directory, "artifacts", rel);
      await mkdir(dirname(to), { recursive: true, mode: 0o700 });
      try {
        await copyFile(join(root, rel), to);
      } catch (error) {
        // Deleted since it was listed (replaced or removed): the copied database no longer names it either.
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    artifacts = { kind: "local", directory: "artifacts" };
  } else if (setting.kind === "postgres") {
    artifacts = { kind: "postgres" };
  } else {
    say(
      "the artifacts are on S3 and are not copied: keep them with the bucket's versioning (README, Backup and restore)",
    );
    artifacts = { kind: "s3", url: setting.url.replace(/\?.*$/, "") };
  }

  for (const entry of DATA_ENTRIES) {
    const from = join(config.dataDir, entry);
    if (!existsSync(from)) continue;
    const list = lstatSync(from).isDirectory() ? filesUnder(from).map((rel) => `${entry}/${rel}`) : [entry];
    for (const rel of list) {
      const to = join(directory, "data", rel);
      await mkdir(dirname(to), { recursive: true, mode: 0o700 });
      await copyFile(join(config.dataDir, rel), to);
    }
  }
  const masterKey =
    existsSync(join(directory, "data", "keys", "master.key")) && !config.encryptionKey ? "included" : "environment";
  if (masterKey === "environment")
    say(
      "note: the master key comes from STACKSHIP_ENCRYPTION_KEY and is not in the backup: keep it; a restore needs the same key",
    );

  const files: BackupFile[] = [];
  for (const rel of filesUnder(directory)) {
    const path = join(directory, rel);
    await chmod(path, 0o600);
    files.push({ path: rel, size: (await stat(path)).size, sha256: await sha256OfFile(path) });
  }
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    createdAt: (options.clock ?? (() => new Date()))().toISOString(),
    database,
    artifacts,
    masterKey,
    masterKeyCheck: masterKeyCheck(master),
    files,
  };
  const text = JSON.stringify(manifest, null, 2) + "\n";
  await writeFile(join(directory, MANIFEST), text, { mode: 0o600 });
  // Written last: a backup without it was interrupted.
  await writeFile(join(directory, MANIFEST_DIGEST), `${sha256Hex(text)}  ${MANIFEST}\n`, { mode: 0o600 });
  say(`backup complete: ${files.length} file(s), manifest ${join(directory, MANIFEST)}`);
  return manifest;
}

/** Reads and checks a backup completely (manifest digest, every file's presence, size and SHA-256; no extra file). */
export async function verifyBackup(source: string): Promise<BackupManifest> {
  const directory = resolve(source);
  if (!existsSync(join(directory, MANIFEST_DIGEST)))
    throw new BackupError(`${directory} has no ${MANIFEST_DIGEST}: not a backup, or an interrupted one`);
  if (!existsSync(join(directory, MANIFEST)))
    throw new BackupError(`${directory} has no ${MANIFEST}: not a backup, or an interrupted one`);
  const text = readFileSync(join(directory, MANIFEST));
  const expected = /^([0-9a-f]{64}) {2}manifest\.json\n$/.exec(readFileSync(join(directory, MANIFEST_DIGEST), "utf8"));
  if (expected === null)
    throw new BackupError(`${MANIFEST_DIGEST} is damaged: it does not name the manifest's SHA-256`);
  if (sha256Hex(text) !== expected[1])
    throw new BackupError(`${MANIFEST} does not match ${MANIFEST_DIGEST}: the manifest was changed or damaged`);
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(text.toString("utf8")) as BackupManifest;
  } catch {
    throw new BackupError(`${MANIFEST} is not JSON`);
  }
  // The file says which format it is; only BACKUP_FORMAT is restored.
  const format: string = manifest.format;
  if (format !== BACKUP_FORMAT)
    throw new BackupError(`${MANIFEST} is format '${String(format)}', this version restores ${BACKUP_FORMAT}`);
  const listed = new Map(manifest.files.map((file) => [file.path, file]));
  for (const file of manifest.files) {
    if (file.path.split("/").includes("..") || file.path.startsWith("/"))
      throw new BackupError(`${MANIFEST} names a path outside the backup: ${file.path}`);
  }
  const present = filesUnder(directory).filter((rel) => rel !== MANIFEST && rel !== MANIFEST_DIGEST);
  for (const rel of present)
    if (!listed.has(rel)) throw new BackupError(`${rel} is in the backup directory but not in its manifest`);
  for (const file of manifest.files) {
    const path = join(directory, file.path);
    if (!existsSync(path)) throw new BackupError(`${file.path} is missing from the backup`);
    const size = (await stat(path)).size;
    if (size !== file.size)
      throw new BackupError(`${file.path} is ${size} bytes, the manifest says ${file.size}: the backup is damaged`);
    if ((await sha256OfFile(path)) !== file.sha256)
      throw new BackupError(`${file.path} does not match its SHA-256 in the manifest: the backup is damaged`);
  }
  if (!listed.has(manifest.database.file)) throw new BackupError(`the manifest names no database file`);
  return manifest;
}

export interface RestoreOptions {
  /** Replace a deployment that is already there (database, artifacts, keys). */
  force?: boolean;
  say?: (message: string) => void;
}

/** What is already in the target, in words (empty: nothing). */
async function targetContents(config: Config): Promise<string[]> {
  const found: string[] = [];
  if (config.databaseUrl.startsWith("sqlite:")) {
    const file = sqliteFilename(config.databaseUrl);
    if (file !== ":memory:" && existsSync(file) && (await stat(file)).size > 0) found.push(`the database ${file}`);
  } else {
    const { url } = pgConnection(config.databaseUrl);
    const db = knex({ client: "pg", connection: config.databaseUrl, pool: { min: 0, max: 1 } });
    try {
      const rows = await db.raw<{ rows: Array<{ n: number }> }>(
        "select count(*)::int as n from pg_tables where schemaname not in ('pg_catalog', 'information_schema')",
      );
      if (rows.rows[0].n > 0) found.push(`${rows.rows[0].n} table(s) in ${url}`);
    } finally {
      await db.destroy();
    }
  }
  for (const entry of DATA_ENTRIES)
    if (existsSync(join(config.dataDir, entry))) found.push(join(config.dataDir, entry));
  if (config.artifactStore.kind === "local" && !isEmptyDirectory(config.artifactStore.directory))
    found.push(`artifacts in ${config.artifactStore.directory}`);
  return found;
}

async function copyInto(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true, mode: 0o700 });
  await copyFile(from, to);
  await chmod(to, 0o600);
}

/**
 * Restores the backup in `source` into the deployment `config` describes (the same
 * STACKSHIP_DATABASE_URL, STACKSHIP_DATA_DIR, STACKSHIP_ARTIFACT_URL and, when the master key was
 * not in the backup, STACKSHIP_ENCRYPTION_KEY as the server gets). Everything is checked before
 * anything is written; the server must not be running against the target.
 */
export async function restoreDeployment(
  config: Config,
  source: string,
  options: RestoreOptions = {},
): Promise<BackupManifest> {
  const say = options.say ?? (() => {});
  const directory = resolve(source);
  const manifest = await verifyBackup(directory);
  say(`the backup of ${manifest.createdAt} checks out: ${manifest.files.length} file(s) match the manifest`);

  const dialect = config.databaseUrl.startsWith("sqlite:") ? "sqlite" : "postgres";
  if (manifest.database.dialect !== dialect)
    throw new BackupError(
      `the backup is of a ${manifest.database.dialect} database; STACKSHIP_DATABASE_URL names ${dialect}`,
    );
  if (manifest.artifacts.kind !== config.artifactStore.kind) {
    throw new BackupError(
      `the backup's artifacts were kept in ${manifest.artifacts.kind}; this deployment keeps them in ${config.artifactStore.kind} (set STACKSHIP_ARTIFACT_URL as the backed-up deployment had it)`,
    );
  }
  if (config.databaseUrl === "sqlite::memory:")
    throw new BackupError("cannot restore into an in-memory SQLite database");
  const keyFile = join(directory, "data", "keys", "master.key");
  if (manifest.masterKey === "included") {
    if (
      config.encryptionKey &&
      masterKeyCheck(Buffer.from(config.encryptionKey, "base64")) !== manifest.masterKeyCheck
    ) {
      throw new BackupError(
        "STACKSHIP_ENCRYPTION_KEY is set to another key than the backup's master key: unset it (the backup's keys/master.key is restored) or set it to that key",
      );
    }
    if (masterKeyCheck(Buffer.from(readFileSync(keyFile, "utf8").trim(), "base64")) !== manifest.masterKeyCheck)
      throw new BackupError("the backup's master key does not match its manifest");
  } else if (
    !config.encryptionKey ||
    masterKeyCheck(Buffer.from(config.encryptionKey, "base64")) !== manifest.masterKeyCheck
  ) {
    throw new BackupError(
      "the backed-up deployment took its master key from STACKSHIP_ENCRYPTION_KEY: set it to that same key to restore",
    );
  }

  const present = await targetContents(config);
  if (present.length > 0 && !options.force) {
    throw new BackupError(
      `the target is not empty (${present.join("; ")}): restore into an empty deployment, or pass --force to replace it`,
    );
  }
  if (present.length > 0) say(`--force: replacing ${present.join("; ")}`);

  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  if (manifest.database.dialect === "sqlite") {
    const file = sqliteFilename(config.databaseUrl);
    const staged = `${file}.restoring`;
    await copyInto(join(directory, manifest.database.file), staged);
    for (const suffix of ["-wal", "-shm", "-journal"]) await rm(file + suffix, { force: true });
    await rename(staged, file);
    say(`restored the SQLite database to ${file}`);
  } else {
    const { url, env } = pgConnection(config.databaseUrl);
    const args = ["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", `--dbname=${url}`];
    if (options.force) args.push("--clean", "--if-exists");
    await run("pg_restore", [...args, join(directory, manifest.database.file)], env);
    say("restored the PostgreSQL database with pg_restore (one transaction)");
  }
  if (manifest.artifacts.kind === "local" && config.artifactStore.kind === "local") {
    const root = resolve(config.artifactStore.directory);
    if (options.force) await rm(root, { recursive: true, force: true });
    const prefix = `${manifest.artifacts.directory}/`;
    const files = manifest.files.filter((file) => file.path.startsWith(prefix));
    for (const file of files) await copyInto(join(directory, file.path), join(root, file.path.slice(prefix.length)));
    say(`restored ${files.length} artifact file(s) to ${root}`);
  }
  if (options.force)
    for (const entry of DATA_ENTRIES) await rm(join(config.dataDir, entry), { recursive: true, force: true });
  for (const file of manifest.files.filter((candidate) => candidate.path.startsWith("data/"))) {
    await copyInto(join(directory, file.path), join(config.dataDir, file.path.slice("data/".length)));
  }
  await chmod(config.dataDir, 0o700);
  say(`restored the data directory's keys and files to ${config.dataDir}`);
  if (manifest.artifacts.kind === "s3")
    say(
      `the artifacts stay in ${manifest.artifacts.url}: restore the bucket to the backup's time first (README, Backup and restore)`,
    );
  return manifest;
}
