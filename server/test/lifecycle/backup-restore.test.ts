import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import knex from "knex";
import pino from "pino";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createStackShipClient, type Client } from "../../../client/src/index.ts";
import { loadConfig, REPO_ROOT, type Config } from "../../src/config.ts";
import { createStackShip } from "../../src/server.ts";
import type { Dialect } from "../../src/store/index.ts";
import { testDialects } from "../support/databases.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { review } from "../support/review.ts";
import { fixture, planApproveApply, startRun } from "../support/runs.ts";
import { withTestServer, type TestServer } from "../support/test-server.ts";
import { skipTest } from "../support/skips.ts";
import type { components as TfeComponents } from "../../../generated/tfe/types.gen.ts";

// npm run backup / npm run restore (server/src/commands/backup.ts) on a deployment with applied
// runs (real tofu), backed up by its own process while the API keeps creating runs, restored into
// an empty database and data directory, and started: every run's review, every state version's
// bytes and digest and the audit history are the same, and `npm run verify-audit` passes. A backup
// with one flipped byte in any of its files is refused without writing anything, and so is a
// target that already holds a deployment. About 20 s per case.

const test = suite("backup and restore of a serving deployment");

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs an entry point of server/src with exactly `env` (plus PATH) and `args`. */
function runEntry(script: string, args: string[], env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "server/src", script), ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The deployment a process sees: database, data directory, artifact store (master key from the data directory). */
interface Target {
  databaseUrl: string;
  dataDir: string;
  artifactUrl: string;
}

function envOf(target: Target): Record<string, string> {
  return {
    STACKSHIP_DATABASE_URL: target.databaseUrl,
    STACKSHIP_DATA_DIR: target.dataDir,
    STACKSHIP_ARTIFACT_URL: target.artifactUrl,
    STACKSHIP_LOG_LEVEL: "warn",
  };
}

function sourceOf(server: TestServer): Target {
  const store = server.services.config.artifactStore;
  return {
    databaseUrl: server.databaseUrl,
    dataDir: server.dataDir,
    artifactUrl: store.kind === "local" ? `file://${store.directory}` : "postgres",
  };
}

/** One statement on a short-lived admin connection (a pooled one would keep the test process alive). */
async function onAdmin(adminUrl: string, sql: string, name: string): Promise<void> {
  const admin = knex({ client: "pg", connection: adminUrl, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(sql, [name]);
  } finally {
    await admin.destroy();
  }
}

/** An empty target of `dialect`: a new data directory and a new database (dropped by `drop`); artifacts in a directory or in PostgreSQL. */
async function emptyTarget(dialect: Dialect, localArtifacts: boolean): Promise<Target & { drop(): Promise<void> }> {
  const dataDir = join(await mkdtemp(join(tmpdir(), "ss-restore-")), "data");
  const parent = join(dataDir, "..");
  if (dialect === "sqlite") {
    return {
      databaseUrl: `sqlite://${join(parent, "db", "stackship.db")}`,
      dataDir,
      artifactUrl: `file://${join(dataDir, "artifacts")}`,
      drop: () => rm(parent, { recursive: true, force: true }),
    };
  }
  const adminUrl = process.env.STACKSHIP_TEST_PG_URL!;
  const name = `ss_test_restore_${randomBytes(6).toString("hex")}`;
  await onAdmin(adminUrl, "create database ??", name);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    databaseUrl: url.toString(),
    dataDir,
    artifactUrl: localArtifacts ? `file://${join(dataDir, "artifacts")}` : "postgres",
    drop: async () => {
      await onAdmin(adminUrl, "drop database if exists ?? with (force)", name);
      await rm(parent, { recursive: true, force: true });
    },
  };
}

interface StateVersionRow {
  id: string;
  workspace_id: string;
  serial: number | string;
  sha256: string;
  status: string;
}
interface AuditRow {
  chain: string;
  sequence: number | string;
  action: string;
  target_id: string | null;
  previous_digest: string | null;
  digest: string;
}

