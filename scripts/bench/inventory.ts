/**
 * `npm run bench` / `task bench`: the organization run inventory costs the same at any depth.
 * Seeds one organization with many runs, then times a keyset page at the start (the baseline,
 * measured in the same run) and deep in the list, and, for contrast, an OFFSET query at the same
 * depth. Prints medians and ratios to the baseline; asserts nothing (benchmarks never do).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import knex from "knex";
import { newId } from "../../server/src/domain/ids.ts";
import { buildInputSnapshot } from "../../server/src/domain/input-snapshot.ts";
import { createStores, migrateLatest, openDatabase, type Database } from "../../server/src/store/index.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 50_000);
const DEPTH = RUNS - 1_000;
const PAGE = 20;
const REPEATS = 200;

async function seed(db: Database) {
  const stores = createStores(db.knex, db.dialect);
  const now = new Date("2026-01-01T00:00:00.000Z");
  const org = await stores.organizations.create({ name: "bench", createdAt: now });
  const project = await stores.projects.create({ organizationId: org.id, name: "p", createdAt: now });
  const ws = await stores.workspaces.create({ organizationId: org.id, projectId: project.id, name: "w", opentofuVersion: "1.12.6", executionRegion: "local", createdAt: now });
  const cv = await stores.configurationVersions.create({ organizationId: org.id, workspaceId: ws.id, speculative: false, source: "api", createdAt: now });
  const { document, inputDigest } = buildInputSnapshot(
    { workspaceId: ws.id, speculative: false, opentofuVersion: "1.12.6", executionRegion: "local", platform: "linux_amd64", credentialsProfile: null, variables: [] },
    () => {
      throw new Error("no secrets in the benchmark");
    },
  );
  const snap = await stores.snapshots.create({ workspaceId: ws.id, inputDigest, document, secrets: [], createdAt: now });
  const rows = [];
  for (let i = 0; i < RUNS; i++) {
    // Groups of 50 runs share one instant, so the id tie-breaker is exercised too.
    const at = new Date(now.getTime() + Math.floor(i / 50) * 1000).toISOString();
    rows.push({
      id: newId("run"), organization_id: org.id, project_id: project.id, workspace_id: ws.id, configuration_version_id: cv.id,
      input_snapshot_id: snap.id, kind: "plan_and_apply", status: "pending", message: "", source: "api", auto_apply: false, is_destroy: false,
      config_digest: "0".repeat(64), input_digest: inputDigest, opentofu_version: "1.12.6", execution_region: "local", platform: "linux_amd64",
      created_by: null, created_at: at, updated_at: at,
    });
  }
  for (let i = 0; i < rows.length; i += 500) await db.knex.batchInsert("runs", rows.slice(i, i + 500), 500);
  if (db.dialect === "postgres") await db.knex.raw("analyze runs");
  return { orgId: org.id, stores };
}

async function median(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 10; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const start = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1e3);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

async function bench(name: string, db: Database) {
  process.stdout.write(`[bench] ${name}: seeding ${RUNS} runs…\n`);
  await migrateLatest(db);
  const { orgId, stores } = await seed(db);
  const keys = await db.knex("runs").where({ organization_id: orgId }).orderBy([{ column: "created_at", order: "desc" }, { column: "id", order: "desc" }]).offset(DEPTH).limit(1).select("created_at", "id");
  const deepKey = { createdAt: new Date(keys[0].created_at).toISOString(), id: keys[0].id as string };
  const first = await median(() => stores.runs.listByOrganization(orgId, { limit: PAGE }));
  const deep = await median(() => stores.runs.listByOrganization(orgId, { limit: PAGE, after: deepKey }));
  const offset = await median(() =>
    db.knex("runs").where({ organization_id: orgId }).orderBy([{ column: "created_at", order: "desc" }, { column: "id", order: "desc" }]).offset(DEPTH).limit(PAGE + 1),
  );
  process.stdout.write(
    `[bench] ${name}: first page ${first.toFixed(0)} µs (baseline 1.00x) | keyset page at depth ${DEPTH}: ${deep.toFixed(0)} µs (${(deep / first).toFixed(2)}x) | OFFSET ${DEPTH} for contrast: ${offset.toFixed(0)} µs (${(offset / first).toFixed(2)}x)\n`,
  );
}

const dir = await mkdtemp(join(tmpdir(), "ss-bench-"));
const sqlite = await openDatabase(`sqlite://${join(dir, "bench.db")}`);
try {
  await bench("sqlite", sqlite);
} finally {
  await sqlite.close();
  await rm(dir, { recursive: true, force: true });
}
const pgUrl = process.env.STACKSHIP_TEST_PG_URL;
if (pgUrl) {
  const name = `ss_bench_${randomBytes(6).toString("hex")}`;
  const admin = knex({ client: "pg", connection: pgUrl, pool: { min: 0, max: 1 } });
  await admin.raw("create database ??", [name]);
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  const pg = await openDatabase(url.toString());
  try {
    await bench("postgres", pg);
  } finally {
    await pg.close();
    await admin.raw("drop database if exists ?? with (force)", [name]);
    await admin.destroy();
  }
} else {
  process.stdout.write("[bench] STACKSHIP_TEST_PG_URL is not set: PostgreSQL skipped\n");
}
