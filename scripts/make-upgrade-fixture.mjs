// Makes the upgrade fixture (issue 31, part 6): a StackShip data directory written by this
// checkout's code, kept small and committed under server/test/fixtures/upgrade/, which
// server/test/lifecycle/upgrade.test.ts starts the current code on.
//
//   node scripts/make-upgrade-fixture.mjs [out-dir]   (default server/test/fixtures/upgrade)
//
// It exports the committed HEAD (never the checkout's uncommitted work), starts its
// `server/src/main.ts` (SQLite, local artifacts, in-process runner: real bubblewrap
// and tofu) on a fresh data directory and, through the API only, makes: two applied runs (two
// state versions, the second current), a speculative run, a discarded run and an audit history.
// It then records what the API answers for each run, review, state version and the audit
// history (expected.json), stops the server (SIGTERM), compacts the database, and copies the
// database (gzipped), the master key and the encrypted artifacts. About a minute; the result is < 200 KB.
import { spawn, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  symlinkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  readdirSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import Database from "better-sqlite3";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, process.argv[2] ?? "server/test/fixtures/upgrade");
const BOOTSTRAP = "ss0.upgrade-fixture-bootstrap-token-not-a-secret";
const JSON_API = "application/vnd.api+json";

const say = (message) => process.stdout.write(`[make-upgrade-fixture] ${message}\n`);

/**
 * The committed main (HEAD), exported into `dir` with this checkout's node_modules and pinned
 * tools linked in: uncommitted work in the checkout (a migration in progress) never reaches the fixture.
 */
function exportHead(dir) {
  execFileSync("sh", ["-c", `git archive --format=tar HEAD | tar -x -C "${dir}"`], { cwd: ROOT });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  symlinkSync(join(ROOT, ".tools"), join(dir, ".tools"));
}