/** What "the same deployment" means here: every table this test compares, read straight from the database. */
async function tablesOf(databaseUrl: string) {
  const filename = databaseUrl.startsWith("sqlite:") ? databaseUrl.slice("sqlite://".length) : null;
  const db = knex(
    filename
      ? { client: "better-sqlite3", connection: { filename }, useNullAsDefault: true }
      : { client: "pg", connection: databaseUrl },
  );
  try {
    return {
      runs: (await db("runs").select("id").orderBy("id")).map((row: { id: string }) => row.id),
      stateVersions: (
        await db("state_versions").select("id", "workspace_id", "serial", "sha256", "status").orderBy("id")
      ).map((row: StateVersionRow) => ({
        ...row,
        serial: Number(row.serial),
      })),
      audit: (
        await db("audit_events")
          .select("chain", "sequence", "action", "target_id", "previous_digest", "digest")
          .orderBy(["chain", "sequence"])
      ).map((row: AuditRow) => ({
        ...row,
        sequence: Number(row.sequence),
      })),
    };
  } finally {
    await db.destroy();
  }
}

/** StackShip started on a restored target, serving HTTP, for `fn`. */
async function withStarted<T>(
  target: Target,
  base: Config,
  fn: (baseUrl: string, client: (token: string) => Client) => Promise<T>,
): Promise<T> {
  const config: Config = {
    ...loadConfig({}),
    dataDir: target.dataDir,
    databaseUrl: target.databaseUrl,
    bootstrapToken: base.bootstrapToken,
    validateResponses: true,
    logLevel: "silent",
    artifactStore:
      base.artifactStore.kind === "local"
        ? { kind: "local", directory: join(target.dataDir, "artifacts") }
        : base.artifactStore,
  };
  const stackship = await createStackShip(config, { logger: pino({ level: "silent" }) });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors
  const http: Server = createServer(stackship.app.callback());
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  try {
    return await fn(baseUrl, (token) => createStackShipClient({ baseUrl, token }));
  } finally {
    await stackship.live.close();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    http.closeAllConnections();
    await stackship.close();
  }
}

/** The files of a directory tree (relative paths). */
function filesOf(root: string, prefix = ""): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(join(root, prefix), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesOf(root, join(prefix, entry.name)) : [join(prefix, entry.name)],
  );
}

