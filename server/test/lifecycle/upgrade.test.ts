import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import Database from "better-sqlite3";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { REPO_ROOT } from "../../src/config.ts";
import { spawnStackShip } from "../support/spawned.ts";

// Upgrades (issue 31, part 6): a data directory written by an earlier main
// (server/test/fixtures/upgrade, made by scripts/make-upgrade-fixture.mjs: SQLite, local
// artifacts, its master key) is copied and the current code started on it, as an operator's
// upgrade does. Its migrations run on start; every run, review, state version and audit event
// the fixture recorded through the API reads back with identical digests, and a new plan on the
// upgraded deployment reads the old (encrypted) state. SQLite only: the fixture is a SQLite data
// directory (see README "Upgrading"). About 20 s.
const upgrade = suite("upgrading a deployment made by an earlier main");

const FIXTURE = join(REPO_ROOT, "server/test/fixtures/upgrade");

interface Fixture {
  commit: string;
  token: string;
  organization: string;
  workspace_id: string;
  runs: string[];
  state_versions: string[];
  migrations: string[];
  reads: Record<string, unknown>;
}

/**
 * The fields of a document that must not change across an upgrade: every id, status, serial,
 * decision and digest (`*digest*`, `sha256`, `md5`, `hash`), by their path in the document.
 */
function digests(document: unknown, path = "", out: Record<string, unknown> = {}): Record<string, unknown> {
  if (Array.isArray(document)) document.forEach((item, index) => digests(item, `${path}[${index}]`, out));
  else if (document !== null && typeof document === "object") {
    for (const [key, value] of Object.entries(document)) {
      const at = `${path}.${key}`;
      if (value !== null && typeof value === "object") digests(value, at, out);
      else if (/^(id|status|serial|lineage|decision)$|digest|sha256|md5|hash/i.test(key)) out[at] = value;
    }
  }
  return out;
}

upgrade(
  "the current code starts on the fixture's data directory, migrates it, and reads every run, review, state version and audit event back unchanged",
  async () => {
    const fixture = JSON.parse(readFileSync(join(FIXTURE, "expected.json"), "utf8")) as Fixture;
    const dataDir = mkdtempSync(join(tmpdir(), "ss-upgrade-"));
    cpSync(join(FIXTURE, "keys"), join(dataDir, "keys"), { recursive: true });
    cpSync(join(FIXTURE, "artifacts"), join(dataDir, "artifacts"), { recursive: true });
    writeFileSync(join(dataDir, "stackship.db"), gunzipSync(readFileSync(join(FIXTURE, "stackship.db.gz"))));
    const server = spawnStackShip("main.ts", {
      STACKSHIP_DATA_DIR: dataDir,
      STACKSHIP_HTTP_PORT: "0",
      STACKSHIP_HTTPS_PORT: "off",
      STACKSHIP_RUNNER_CONCURRENCY: "1",
      STACKSHIP_LOG_LEVEL: "warn",
    });
    try {
      const url = (await server.line(/StackShip is listening on (http:\/\/\S+)/, 120_000))[1];
      assert.ok(
        server.output.some((line) => line.startsWith("[stackship] migrations: ")),
        server.output.join("\n"),
      );
      // Every migration the fixture had is still recorded, in order, and the current ones follow.
      const db = new Database(join(dataDir, "stackship.db"), { readonly: true });
      const migrations = (db.prepare("select name from knex_migrations order by id").all() as { name: string }[]).map(
        (row) => row.name,
      );
      db.close();
      assert.equal(migrations.slice(0, fixture.migrations.length), fixture.migrations);
      process.stdout.write(
        `  [upgrade] fixture made by ${fixture.commit.slice(0, 7)}: ${migrations.length - fixture.migrations.length} migration(s) ran on start\n`,
      );

      const get = async (path: string): Promise<{ status: number; bytes: Buffer }> => {
        const response = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${fixture.token}` } });
        return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
      };
      const reads = Object.entries(fixture.reads);
      assert.ok(
        reads.length >= fixture.runs.length * 5 + fixture.state_versions.length,
        "the fixture recorded every read",
      );
      for (const [path, expected] of reads) {
        const { status, bytes } = await get(path);
        assert.is(status, 200, `GET ${path}: ${bytes.toString("utf8").slice(0, 300)}`);
        if (path.endsWith("/downloads/redacted-plan")) {
          assert.is(createHash("sha256").update(bytes).digest("hex"), (expected as { sha256: string }).sha256, path);
        } else if (path.includes("/audit-events")) {
          // Events after the fixture's (none are expected, but an upgrade may add some) are allowed; the fixture's are unchanged.
          const now = digests(JSON.parse(bytes.toString("utf8")));
          for (const [field, value] of Object.entries(digests(expected)))
            assert.is(now[field], value, `${path} ${field}`);
        } else {
          assert.equal(digests(JSON.parse(bytes.toString("utf8"))), digests(expected), path);
        }
      }
      const stateVersions = fixture.state_versions.map(
        (id) =>
          fixture.reads[`/api/v2/state-versions/${id}`] as { data: { attributes: { sha256: string; status: string } } },
      );
      assert.is(stateVersions.length, 2);
      for (const version of stateVersions) assert.match(version.data.attributes.sha256, /^[0-9a-f]{64}$/);

      // The old state's bytes decrypt and are used: a speculative plan of the applied configuration
      // plans on the current state version (its digest) and finds nothing to change.
      const applied = fixture.reads[`/v1/runs/${fixture.runs[1]}`] as {
        data: { relationships: { configuration_version: { data: { id: string } } } };
      };
      const created = await fetch(`${url}/v1/workspaces/${fixture.workspace_id}/runs`, {
        method: "POST",
        headers: { Authorization: `Bearer ${fixture.token}`, "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({
          data: {
            type: "runs",
            attributes: { kind: "speculative" },
            relationships: {
              configuration_version: {
                data: { type: "configuration-versions", id: applied.data.relationships.configuration_version.data.id },
              },
            },
          },
        }),
      });
      const run = ((await created.json()) as { data: { id: string } }).data;
      assert.is(created.status, 201, JSON.stringify(run));
      let planned: { status: string; has_changes: boolean | null } | undefined;
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        const attributes = (
          JSON.parse((await get(`/v1/runs/${run.id}`)).bytes.toString("utf8")) as {
            data: { attributes: typeof planned };
          }
        ).data.attributes!;
        if (["planned_and_finished", "errored"].includes(attributes.status)) {
          planned = attributes;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(planned, "the speculative plan did not end");
      assert.is(
        planned.status,
        "planned_and_finished",
        (await get(`/v1/runs/${run.id}/logs/plan`)).bytes.toString("utf8"),
      );
      assert.is(planned.has_changes, false);
      // No changes means tofu read the prior state (without it, the resource would be created); the
      // run records which state it planned on: the fixture's current version, by digest.
      const current = fixture.reads[`/api/v2/workspaces/${fixture.workspace_id}/current-state-version`] as {
        data: { id: string; attributes: { sha256: string } };
      };
      const after = new Database(join(dataDir, "stackship.db"), { readonly: true });
      const facts = after
        .prepare("select predecessor_state_version_id, predecessor_state_digest from runs where id = ?")
        .get(run.id);
      after.close();
      assert.equal(facts, {
        predecessor_state_version_id: current.data.id,
        predecessor_state_digest: current.data.attributes.sha256,
      });
    } finally {
      await server.kill("SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

upgrade.run();
