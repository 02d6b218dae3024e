// Workspace deletion on /api/v2 (issue 26, part 2): go-tfe's Workspaces.Delete/DeleteByID (force)
// and SafeDelete/SafeDeleteByID, the tfe provider's way of removing a tfe_workspace. Organization
// administrators only; a deleted workspace is never found again and its name is free, while its
// records (variables, runs, state versions, audit) are kept. Each refusal writes nothing.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { countRows } from "../support/database.ts";
import { createOrganizationWithToken, createToken, createVariable, createWorkspace } from "../support/factories.ts";
import { seedRunIn, storeState } from "../support/seeded-runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import { firstError, type Tfe } from "../support/documents.ts";
import type { AuditEventRow, WorkspaceRow } from "../../src/store/rows.ts";

const KEPT_TABLES = [
  "workspaces",
  "workspace_variables",
  "runs",
  "state_versions",
  "workspace_locks",
  "audit_events",
] as const;

interface Answer<T = unknown> {
  status: number;
  json: T;
}

async function tfe<T = unknown>(
  server: TestServer,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<Answer<T>> {
  const response = await fetch(`${server.baseUrl}/api/v2${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: (text ? JSON.parse(text) : undefined) as T };
}

/** Asserts a refusal: the status, the error title, and that no table changed. */
async function expectRefused(
  server: TestServer,
  act: () => Promise<Answer>,
  status: number,
  title: string,
): Promise<Answer> {
  const before = await countRows(server, KEPT_TABLES);
  const deletedBefore = await server.db.knex("workspaces").whereNotNull("deleted_at").count({ n: "*" }).first();
  const answer = await act();
  assert.is(answer.status, status, JSON.stringify(answer.json));
  assert.is(firstError(answer.json).title, title);
  assert.equal(await countRows(server, KEPT_TABLES), before, "a refused deletion wrote rows");
  assert.equal(
    await server.db.knex("workspaces").whereNotNull("deleted_at").count({ n: "*" }).first(),
    deletedBefore,
    "a refused deletion marked a workspace",
  );
  return answer;
}

const test = suite("tfe workspace deletion");

testEachServer(
  test,
  "force delete by id: 204, then 404 by id and name, gone from the list, name free again, records kept",
  async (server) => {
    const org = await createOrganizationWithToken(server, "acme", "admin");
    const workspace = await createWorkspace(server, org.token, "acme", { name: "doomed" });
    await createVariable(server, org.token, workspace.id, { key: "region", value: "eu" });
    const before = await countRows(server, ["workspace_variables", "workspaces"]);

    const shown = await tfe<Tfe["WorkspaceDocument"]>(server, "GET", `/workspaces/${workspace.id}`, org.token);
    assert.is(shown.json.data.attributes.permissions["can-force-delete"], true);

    const deleted = await tfe(server, "DELETE", `/workspaces/${workspace.id}`, org.token);
    assert.is(deleted.status, 204);
    assert.is((await tfe(server, "GET", `/workspaces/${workspace.id}`, org.token)).status, 404);
    assert.is((await tfe(server, "GET", `/organizations/acme/workspaces/doomed`, org.token)).status, 404);
    const list = await tfe<Tfe["WorkspaceListDocument"]>(server, "GET", `/organizations/acme/workspaces`, org.token);
    assert.equal(
      list.json.data.map((w) => w.id),
      [],
    );
    assert.is(
      (await tfe(server, "DELETE", `/workspaces/${workspace.id}`, org.token)).status,
      404,
      "a second delete finds nothing",
    );
    // The records stay: the workspace row (marked) and its variable; the deletion is audited.
    assert.equal(await countRows(server, ["workspace_variables", "workspaces"]), before);
    const row = await server.db.knex("workspaces").where({ id: workspace.id }).first<WorkspaceRow>();
    assert.ok(row.deleted_at, "the row is marked deleted");
    const audit = await server.db
      .knex("audit_events")
      .where({ action: "workspace.deleted", target_id: workspace.id })
      .select<AuditEventRow[]>("*");
    assert.is(audit.length, 1);
    assert.match(String(audit[0].data), /"name":"doomed"/);
    assert.match(String(audit[0].data), /"mode":"force"/);
    // The name can be taken again, by a different workspace.
    const again = await tfe<Tfe["WorkspaceDocument"]>(server, "POST", `/organizations/acme/workspaces`, org.token, {
      data: { type: "workspaces", attributes: { name: "doomed" } },
    });
    assert.is(again.status, 201, JSON.stringify(again.json));
    assert.is.not(again.json.data.id, workspace.id);
  },
);

testEachServer(test, "delete and safe-delete by name reach the named workspace only", async (server) => {
  const org = await createOrganizationWithToken(server, "acme", "admin");
  const keep = await createWorkspace(server, org.token, "acme", { name: "keep" });
  await createWorkspace(server, org.token, "acme", { name: "one" });
  await createWorkspace(server, org.token, "acme", { name: "two" });
  assert.is((await tfe(server, "DELETE", `/organizations/acme/workspaces/one`, org.token)).status, 204);
  assert.is(
    (await tfe(server, "POST", `/organizations/acme/workspaces/two/actions/safe-delete`, org.token)).status,
    204,
  );
  assert.is((await tfe(server, "DELETE", `/organizations/acme/workspaces/missing`, org.token)).status, 404);
  const list = await tfe<Tfe["WorkspaceListDocument"]>(server, "GET", `/organizations/acme/workspaces`, org.token);
  assert.equal(
    list.json.data.map((w) => w.id),
    [keep.id],
  );
});

testEachServer(
  test,
  "only organization administrators delete: an operator gets 403, another organization 404, nothing written",
  async (server) => {
    const org = await createOrganizationWithToken(server, "acme", "admin");
    const other = await createOrganizationWithToken(server, "globex", "admin");
    const operator = (await createToken(server, org.token, "acme", "operator")).token;
    const workspace = await createWorkspace(server, org.token, "acme", { name: "app" });
    const shown = await tfe<Tfe["WorkspaceDocument"]>(server, "GET", `/workspaces/${workspace.id}`, operator);
    assert.is(shown.json.data.attributes.permissions["can-force-delete"], false);
    await expectRefused(
      server,
      () => tfe(server, "DELETE", `/workspaces/${workspace.id}`, operator),
      403,
      "Permission denied",
    );
    await expectRefused(
      server,
      () => tfe(server, "POST", `/workspaces/${workspace.id}/actions/safe-delete`, operator),
      403,
      "Permission denied",
    );
    await expectRefused(
      server,
      () => tfe(server, "DELETE", `/organizations/acme/workspaces/app`, operator),
      403,
      "Permission denied",
    );
    await expectRefused(
      server,
      () => tfe(server, "DELETE", `/workspaces/${workspace.id}`, other.token),
      404,
      "not found",
    );
    assert.is((await tfe(server, "GET", `/workspaces/${workspace.id}`, org.token)).status, 200);
  },
);

testEachServer(
  test,
  "safe-delete refuses a locked workspace (409); force delete takes it and releases the user's lock",
  async (server) => {
    const org = await createOrganizationWithToken(server, "acme", "admin");
    const workspace = await createWorkspace(server, org.token, "acme", { name: "locked" });
    assert.is(
      (
        await tfe(server, "POST", `/workspaces/${workspace.id}/actions/lock`, org.token, {
          data: { type: "", attributes: { reason: "t" } },
        })
      ).status,
      200,
    );
    const refused = await expectRefused(
      server,
      () => tfe(server, "POST", `/workspaces/${workspace.id}/actions/safe-delete`, org.token),
      409,
      "Workspace is locked",
    );
    assert.match(firstError(refused.json).detail!, /is locked by User /);
    assert.is((await tfe(server, "DELETE", `/workspaces/${workspace.id}`, org.token)).status, 204);
    assert.is(
      await server.db.knex("workspace_locks").where({ workspace_id: workspace.id }).first(),
      undefined,
      "the lock went with the workspace",
    );
  },
);

testEachServer(test, "a run in progress blocks both deletions (409); state blocks safe-delete only", async (server) => {
  const org = await createOrganizationWithToken(server, "acme", "admin");
  const busy = await createWorkspace(server, org.token, "acme", { name: "busy" });
  const { run } = await seedRunIn(server, org.token, busy.id);
  for (const [method, path] of [
    ["DELETE", `/workspaces/${busy.id}`],
    ["POST", `/workspaces/${busy.id}/actions/safe-delete`],
  ] as const) {
    const refused = await expectRefused(server, () => tfe(server, method, path, org.token), 409, "Conflicting change");
    assert.match(firstError(refused.json).detail!, new RegExp(`has run ${run.id} in progress`));
  }

  // State, no run: safe-delete refuses, force delete goes through.
  const stateful = await createWorkspace(server, org.token, "acme", { name: "stateful" });
  await storeState(
    server,
    stateful.id,
    null,
    1,
    "finalized",
    Buffer.from('{"version":4,"serial":1,"lineage":"l","resources":[]}'),
  );
  const refused = await expectRefused(
    server,
    () => tfe(server, "POST", `/workspaces/${stateful.id}/actions/safe-delete`, org.token),
    409,
    "Conflicting change",
  );
  assert.match(firstError(refused.json).detail!, /has state that may still manage resources/);
  assert.is((await tfe(server, "DELETE", `/workspaces/${stateful.id}`, org.token)).status, 204);
  // Its state version is kept.
  assert.is((await server.services.stores.stateVersions.listByWorkspace(stateful.id)).length, 1);
});

test.run();