async function stateBytes(baseUrl: string, token: string, stateVersionId: string): Promise<Buffer> {
  const headers = { Authorization: `Bearer ${token}`, Accept: "application/vnd.api+json" };
  const meta = await fetch(`${baseUrl}/api/v2/state-versions/${stateVersionId}`, { headers });
  assert.is(meta.status, 200, await meta.clone().text());
  const url = ((await meta.json()) as TfeComponents["schemas"]["StateVersionDocument"]).data.attributes[
    "hosted-state-download-url"
  ];
  const body = await fetch(url.startsWith("http") ? url : `${baseUrl}${url}`, { headers });
  assert.is(body.status, 200, await body.clone().text());
  return Buffer.from(await body.arrayBuffer());
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

// SQLite with its local artifact directory; PostgreSQL with artifacts in the database (its default) and in a directory.
const cases = testDialects().flatMap((dialect): Array<{ dialect: Dialect; localArtifacts: boolean }> =>
  dialect === "postgres"
    ? [
        { dialect, localArtifacts: false },
        { dialect, localArtifacts: true },
      ]
    : [{ dialect, localArtifacts: true }],
);
for (const { dialect, localArtifacts } of cases) {
  test(`applied runs, backed up under load, wiped, restored, started: the same reviews, states and audit history; damage refused [${dialect}, artifacts in ${localArtifacts ? "a directory" : "the database"}]`, () =>
    withTestServer(
      dialect,
      async (server) => {
        const scratch = await mkdtemp(join(tmpdir(), "ss-backup-"));
        const targets: Array<{ drop(): Promise<void> }> = [];
        try {
          const { token, organizationName } = await createOrganizationWithToken(server, "backed-up");
          for (const name of ["alpha", "beta"]) {
            const workspace = await createWorkspace(server, token, organizationName, { name });
            await planApproveApply(server, token, (await startRun(server, token, workspace.id, fixture("basic"))).id);
          }
          // From here runs are only created (their reviews do not move), so the original stays comparable.
          await server.runner!.stop();
          const loadWorkspace = await createWorkspace(server, token, organizationName, { name: "load" });
          const before = await tablesOf(server.databaseUrl);
          assert.is(before.stateVersions.length, 2);

          // Load: runs keep being created (configuration uploads, run rows, audit events) through the whole backup.
          const backupDir = join(scratch, "backup");
          let backupDone = false;
          let createdDuringBackup = 0;
          const load = (async () => {
            while (!backupDone || createdDuringBackup === 0) {
              await startRun(server, token, loadWorkspace.id, {
                "main.tf": `output "n" { value = ${createdDuringBackup} }\n`,
              });
              createdDuringBackup++;
            }
          })();
          const backup = await runEntry("backup-main.ts", ["backup", backupDir], envOf(sourceOf(server))).finally(
            () => (backupDone = true),
          );
          await load;
          assert.is(backup.code, 0, backup.stderr + backup.stdout);
          assert.ok(createdDuringBackup >= 1);
          assert.ok(existsSync(join(backupDir, "manifest.sha256")));
          assert.ok(existsSync(join(backupDir, "data", "keys", "master.key")), "the master key is in the backup");

          const original = await tablesOf(server.databaseUrl);
          const originalReviews = new Map<string, unknown>();
          for (const id of original.runs) originalReviews.set(id, await review(server.v1(token), id));

          // A flipped byte anywhere (the database, an artifact, the master key, the manifest, its digest): refused, nothing written.
          const artifactFile = filesOf(join(backupDir, "artifacts"))[0];
          const victims = [
            dialect === "sqlite" ? "database/stackship.db" : "database/postgres.dump",
            "data/keys/master.key",
            "manifest.json",
            "manifest.sha256",
            ...(artifactFile ? [join("artifacts", artifactFile)] : []),
          ];
          assert.is(victims.length, localArtifacts ? 5 : 4, "a local artifact store has artifacts in the backup");
          for (const victim of victims) {
            const damaged = join(scratch, `damaged-${victims.indexOf(victim)}`);
            cpSync(backupDir, damaged, { recursive: true });
            const bytes = readFileSync(join(damaged, victim));
            bytes[Math.floor(bytes.length / 2)] ^= 0x01;
            writeFileSync(join(damaged, victim), bytes);
            const target = await emptyTarget(dialect, localArtifacts);
            targets.push(target);
            const refused = await runEntry("backup-main.ts", ["restore", damaged], envOf(target));
            assert.is(refused.code, 1, `a flipped byte in ${victim} was restored: ${refused.stdout}`);
            assert.match(refused.stderr, /refused: .*(does not match|damaged)/, refused.stderr);
            assert.ok(!existsSync(target.dataDir), `a refused restore wrote ${target.dataDir}`);
            if (dialect === "sqlite")
              assert.ok(
                !existsSync(target.databaseUrl.slice("sqlite://".length)),
                "a refused restore wrote the database",
              );
            else assert.is(await postgresTableCount(target.databaseUrl), 0, "a refused restore wrote tables");
          }

          // A target that holds a deployment (the serving one) is refused, and left alone.
          const occupied = await runEntry("backup-main.ts", ["restore", backupDir], envOf(sourceOf(server)));
          assert.is(occupied.code, 1, occupied.stdout);
          assert.match(occupied.stderr, /refused: the target is not empty .*--force/);
          assert.equal((await tablesOf(server.databaseUrl)).runs, original.runs);

          // Wiped: a new, empty database and data directory; restored; started.
          const target = await emptyTarget(dialect, localArtifacts);
          targets.push(target);
          const restored = await runEntry("backup-main.ts", ["restore", backupDir], envOf(target));
          assert.is(restored.code, 0, restored.stderr + restored.stdout);
          const after = await tablesOf(target.databaseUrl);

          // Every run that existed when the backup began is there, and nothing that never existed.
          for (const id of before.runs) assert.ok(after.runs.includes(id), `run ${id} is lost`);
          for (const id of after.runs) assert.ok(original.runs.includes(id), `run ${id} came from nowhere`);
          assert.ok(
            after.runs.length > before.runs.length,
            "runs created during the backup up to its moment are in it",
          );
          assert.equal(after.stateVersions, original.stateVersions, "every state version, its serial and its digest");
          // The audit history: each chain the same up to the backup's moment.
          const originalAudit = new Map(original.audit.map((row) => [`${row.chain}/${row.sequence}`, row]));
          for (const row of after.audit)
            assert.equal(row, originalAudit.get(`${row.chain}/${row.sequence}`), `audit ${row.chain}/${row.sequence}`);
          for (const row of before.audit)
            assert.ok(
              after.audit.some((kept) => kept.chain === row.chain && kept.sequence === row.sequence),
              `audit ${row.chain}/${row.sequence} is lost`,
            );
          for (const chain of new Set(after.audit.map((row) => row.chain))) {
            const sequences = after.audit.filter((row) => row.chain === chain).map((row) => row.sequence);
            assert.equal(
              sequences,
              [...sequences.keys()].map((index) => sequences[0] + index),
              `chain ${chain} has no gap`,
            );
          }

          await withStarted(target, server.services.config, async (baseUrl, client) => {
            for (const id of after.runs)
              assert.equal(await review(client(token), id), originalReviews.get(id), `run ${id}'s review`);
            for (const version of after.stateVersions) {
              const bytes = await stateBytes(baseUrl, token, version.id);
              assert.is(sha256(bytes), version.sha256, `state version ${version.id}'s bytes`);
              assert.equal(bytes, await stateBytes(server.baseUrl, token, version.id));
            }
          });
          // Told to (--force), a restore replaces the deployment that is there: the same tables again.
          const replaced = await runEntry("backup-main.ts", ["restore", backupDir, "--force"], envOf(target));
          assert.is(replaced.code, 0, replaced.stderr + replaced.stdout);
          assert.match(replaced.stdout, /--force: replacing/);
          assert.equal(await tablesOf(target.databaseUrl), after);
          for (const args of [[organizationName], ["--deployment"]]) {
            const verified = await runEntry("audit-main.ts", args, envOf(target));
            assert.is(verified.code, 0, verified.stdout + verified.stderr);
            assert.match(verified.stdout, /OK: /);
          }
        } finally {
          for (const target of targets) await target.drop();
          await rm(scratch, { recursive: true, force: true });
        }
      },
      { runner: true, localArtifacts },
    ));
}

/** How many tables a PostgreSQL database has outside the system schemas. */
async function postgresTableCount(databaseUrl: string): Promise<number> {
  const db = knex({ client: "pg", connection: databaseUrl, pool: { min: 0, max: 1 } });
  try {
    const result = await db.raw<{ rows: Array<{ n: number }> }>(
      "select count(*)::int as n from pg_tables where schemaname not in ('pg_catalog', 'information_schema')",
    );
    return result.rows[0].n;
  } finally {
    await db.destroy();
  }
}

if (!process.env.STACKSHIP_TEST_PG_URL) {
  skipTest(
    test,
    "applied runs, backed up under load, wiped, restored, started [postgres]",
    "STACKSHIP_TEST_PG_URL is not set (export STACKSHIP_TEST_PG_URL=$(bash scripts/ensure-postgres))",
  );
}

test.run();
