// GET /v1/organizations/{name}/workspaces: all at once without `limit`; with it, forward pages by
// name behind an opaque cursor bound to the organization, and a case-insensitive name filter.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { listWorkspaces } from "../../../client/src/index.ts";
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import { createOrganizationWithToken, createWorkspace, withTamperedMac } from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const NAMES = [
  ...Array.from({ length: 20 }, (_, i) => `svc-${String(i).padStart(2, "0")}`),
  "App-Frontend",
  "app-backend",
  "Zeta",
  "alpha",
  "BETA",
];

async function seed(server: TestServer) {
  const acme = await createOrganizationWithToken(server, "acme", "admin");
  const other = await createOrganizationWithToken(server, "other", "admin");
  for (const name of NAMES) await createWorkspace(server, acme.token, "acme", { name });
  await createWorkspace(server, other.token, "other", { name: "app-elsewhere" });
  return { acme, other };
}

async function pages(server: TestServer, token: string, organization: string, query: Record<string, unknown>) {
  const names: string[][] = [];
  let cursor: string | undefined;
  do {
    const body = expectStatus(
      await listWorkspaces({
        client: server.v1(token),
        path: { organization_name: organization },
        query: { ...query, ...(cursor ? { cursor } : {}) },
      }),
      200,
    );
    assert.ok(
      v1Validators.listWorkspacesResponse200(body),
      JSON.stringify(v1Validators.listWorkspacesResponse200.errors),
    );
    names.push(body.data.map((w) => w.attributes.name));
    cursor = body.meta?.page.next_cursor ?? undefined;
  } while (cursor !== undefined && names.length < 50);
  return names;
}

const codeUnitOrder = (names: string[]) => [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

const list = suite("listWorkspaces paging");

testEachServer(
  list,
  "pages 25 workspaces by 7 in code-unit name order, each once; without limit all at once and no meta",
  async (server) => {
    const { acme } = await seed(server);
    const got = await pages(server, acme.token, "acme", { limit: 7 });
    assert.equal(
      got.map((p) => p.length),
      [7, 7, 7, 4],
    );
    assert.equal(got.flat(), codeUnitOrder(NAMES));
    const all = expectStatus(
      await listWorkspaces({ client: server.v1(acme.token), path: { organization_name: "acme" } }),
      200,
    );
    assert.is(all.data.length, 25);
    assert.is(all.meta, undefined);
    // Exactly a page's worth: one page, no cursor.
    assert.equal(
      (await pages(server, acme.token, "acme", { limit: 25 })).map((p) => p.length),
      [25],
    );
    assert.equal(
      (await pages(server, acme.token, "acme", { limit: 24 })).map((p) => p.length),
      [24, 1],
    );
  },
);

testEachServer(
  list,
  "filters by a case-insensitive name fragment, paged the same way, never another organization's",
  async (server) => {
    const { acme } = await seed(server);
    assert.equal((await pages(server, acme.token, "acme", { limit: 1, name: "APP" })).flat(), [
      "App-Frontend",
      "app-backend",
    ]);
    assert.equal(
      (await pages(server, acme.token, "acme", { limit: 100, name: "svc-1" })).flat(),
      codeUnitOrder(NAMES.filter((n) => n.startsWith("svc-1"))),
    );
    assert.equal((await pages(server, acme.token, "acme", { limit: 5, name: "no-such" })).flat(), []);
  },
);

testEachServer(
  list,
  "refuses a tampered cursor, another organization's, and a limit outside 1..100",
  async (server) => {
    const { acme, other } = await seed(server);
    const first = expectStatus(
      await listWorkspaces({ client: server.v1(acme.token), path: { organization_name: "acme" }, query: { limit: 2 } }),
      200,
    );
    const cursor = first.meta!.page.next_cursor!;
    const call = (token: string, organization: string, query: Record<string, unknown>) =>
      listWorkspaces({ client: server.v1(token), path: { organization_name: organization }, query: query });
    expectV1Error(
      await call(acme.token, "acme", { limit: 2, cursor: withTamperedMac(cursor) }),
      400,
      "WORKSPACE_LIST_CURSOR_INVALID",
      { parameter: "cursor" },
    );
    expectV1Error(await call(other.token, "other", { limit: 2, cursor }), 400, "WORKSPACE_LIST_CURSOR_INVALID", {
      parameter: "cursor",
    });
    expectV1Error(await call(acme.token, "acme", { limit: 0 }), 400, "REQUEST_INVALID", { parameter: "limit" });
    expectV1Error(await call(acme.token, "acme", { limit: 101 }), 400, "REQUEST_INVALID", { parameter: "limit" });
    expectStatus(await call(acme.token, "acme", { limit: 100 }), 200);
    expectStatus(await call(acme.token, "acme", { limit: 1 }), 200);
  },
);

list.run();
