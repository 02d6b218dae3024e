// The organization run list's status filter (`?status=a,b`) and each run's `created_by`:
// the dashboard's "Needs attention" count and its denser rows read both.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createRun, listOrganizationRuns, type Run } from "../../../client/src/index.ts";
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import { createOrganizationWithToken, createWorkspace, uploadConfiguration } from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { createUser, addMembership, signIn } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const ATTENTION = ["awaiting_approval", "policy_soft_failed", "needs_recovery"] as const;

/** 24 runs through the API, then their statuses set in the database (what a runner would have made of them). */
async function seed(server: TestServer) {
  const org = await createOrganizationWithToken(server, "acme", "admin");
  const workspace = await createWorkspace(server, org.token, org.organizationName, { name: "net" });
  await uploadConfiguration(server, org.token, workspace.id);
  const runs: Run[] = [];
  for (let i = 0; i < 24; i++) {
    const created = await createRun({
      client: server.v1(org.token),
      path: { workspace_id: workspace.id },
      body: { data: { type: "runs", attributes: { message: `run ${i}` } } },
    });
    runs.push(expectStatus(created, 201).data);
  }
  // Every third run awaits approval, every eighth is soft-failed, the fifth needs recovery; the rest applied.
  const statusOf = (i: number) =>
    i === 5 ? "needs_recovery" : i % 8 === 0 ? "policy_soft_failed" : i % 3 === 0 ? "awaiting_approval" : "applied";
  for (const [i, run] of runs.entries())
    await server.db
      .knex("runs")
      .where({ id: run.id })
      .update({ status: statusOf(i) });
  const expected = (statuses: readonly string[]) =>
    runs
      .filter((_, i) => statuses.includes(statusOf(i)))
      .map((r) => r.id)
      .reverse();
  return { org, workspace, runs, expected };
}

async function listAll(server: TestServer, token: string, organization: string, query: Record<string, unknown>) {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const result = await listOrganizationRuns({
      client: server.v1(token),
      path: { organization_name: organization },
      query: { ...query, ...(cursor ? { cursor } : {}) },
    });
    const body = expectStatus(result, 200);
    assert.ok(
      v1Validators.listOrganizationRunsResponse200(body),
      JSON.stringify(v1Validators.listOrganizationRunsResponse200.errors),
    );
    ids.push(...body.data.map((r) => r.id));
    cursor = body.meta.page.next_cursor ?? undefined;
    if (cursor)
      assert.ok(
        body.links.next?.includes(`status=${String(query.status)}`),
        `the next link keeps the filter: ${body.links.next}`,
      );
  } while (cursor !== undefined && ++pages < 50);
  return ids;
}

const filter = suite("listOrganizationRuns ?status=");

testEachServer(
  filter,
  "one status, and several comma-separated, page through exactly the matching runs newest first; the cursor continues the filtered list",
  async (server) => {
    const { org, expected } = await seed(server);
    assert.equal(
      await listAll(server, org.token, org.organizationName, { status: "awaiting_approval", limit: 2 }),
      expected(["awaiting_approval"]),
    );
    const attention = await listAll(server, org.token, org.organizationName, { status: ATTENTION.join(","), limit: 3 });
    assert.equal(attention, expected(ATTENTION));
    assert.is(attention.length, 11);
    assert.equal(
      await listAll(server, org.token, org.organizationName, { status: "needs_recovery", limit: 1 }),
      expected(["needs_recovery"]),
    );
    // A status no run is in: an empty page, not everything.
    assert.equal(await listAll(server, org.token, org.organizationName, { status: "errored" }), []);
    // Without the filter: all 24.
    assert.is((await listAll(server, org.token, org.organizationName, { limit: 100 })).length, 24);
    // A repeated status counts once.
    assert.equal(
      await listAll(server, org.token, org.organizationName, { status: "needs_recovery,needs_recovery" }),
      expected(["needs_recovery"]),
    );
  },
);

testEachServer(
  filter,
  "refuses an unknown status, an empty one and a malformed list with 400 REQUEST_INVALID",
  async (server) => {
    const { org } = await seed(server);
    const list = (status: string) =>
      listOrganizationRuns({
        client: server.v1(org.token),
        path: { organization_name: org.organizationName },
        query: { status },
      });
    const unknown = expectV1Error(await list("awaiting_approval,approved_maybe"), 400, "REQUEST_INVALID");
    assert.ok(JSON.stringify(unknown).includes("approved_maybe"), "the error names the unknown status");
    expectV1Error(await list(""), 400, "REQUEST_INVALID", { parameter: "status" });
    expectV1Error(await list("awaiting_approval,"), 400, "REQUEST_INVALID", { parameter: "status" });
    expectV1Error(await list("Awaiting_Approval"), 400, "REQUEST_INVALID", { parameter: "status" });
  },
);

const creators = suite("Run created_by");

testEachServer(
  creators,
  "names the token's principal for a token's run and the user by display name for a session's run",
  async (server) => {
    const org = await createOrganizationWithToken(server, "acme", "admin");
    const workspace = await createWorkspace(server, org.token, org.organizationName, { name: "net" });
    await uploadConfiguration(server, org.token, workspace.id);
    const byToken = expectStatus(
      await createRun({
        client: server.v1(org.token),
        path: { workspace_id: workspace.id },
        body: { data: { type: "runs" } },
      }),
      201,
    ).data;
    assert.is(byToken.attributes.created_by?.kind, "token");
    assert.ok(byToken.attributes.created_by?.name, "a token principal has a name");
    const user = await createUser(server, { displayName: "Ada Lovelace" });
    await addMembership(server, org.organizationName, user.email, "operator");
    const session = await signIn(server, user.email, user.password);
    const bySession = expectStatus(
      await createRun({
        client: session.client(),
        path: { workspace_id: workspace.id },
        body: { data: { type: "runs" } },
      }),
      201,
    ).data;
    assert.equal(bySession.attributes.created_by, { id: user.userId, kind: "user", name: "Ada Lovelace" });
    const listed = expectStatus(
      await listOrganizationRuns({ client: server.v1(org.token), path: { organization_name: org.organizationName } }),
      200,
    ).data;
    assert.equal(
      listed.map((r) => [r.id, r.attributes.created_by?.kind]),
      [
        [bySession.id, "user"],
        [byToken.id, "token"],
      ],
    );
    // A run with no creator on record says so.
    await server.db.knex("runs").where({ id: byToken.id }).update({ created_by: null });
    const again = expectStatus(
      await listOrganizationRuns({ client: server.v1(org.token), path: { organization_name: org.organizationName } }),
      200,
    ).data;
    assert.is(again.find((r) => r.id === byToken.id)!.attributes.created_by, null);
  },
);

filter.run();
creators.run();
