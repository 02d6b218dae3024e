/**
 * `npm run bench inventory`: the run inventory costs the same at any depth, through the real HTTP
 * list endpoints, on SQLite and (with STACKSHIP_TEST_PG_URL) PostgreSQL. Seeds one workspace with
 * BENCH_RUNS runs (default 1,000,000; one bulk INSERT … SELECT, groups of 50 sharing one instant
 * so the id tie-breaker is exercised), then times, interleaved:
 *   - v1 `GET /v1/organizations/{org}/runs` (keyset cursor): the first page (baseline) against
 *     the last page, at depth BENCH_RUNS − 20, reached with the cursor the server would issue.
 *     Target ≤ 1.5× the first page.
 *   - the compatibility list `GET /api/v2/workspaces/{id}/runs` (page[number]/page[size]): it
 *     looks at the newest 500 runs only (RUN_SCAN_LIMIT in api/tfe/runs.ts), so a page at depth
 *     1,000,000 cannot be reached (a page number past the last is answered with the last page);
 *     its first page against its last page and against a page number at depth 1,000,000 are printed.
 *   - the v1 pages' store query alone (no HTTP), and, for contrast, an OFFSET query at the same
 *     depth as the v1 deep page.
 * Prints medians and ratios; asserts nothing (benchmarks never do).
 */
import { buildInputSnapshot } from "../../server/src/domain/input-snapshot.ts";
import { encodeRunCursor } from "../../server/src/domain/cursor.ts";
import { createOrganizationWithToken, createWorkspace } from "../../server/test/support/factories.ts";
import { testDialects } from "../../server/test/support/databases.ts";
import { withTestServer, type TestServer } from "../../server/test/support/test-server.ts";
import { jsonOf, type Tfe, type V1 } from "../../server/test/support/documents.ts";
import type { RunRow } from "../../server/src/store/rows.ts";
import { median } from "./stats.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 1_000_000);
const PAGE = 20;
const REPEATS = Number(process.env.BENCH_INVENTORY_REPEATS ?? 40);
const OFFSET_REPEATS = 5;

const ms = (value: number) => `${value.toFixed(2)} ms`;

