import { randomBytes } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createRun, listOrganizationRuns, type Run } from "../../../client/src/index.ts";
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import { encodeRunCursor } from "../../src/domain/cursor.ts";
import { expectNothingWritten } from "../support/database.ts";
import {
  createOrganizationWithToken,
  createWorkspace,
  uploadConfiguration,
  withCharacterChanged,
} from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

// The injectable clock: every server in this file reads `now`.
const START = Date.parse("2026-12-01T08:00:00.000Z");
let now = START;
const clock = () => new Date(now);
const options = { clock };

const TIE = "2026-12-01T12:00:00.000Z";
const ORG_A_RUNS = 250;
const ORG_A_TIED = 120;

/** Run keys in the order the inventory must return them: created_at desc, then id desc. */
function byInventoryOrder(a: Pick<Run, "id" | "attributes">, b: Pick<Run, "id" | "attributes">): number {
  if (a.attributes.created_at !== b.attributes.created_at)
    return a.attributes.created_at < b.attributes.created_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

async function createRuns(
  server: TestServer,
  token: string,
  workspaceIds: string[],
  count: number,
  at: () => number,
): Promise<Run[]> {
  const runs: Run[] = [];
  const BATCH = 10;
  for (let done = 0; done < count; done += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, count - done) }, (_, i) => done + i);
    const created = await Promise.all(
      batch.map(async (index) => {
        now = at();
        const result = await createRun({
          client: server.v1(token),
          path: { workspace_id: workspaceIds[index % workspaceIds.length] },
          body: { data: { type: "runs", attributes: { message: `run ${index}` } } },
        });
        return expectStatus(result, 201).data;
      }),
    );
    runs.push(...created);
  }
  return runs;
}

/**
 * Organization A: 250 runs in two workspaces: 65 at distinct earlier instants, 120 at one
 * identical instant, 65 at distinct later instants. Organization B: 30 runs, 15 of them at the
 * same tied instant, which must never show up in A's inventory.
 */
async function seedInventory(server: TestServer) {
  now = START;
  const a = await createOrganizationWithToken(server, "org-a", "admin");
  const b = await createOrganizationWithToken(server, "org-b", "admin");
  const wsA1 = await createWorkspace(server, a.token, a.organizationName, { name: "a-one" });
  const wsA2 = await createWorkspace(server, a.token, a.organizationName, { name: "a-two" });
  const wsB = await createWorkspace(server, b.token, b.organizationName, { name: "b-one" });
  for (const [token, ws] of [
    [a.token, wsA1.id],
    [a.token, wsA2.id],
    [b.token, wsB.id],
  ] as const)
    await uploadConfiguration(server, token, ws);

  const before = (ORG_A_RUNS - ORG_A_TIED) / 2;
  let tick = 0;
  const distinct = () => Date.parse("2026-12-01T09:00:00.000Z") + ++tick * 1000 + (tick % 7);
  const tied = () => Date.parse(TIE);
  const later = () => Date.parse("2026-12-01T13:00:00.000Z") + ++tick * 1000;
  const runsA = [
    ...(await createRuns(server, a.token, [wsA1.id, wsA2.id], before, distinct)),
    ...(await createRuns(server, a.token, [wsA1.id, wsA2.id], ORG_A_TIED, tied)),
    ...(await createRuns(server, a.token, [wsA1.id, wsA2.id], ORG_A_RUNS - ORG_A_TIED - before, later)),
  ];
  const runsB = [
    ...(await createRuns(server, b.token, [wsB.id], 15, tied)),
    ...(await createRuns(server, b.token, [wsB.id], 15, later)),
  ];
  assert.is(runsA.length, ORG_A_RUNS);
  assert.is(runsA.filter((r) => r.attributes.created_at === TIE).length, ORG_A_TIED);
  return { a, b, runsA, runsB, wsA1 };
}

async function page(server: TestServer, token: string, organizationName: string, query: Record<string, unknown>) {
  return listOrganizationRuns({ client: server.v1(token), path: { organization_name: organizationName }, query });
}

// ---------------------------------------------------------------------------------------------
const list = suite("listOrganizationRuns");