function startServer(tree, dataDir) {
  const child = spawn(process.execPath, ["--import", "tsx", join(tree, "server/src/main.ts")], {
    cwd: tree,
    env: {
      PATH: process.env.PATH,
      STACKSHIP_DATA_DIR: dataDir,
      STACKSHIP_HTTP_PORT: "0",
      STACKSHIP_HTTPS_PORT: "off",
      STACKSHIP_BOOTSTRAP_TOKEN: BOOTSTRAP,
      STACKSHIP_RUNNER_CONCURRENCY: "1",
      STACKSHIP_LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const url = new Promise((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (text) => {
      output += text;
      const match = output.match(/StackShip is listening on (http:\/\/\S+)/);
      if (match) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`main.ts exited (${code}):\n${output}`)));
  });
  return { child, url };
}

function api(base, token) {
  return async (method, path, body, { status = [200, 201, 202], raw = false } = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": JSON_API }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    if (!status.includes(response.status))
      throw new Error(`${method} ${path}: ${response.status} ${bytes.toString("utf8").slice(0, 500)}`);
    return raw ? bytes : bytes.length === 0 ? null : JSON.parse(bytes.toString("utf8"));
  };
}

function tarball(files) {
  const root = mkdtempSync(join(tmpdir(), "ss-fixture-config-"));
  try {
    mkdirSync(join(root, "src"));
    for (const [name, content] of Object.entries(files)) writeFileSync(join(root, "src", name), content);
    execFileSync("tar", ["-czf", join(root, "config.tar.gz"), "-C", join(root, "src"), "."]);
    return readFileSync(join(root, "config.tar.gz"));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const config = (value) => ({
  "main.tf": `resource "terraform_data" "app" {\n  input = "${value}"\n}\n\noutput "app" {\n  value = terraform_data.app.output\n}\n`,
});

async function waitForStatus(call, runId, statuses) {
  for (let i = 0; i < 1200; i++) {
    const run = (await call("GET", `/v1/runs/${runId}`)).data;
    if (statuses.includes(run.attributes.status)) return run;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`run ${runId} did not reach ${statuses.join("|")}`);
}

async function startRun(call, workspaceId, files, kind) {
  const version = (
    await call("POST", `/v1/workspaces/${workspaceId}/configuration-versions`, {
      data: { type: "configuration-versions", attributes: { speculative: kind === "speculative" } },
    })
  ).data;
  const upload = await fetch(version.attributes.upload_url, {
    method: "PUT",
    headers: { "Content-Type": "application/octet-stream" },
    body: tarball(files),
  });
  if (upload.status !== 200) throw new Error(`configuration upload: ${upload.status} ${await upload.text()}`);
  const run = await call("POST", `/v1/workspaces/${workspaceId}/runs`, {
    data: {
      type: "runs",
      attributes: { kind },
      relationships: { configuration_version: { data: { type: "configuration-versions", id: version.id } } },
    },
  });
  return run.data.id;
}

async function main() {
  const tree = mkdtempSync(join(tmpdir(), "ss-upgrade-fixture-tree-"));
  exportHead(tree);
  const dataDir = mkdtempSync(join(tmpdir(), "ss-upgrade-fixture-"));
  const server = startServer(tree, dataDir);
  try {
    const base = await server.url;
    say(
      `StackShip (committed HEAD ${execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim()}) on ${base}`,
    );
    const admin = api(base, BOOTSTRAP);
    await admin("POST", "/v1/organizations", { data: { type: "organizations", attributes: { name: "upgrade" } } });
    const token = (
      await admin("POST", "/v1/organizations/upgrade/tokens", {
        data: { type: "tokens", attributes: { role: "admin" } },
      })
    ).data.attributes.secret;
    const call = api(base, token);
    const workspace = (
      await call("POST", "/v1/organizations/upgrade/workspaces", {
        data: { type: "workspaces", attributes: { name: "app" } },
      })
    ).data;

    const runs = [];
    for (const value of ["first", "second"]) {
      const id = await startRun(call, workspace.id, config(value), "plan_and_apply");
      const planned = await waitForStatus(call, id, ["awaiting_approval", "errored"]);
      if (planned.attributes.status !== "awaiting_approval")
        throw new Error(`run ${id} ended ${planned.attributes.status}`);
      await call("POST", `/v1/runs/${id}/actions/approve`, {
        data: { type: "approvals", attributes: { plan_digest: planned.attributes.plan_digest } },
      });
      const applied = await waitForStatus(call, id, ["applied", "errored", "needs_recovery"]);
      if (applied.attributes.status !== "applied") throw new Error(`run ${id} ended ${applied.attributes.status}`);
      runs.push(id);
    }
    const speculative = await startRun(call, workspace.id, config("third"), "speculative");
    await waitForStatus(call, speculative, ["planned_and_finished"]);
    runs.push(speculative);
    const discarded = await startRun(call, workspace.id, config("fourth"), "plan_and_apply");
    await waitForStatus(call, discarded, ["awaiting_approval"]);
    await call("POST", `/v1/runs/${discarded}/actions/discard`, {
      data: { type: "decisions", attributes: { reason: "upgrade fixture" } },
    });
    await waitForStatus(call, discarded, ["discarded"]);
    runs.push(discarded);

    // What the API answers now: the upgrade test compares the same reads after the upgrade.
    const db = new Database(join(dataDir, "stackship.db"), { readonly: true });
    const stateVersionIds = db
      .prepare("select id from state_versions order by serial")
      .all()
      .map((row) => row.id);
    const migrations = db
      .prepare("select name from knex_migrations order by id")
      .all()
      .map((row) => row.name);
    db.close();
    const reads = {};
    const read = async (path, options) => (reads[path] = await call("GET", path, undefined, options));
    for (const id of runs) {
      await read(`/v1/runs/${id}`);
      await read(`/v1/runs/${id}/review`);
      await read(`/v1/runs/${id}/logs/plan`);
      await read(`/api/v2/runs/${id}`);
      // The redacted plan changes are an encrypted artifact: their digest proves the artifact store reads back.
      const redacted = await call("GET", `/v1/runs/${id}/downloads/redacted-plan`, undefined, { raw: true });
      reads[`/v1/runs/${id}/downloads/redacted-plan`] = { sha256: createHash("sha256").update(redacted).digest("hex") };
    }
    for (const id of stateVersionIds) await read(`/api/v2/state-versions/${id}`);
    await read(`/api/v2/workspaces/${workspace.id}/current-state-version`);
    await read(`/api/v2/workspaces/${workspace.id}/current-state-version-outputs`);
    await read(`/v1/workspaces/${workspace.id}/state-summary`);
    await read(`/v1/organizations/upgrade/audit-events?limit=100`);

    // Stopped before the copy, so the database is complete and no write is in flight.
    const exited = new Promise((resolve) => server.child.once("exit", resolve));
    server.child.kill("SIGTERM");
    await exited;
    const compact = new Database(join(dataDir, "stackship.db"));
    compact.pragma("wal_checkpoint(TRUNCATE)");
    compact.pragma("journal_mode = DELETE");
    compact.exec("VACUUM");
    compact.close();

    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    // Gzipped: mostly empty pages and the schema, ~700 KB raw, ~40 KB compressed.
    writeFileSync(join(OUT, "stackship.db.gz"), gzipSync(readFileSync(join(dataDir, "stackship.db")), { level: 9 }));
    cpSync(join(dataDir, "keys"), join(OUT, "keys"), { recursive: true });
    cpSync(join(dataDir, "artifacts"), join(OUT, "artifacts"), { recursive: true });
    const made = {
      commit: execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim(),
      bootstrap_token: BOOTSTRAP,
      token,
      organization: "upgrade",
      workspace_id: workspace.id,
      runs,
      state_versions: stateVersionIds,
      migrations,
      reads,
    };
    writeFileSync(join(OUT, "expected.json"), `${JSON.stringify(made, null, 1)}\n`);
    // In the repository's format (npm run format:check covers it).
    execFileSync(join(ROOT, "node_modules/.bin/prettier"), ["--write", join(OUT, "expected.json")], {
      cwd: ROOT,
      stdio: "ignore",
    });
    const files = (dir) =>
      readdirSync(dir, { recursive: true })
        .map((name) => join(dir, name))
        .filter((path) => statSync(path).isFile());
    const total = files(OUT).reduce((sum, path) => sum + statSync(path).size, 0);
    say(
      `wrote ${relative(ROOT, OUT)}: ${files(OUT).length} files, ${Math.round(total / 1024)} KB (${runs.length} runs, ${stateVersionIds.length} state versions, ${migrations.length} migrations)`,
    );
  } finally {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(tree, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`[make-upgrade-fixture] ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