/** Inserts RUNS runs into one workspace in a single INSERT … SELECT; returns the seconds it took. */
async function seed(server: TestServer, organizationId: string, workspaceId: string): Promise<number> {
  const { stores } = server.services;
  const knex = server.db.knex;
  const workspace = await stores.workspaces.getById(workspaceId);
  if (!workspace) throw new Error("no workspace");
  const now = new Date("2026-01-01T00:00:00.000Z");
  const cv = await stores.configurationVersions.create({
    organizationId,
    workspaceId,
    speculative: false,
    source: "api",
    createdAt: now,
  });
  const { document, inputDigest } = buildInputSnapshot(
    {
      workspaceId,
      speculative: false,
      opentofuVersion: workspace.opentofuVersion,
      executionRegion: "local",
      platform: "linux_amd64",
      credentialsProfile: null,
      variables: [],
    },
    () => {
      throw new Error("no secrets in the benchmark");
    },
  );
  const snapshot = await stores.snapshots.create({ workspaceId, inputDigest, document, secrets: [], createdAt: now });
  const constants = [
    organizationId,
    workspace.projectId,
    workspaceId,
    cv.id,
    snapshot.id,
    "0".repeat(64),
    inputDigest,
    workspace.opentofuVersion,
  ];
  const columns = `id, organization_id, project_id, workspace_id, configuration_version_id, input_snapshot_id, kind, status, message, source,
    auto_apply, is_destroy, config_digest, input_digest, opentofu_version, execution_region, platform, created_by, created_at, updated_at`;
  const started = process.hrtime.bigint();
  if (server.dialect === "postgres") {
    await knex.raw(
      `insert into runs (${columns})
       select 'run-' || lpad(i::text, 16, '0'), ?, ?, ?, ?, ?, 'plan_and_apply', 'discarded', '', 'api', false, false, ?, ?, ?, 'local', 'linux_amd64', null, at, at
       from generate_series(0, ? - 1) as i, lateral (select timestamptz '2026-01-01T00:00:00Z' + (i / 50) * interval '1 second' as at) t`,
      [...constants, RUNS],
    );
    await knex.raw("analyze runs");
  } else {
    await knex.raw(
      `with recursive seq(i) as (select 0 union all select i + 1 from seq where i + 1 < ?)
       insert into runs (${columns})
       select 'run-' || printf('%016d', i), ?, ?, ?, ?, ?, 'plan_and_apply', 'discarded', '', 'api', 0, 0, ?, ?, ?, 'local', 'linux_amd64', null, at, at
       from (select i, strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01 00:00:00', '+' || (i / 50) || ' seconds') as at from seq)`,
      [RUNS, ...constants],
    );
    await knex.raw("analyze");
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** One GET; how long it took and its JSON body, as the documented shape `T` the caller names. */
async function timed<T>(url: string, token: string): Promise<{ ms: number; body: T }> {
  const start = process.hrtime.bigint();
  const response = await fetch(url, {
    headers: { Authorization: `Bearer ${token}`, Accept: "application/vnd.api+json" },
  });
  const body = await jsonOf<T>(response);
  const took = Number(process.hrtime.bigint() - start) / 1e6;
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${JSON.stringify(body)}`);
  return { ms: took, body };
}

/** Medians of each URL, sampled interleaved (after warm-up) so drift hits them alike. */
async function medians(urls: string[], token: string, repeats = REPEATS): Promise<number[]> {
  for (const url of urls) for (let i = 0; i < 3; i++) await timed(url, token);
  const samples = urls.map(() => [] as number[]);
  for (let r = 0; r < repeats; r++)
    for (const [i, url] of urls.entries()) samples[i].push((await timed(url, token)).ms);
  return samples.map(median);
}

async function bench(server: TestServer) {
  const name = server.dialect;
  const { organizationName, organizationId, token } = await createOrganizationWithToken(server, "bench-inventory");
  const workspace = await createWorkspace(server, token, organizationName);
  process.stdout.write(`[bench inventory] ${name}: seeding ${RUNS.toLocaleString("en")} runs…\n`);
  const seconds = await seed(server, organizationId, workspace.id);
  process.stdout.write(`[bench inventory] ${name}: seeded in ${seconds.toFixed(1)} s\n`);
  // NOTE: SQLite's insert blocked the event loop for the whole seed: let keep-alive sockets the
  // server closed meanwhile be noticed before the first timed request reuses one.
  await new Promise((resolve) => setTimeout(resolve, 500));

  // v1: the first page, and the last page at depth RUNS − PAGE through the cursor the server issues.
  const depth = RUNS - PAGE;
  const order = [
    { column: "created_at", order: "desc" as const },
    { column: "id", order: "desc" as const },
  ];
  const [before] = await server.db
    .knex<RunRow>("runs")
    .where({ organization_id: organizationId })
    .orderBy(order)
    .offset(depth - 1)
    .limit(1)
    .select("created_at", "id");
  const cursor = encodeRunCursor(
    { createdAt: new Date(before.created_at).toISOString(), id: before.id },
    server.services.keys.cursor,
  );
  const v1 = `${server.baseUrl}/v1/organizations/${organizationName}/runs?limit=${PAGE}`;
  const v1Deep = `${v1}&cursor=${encodeURIComponent(cursor)}`;
  const deepPage = (await timed<V1["RunListDocument"]>(v1Deep, token)).body;
  const firstPage = (await timed<V1["RunListDocument"]>(v1, token)).body;
  const floor = `${server.baseUrl}/v1/organizations/${organizationName}`;
  const [first, deep, single] = await medians([v1, v1Deep, floor], token);
  process.stdout.write(
    `[bench inventory] ${name}: v1 organization runs, ${PAGE} a page: first page ${ms(first)} (baseline) | page at depth ${depth.toLocaleString("en")} ${ms(deep)} = ${(deep / first).toFixed(2)}× (target ≤ 1.5×)` +
      ` [first page ${firstPage.data[0]?.id}…, deep page ${deepPage.data.length} runs ${deepPage.data[0]?.id}…${deepPage.data.at(-1)?.id}, next_cursor ${deepPage.meta.page.next_cursor === null ? "null" : "set"}]\n`,
  );

  process.stdout.write(
    `[bench inventory] ${name}: for scale, GET /v1/organizations/{name} (one authenticated read): ${ms(single)}\n`,
  );

  // The compatibility list: page[number] over the newest 500 runs.
  const tfe = (page: number) =>
    `${server.baseUrl}/api/v2/workspaces/${workspace.id}/runs?page%5Bnumber%5D=${page}&page%5Bsize%5D=${PAGE}`;
  const meta = (await timed<Tfe["RunListDocument"]>(tfe(1), token)).body.meta.pagination;
  const lastPage = meta["total-pages"];
  const far = Math.ceil(RUNS / PAGE);
  const [tfeFirst, tfeLast, tfeFar] = await medians([tfe(1), tfe(lastPage), tfe(far)], token);
  const farBody = (await timed<Tfe["RunListDocument"]>(tfe(far), token)).body;
  const farAnswer = `${farBody.data.length} runs, current-page ${farBody.meta.pagination["current-page"]}`;
  process.stdout.write(
    `[bench inventory] ${name}: tfe workspace runs (page[number], newest ${meta["total-count"]} of ${RUNS.toLocaleString("en")} visible): page 1 ${ms(tfeFirst)} (baseline) | page ${lastPage} (depth ${((lastPage - 1) * PAGE).toLocaleString("en")}) ${ms(tfeLast)} = ${(tfeLast / tfeFirst).toFixed(2)}×` +
      ` | page ${far.toLocaleString("en")} (depth ${((far - 1) * PAGE).toLocaleString("en")}) ${ms(tfeFar)} = ${(tfeFar / tfeFirst).toFixed(2)}× (answered with ${farAnswer}: a page number past the newest ${meta["total-count"]} runs gets the last page, so deeper runs are not reachable through this list)\n`,
  );

  // The same two pages at the store layer (no HTTP, no presenting): the query's own share.
  const storeSamples = [[], []] as number[][];
  const deepKey = { createdAt: new Date(before.created_at).toISOString(), id: before.id };
  for (let i = 0; i < REPEATS; i++) {
    for (const [j, after] of [undefined, deepKey].entries()) {
      const start = process.hrtime.bigint();
      await server.services.stores.runs.listByOrganization(organizationId, { limit: PAGE, after });
      storeSamples[j].push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  const [storeFirst, storeDeep] = storeSamples.map(median);
  process.stdout.write(
    `[bench inventory] ${name}: the store query alone: first page ${ms(storeFirst)} | depth ${depth.toLocaleString("en")} ${ms(storeDeep)} = ${(storeDeep / storeFirst).toFixed(2)}×\n`,
  );

  // Contrast: what OFFSET paging would cost at the v1 deep page's depth (store layer, no HTTP).
  const offsetSamples: number[] = [];
  for (let i = 0; i < OFFSET_REPEATS; i++) {
    const start = process.hrtime.bigint();
    await server.db
      .knex("runs")
      .where({ organization_id: organizationId })
      .orderBy(order)
      .offset(depth)
      .limit(PAGE + 1);
    offsetSamples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  process.stdout.write(
    `[bench inventory] ${name}: for contrast, an OFFSET ${depth.toLocaleString("en")} query alone: ${ms(median(offsetSamples))} = ${(median(offsetSamples) / first).toFixed(1)}× the v1 first page\n`,
  );
}

for (const dialect of testDialects()) {
  await withTestServer(dialect, bench, { config: { validateResponses: false } });
}
if (!testDialects().includes("postgres"))
  process.stdout.write("[bench inventory] STACKSHIP_TEST_PG_URL is not set: PostgreSQL skipped\n");