testEachServer(
  list,
  "pages 250 runs (120 at one instant) with limit 7: 36 pages, every run exactly once, newest first by (created_at, id), last next_cursor null",
  async (server) => {
    const { a, runsA, runsB, wsA1 } = await seedInventory(server);
    const expected = [...runsA].sort(byInventoryOrder).map((r) => r.id);
    const foreign = new Set(runsB.map((r) => r.id));

    const seen: Run[] = [];
    const pages: number[] = [];
    let cursor: string | undefined;
    let lateRunId: string | undefined;
    do {
      const result = await page(
        server,
        a.token,
        a.organizationName,
        cursor === undefined ? { limit: 7 } : { limit: 7, cursor },
      );
      const body = expectStatus(result, 200);
      assert.ok(
        v1Validators.listOrganizationRunsResponse200(body),
        JSON.stringify(v1Validators.listOrganizationRunsResponse200.errors),
      );
      assert.is(body.meta.page.limit, 7);
      pages.push(body.data.length);
      seen.push(...body.data);
      const next = body.meta.page.next_cursor;
      if (next !== null) {
        assert.type(next, "string");
        assert.not.ok(next.includes(TIE), "the cursor is not opaque: it spells the timestamp");
        assert.not.ok(next.includes("run-"), "the cursor is not opaque: it spells the run id");
      }
      cursor = next ?? undefined;
      if (pages.length === 10) {
        // A run created while paging is newer than every cursor: it must not appear later on.
        now = Date.parse("2026-12-01T23:00:00.000Z");
        const late = await createRun({
          client: server.v1(a.token),
          path: { workspace_id: wsA1.id },
          body: { data: { type: "runs" } },
        });
        lateRunId = expectStatus(late, 201).data.id;
      }
    } while (cursor !== undefined && pages.length < 100);

    assert.is(pages.length, 36);
    assert.equal(pages.slice(0, 35), Array(35).fill(7));
    assert.is(pages[35], 250 - 35 * 7);
    const ids = seen.map((r) => r.id);
    assert.is(new Set(ids).size, ids.length, "a run was repeated across pages");
    assert.ok(!ids.some((id) => foreign.has(id)), "another organization's run appeared");
    assert.ok(!ids.includes(lateRunId!), "a run created mid-pagination appeared behind the cursor");
    assert.equal(ids, expected);
    assert.ok(seen.every((r) => r.relationships.organization.data.id === a.organizationId));
    // The run created mid-way is the newest one now.
    const first = expectStatus(await page(server, a.token, a.organizationName, { limit: 1 }), 200);
    assert.is(first.data[0].id, lateRunId);
  },
  options,
);

testEachServer(
  list,
  "accepts limit 1 and 100, defaults to 20, and fails 400 REQUEST_INVALID for 0, 101 and non-integers (source.parameter limit)",
  async (server) => {
    const { a, runsA } = await seedInventory(server);
    const expected = [...runsA].sort(byInventoryOrder).map((r) => r.id);

    const one = expectStatus(await page(server, a.token, a.organizationName, { limit: 1 }), 200);
    assert.equal(
      one.data.map((r) => r.id),
      expected.slice(0, 1),
    );
    assert.is(one.meta.page.limit, 1);
    assert.type(one.meta.page.next_cursor, "string");

    const hundred = expectStatus(await page(server, a.token, a.organizationName, { limit: 100 }), 200);
    assert.equal(
      hundred.data.map((r) => r.id),
      expected.slice(0, 100),
    );
    assert.is(hundred.meta.page.limit, 100);
    const rest = expectStatus(
      await page(server, a.token, a.organizationName, { limit: 100, cursor: hundred.meta.page.next_cursor }),
      200,
    );
    assert.equal(
      rest.data.map((r) => r.id),
      expected.slice(100, 200),
    );
    const tail = expectStatus(
      await page(server, a.token, a.organizationName, { limit: 100, cursor: rest.meta.page.next_cursor }),
      200,
    );
    assert.equal(
      tail.data.map((r) => r.id),
      expected.slice(200),
    );
    assert.is(tail.meta.page.next_cursor, null);

    const byDefault = expectStatus(await page(server, a.token, a.organizationName, {}), 200);
    assert.is(byDefault.data.length, 20);
    assert.is(byDefault.meta.page.limit, 20);
    assert.equal(
      byDefault.data.map((r) => r.id),
      expected.slice(0, 20),
    );

    for (const limit of [0, 101, -1, 1000, "abc", "1.5", 7.5]) {
      const result = await expectNothingWritten(server, () => page(server, a.token, a.organizationName, { limit }));
      expectV1Error(result, 400, "REQUEST_INVALID", { parameter: "limit" });
    }
  },
  options,
);

testEachServer(
  list,
  "fails 400 RUN_LIST_CURSOR_INVALID (source.parameter cursor) for bare timestamps, delimiter cursors, tampered, forged, unauthenticated and garbage cursors",
  async (server) => {
    const { a } = await seedInventory(server);
    const real = expectStatus(await page(server, a.token, a.organizationName, { limit: 7 }), 200).meta.page
      .next_cursor!;
    assert.type(real, "string");
    // The real cursor works.
    expectStatus(await page(server, a.token, a.organizationName, { limit: 7, cursor: real }), 200);

    const firstPage = expectStatus(await page(server, a.token, a.organizationName, { limit: 7 }), 200).data;
    const lastOfPage = firstPage[6];
    // The real cursor's payload is exactly this key, so "unsigned" is the real cursor minus its MAC.
    const key = { v: 1, c: lastOfPage.attributes.created_at, i: lastOfPage.id };
    const unsigned = Buffer.from(JSON.stringify(key)).toString("base64url");
    assert.is(unsigned, real.split(".")[0]);
    const otherKey = Buffer.from(
      JSON.stringify({ v: 1, c: firstPage[5].attributes.created_at, i: firstPage[5].id }),
    ).toString("base64url");
    const tampered = [
      0,
      1,
      Math.floor(real.length / 3),
      real.indexOf(".") - 1,
      real.indexOf(".") + 1,
      real.length - 2,
      real.length - 1,
    ].map((i) => withCharacterChanged(real, i));
    for (const t of tampered) assert.is.not(t, real);

    const invalid: Array<[string, string]> = [
      ["bare timestamp", "2026-12-01T00:00:00Z"],
      ["bare timestamp with milliseconds", "2026-12-01T12:00:00.000Z"],
      ["delimiter cursor", "2026-12-01T00:00:00Z|run-x"],
      ["delimiter cursor with a real key", `${lastOfPage.attributes.created_at}|${lastOfPage.id}`],
      ["comma cursor with a real key", `${lastOfPage.attributes.created_at},${lastOfPage.id}`],
      ...tampered.map((t, i) => [`real cursor with one character changed (#${i})`, t] as [string, string]),
      ["real cursor without its MAC", real.split(".")[0]],
      ["real cursor with an empty MAC", `${real.split(".")[0]}.`],
      ["real cursor with an extra segment", `${real}.AAAA`],
      ["real cursor, upper-cased", real.toUpperCase()],
      ["real cursor, reversed", [...real].reverse().join("")],
      ["base64url JSON key without a MAC", unsigned],
      ["base64 JSON key without a MAC", Buffer.from(JSON.stringify(key)).toString("base64")],
      ["base64url JSON key with a zero MAC", `${unsigned}.${Buffer.alloc(16).toString("base64url")}`],
      ["another key with the real cursor's MAC", `${otherKey}.${real.split(".")[1]}`],
      [
        "key signed with another secret",
        encodeRunCursor({ createdAt: lastOfPage.attributes.created_at, id: lastOfPage.id }, randomBytes(32)),
      ],
      ["garbage", "garbage"],
      ["punctuation", "!!!"],
      ["a lone dot", "."],
      ["three parts", "a.b.c"],
      ["JSON", JSON.stringify(key)],
      ["run id", lastOfPage.id],
    ];
    for (const [label, cursor] of invalid) {
      const result = await expectNothingWritten(server, () =>
        page(server, a.token, a.organizationName, { limit: 7, cursor }),
      );
      try {
        expectV1Error(result, 400, "RUN_LIST_CURSOR_INVALID", { parameter: "cursor" });
      } catch (error) {
        (error as Error).message = `${label} (${cursor}): ${(error as Error).message}`;
        throw error;
      }
    }
  },
  options,
);

testEachServer(
  list,
  "fails 400 REQUEST_INVALID for an empty cursor=, a cursor over 512 characters and an unknown query parameter",
  async (server) => {
    const { a } = await seedInventory(server);
    expectV1Error(await page(server, a.token, a.organizationName, { cursor: "" }), 400, "REQUEST_INVALID", {
      parameter: "cursor",
    });
    expectV1Error(
      await page(server, a.token, a.organizationName, { cursor: "A".repeat(513) }),
      400,
      "REQUEST_INVALID",
      { parameter: "cursor" },
    );
    expectV1Error(
      await page(server, a.token, a.organizationName, { limit: 7, sort: "created_at" }),
      400,
      "REQUEST_INVALID",
      { parameter: "sort" },
    );
    expectV1Error(await page(server, a.token, a.organizationName, { "page[size]": 7 }), 400, "REQUEST_INVALID", {
      parameter: "page[size]",
    });
  },
  options,
);

testEachServer(
  list,
  "treats a cursor from another organization's list as a position only: 200 with this organization's runs after that key, never the other's",
  async (server) => {
    // NOTE: the cursor authenticates (created_at, id) with a deployment-wide key and does not name
    // its organization, so it is a valid position in any list; the query stays scoped to the
    // organization in the path. This test records that behaviour.
    const { a, b, runsA, runsB } = await seedInventory(server);
    const bFirst = expectStatus(await page(server, b.token, b.organizationName, { limit: 3 }), 200);
    const foreignCursor = bFirst.meta.page.next_cursor!;
    const keyRun = bFirst.data[2];
    const result = expectStatus(
      await page(server, a.token, a.organizationName, { limit: 100, cursor: foreignCursor }),
      200,
    );
    const expected = [...runsA]
      .sort(byInventoryOrder)
      .filter((r) => byInventoryOrder(r, keyRun) > 0)
      .map((r) => r.id);
    assert.ok(expected.length > 0);
    assert.equal(
      result.data.map((r) => r.id),
      expected.slice(0, 100),
    );
    const foreign = new Set(runsB.map((r) => r.id));
    assert.ok(result.data.every((r) => !foreign.has(r.id)));
  },
  options,
);

list.run();
