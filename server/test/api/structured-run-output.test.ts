// The workspace switch `structured-run-output-enabled` (issue 29): settable through /v1 and
// /api/v2, default false (the plan and apply logs are still human text), audited, recorded on
// each run when it is created, and honoured by that run's plan whatever the workspace says later.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { phaseId } from "../../src/api/tfe/presenters.ts";
import { createOrganizationWithToken, createToken, createWorkspace } from "../support/factories.ts";
import { fixture, startRun, waitToSettle } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const test = suite("structured run output");

async function setUp(server: TestServer) {
  const { organizationName } = await createOrganizationWithToken(server, "acme", "admin");
  const { token: admin } = await createToken(server, server.bootstrapToken, organizationName, "admin");
  const { token: viewer } = await createToken(server, server.bootstrapToken, organizationName, "viewer");
  const workspace = await createWorkspace(server, admin, organizationName, { name: "app" });
  return { organizationName, admin, viewer, workspace };
}

async function v1Patch(
  server: TestServer,
  token: string,
  workspaceId: string,
  attributes: Record<string, unknown>,
): Promise<Response> {
  return fetch(`${server.baseUrl}/v1/workspaces/${workspaceId}`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({ data: { type: "workspaces", attributes } }),
  });
}

async function tfeWorkspace(
  server: TestServer,
  token: string,
  workspaceId: string,
  attributes?: Record<string, unknown>,
) {
  const response = await fetch(`${server.baseUrl}/api/v2/workspaces/${workspaceId}`, {
    method: attributes ? "PATCH" : "GET",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
    ...(attributes ? { body: JSON.stringify({ data: { type: "workspaces", attributes } }) } : {}),
  });
  return {
    status: response.status,
    document: (await response.json()) as {
      data: { attributes: Record<string, unknown> };
      errors?: Array<{ code: string }>;
    },
  };
}

testEachServer(
  test,
  "the switch: true for a new workspace, set through /v1 and /api/v2, refused to a viewer, audited once per change",
  async (server) => {
    const { admin, viewer, workspace } = await setUp(server);
    assert.is(workspace.attributes.structured_run_output_enabled, true);
    assert.is(
      (await tfeWorkspace(server, admin, workspace.id)).document.data.attributes["structured-run-output-enabled"],
      true,
    );

    const off = await v1Patch(server, admin, workspace.id, { structured_run_output_enabled: false });
    assert.is(off.status, 200);
    assert.is(
      ((await off.json()) as { data: { attributes: Record<string, unknown> } }).data.attributes
        .structured_run_output_enabled,
      false,
    );
    assert.is(
      (await tfeWorkspace(server, admin, workspace.id)).document.data.attributes["structured-run-output-enabled"],
      false,
    );
    // The same value again changes nothing and is not audited again.
    assert.is((await v1Patch(server, admin, workspace.id, { structured_run_output_enabled: false })).status, 200);

    const on = await tfeWorkspace(server, admin, workspace.id, { "structured-run-output-enabled": true });
    assert.is(on.status, 200);
    assert.is(on.document.data.attributes["structured-run-output-enabled"], true);
    assert.is((await server.services.stores.workspaces.getById(workspace.id))!.structuredRunOutputEnabled, true);

    // A viewer may not change it: nothing is written.
    assert.is((await v1Patch(server, viewer, workspace.id, { structured_run_output_enabled: false })).status, 403);
    assert.is(
      (await tfeWorkspace(server, viewer, workspace.id, { "structured-run-output-enabled": false })).status >= 400,
      true,
    );
    assert.is((await server.services.stores.workspaces.getById(workspace.id))!.structuredRunOutputEnabled, true);
    // Not a boolean: refused before anything is written.
    assert.is((await v1Patch(server, admin, workspace.id, { structured_run_output_enabled: "no" })).status, 422);
    assert.is((await server.services.stores.workspaces.getById(workspace.id))!.structuredRunOutputEnabled, true);

    const stored = (await server.services.stores.workspaces.getById(workspace.id))!;
    const events = await server.services.stores.audit.listByOrganization(stored.organizationId);
    const changes = events.filter(
      (e) =>
        e.action === "workspace.updated" && e.targetId === workspace.id && "structured_run_output_enabled" in e.data,
    );
    assert.equal(
      changes.map((e) => e.data.structured_run_output_enabled),
      [false, true],
    );
  },
);

testEachServer(test, "a workspace created with the switch off through /v1 or /api/v2 has it off", async (server) => {
  const { organizationName, admin } = await setUp(server);
  const viaV1 = await createWorkspace(server, admin, organizationName, {
    name: "plain-v1",
    structured_run_output_enabled: false,
  });
  assert.is(viaV1.attributes.structured_run_output_enabled, false);
  const response = await fetch(`${server.baseUrl}/api/v2/organizations/${organizationName}/workspaces`, {
    method: "POST",
    headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({
      data: { type: "workspaces", attributes: { name: "plain-tfe", "structured-run-output-enabled": false } },
    }),
  });
  assert.is(response.status, 201);
  const document = (await response.json()) as { data: { id: string; attributes: Record<string, unknown> } };
  assert.is(document.data.attributes["structured-run-output-enabled"], false);
  assert.is((await server.services.stores.workspaces.getById(document.data.id))!.structuredRunOutputEnabled, false);
});

testEachServer(test, "a workspace created with the switch on through /api/v2 has it on", async (server) => {
  const { organizationName, admin } = await setUp(server);
  const response = await fetch(`${server.baseUrl}/api/v2/organizations/${organizationName}/workspaces`, {
    method: "POST",
    headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({
      data: { type: "workspaces", attributes: { name: "structured", "structured-run-output-enabled": true } },
    }),
  });
  assert.is(response.status, 201);
  const document = (await response.json()) as { data: { id: string; attributes: Record<string, unknown> } };
  assert.is(document.data.attributes["structured-run-output-enabled"], true);
});

testEachServer(
  test,
  "each run records the switch when it is created: on builds the redacted plan for a plan without imports, a run created before keeps off",
  async (server) => {
    const { admin, viewer, workspace } = await setUp(server);
    assert.is((await v1Patch(server, admin, workspace.id, { structured_run_output_enabled: false })).status, 200);
    const before = await startRun(server, admin, workspace.id, fixture("random"), "speculative");
    assert.is((await v1Patch(server, admin, workspace.id, { structured_run_output_enabled: true })).status, 200);
    const after = await startRun(server, admin, workspace.id, fixture("random"), "speculative");
    assert.is((await server.services.stores.runs.getById(before.id))!.structuredRunOutput, false);
    assert.is((await server.services.stores.runs.getById(after.id))!.structuredRunOutput, true);
    // Switched off again (before or while they plan): each run keeps the value it was created with.
    assert.is((await v1Patch(server, admin, workspace.id, { structured_run_output_enabled: false })).status, 200);
    for (const run of [before, after]) {
      await waitToSettle(server, admin, run.id, "planned_and_finished");
    }
    const off = await fetch(`${server.baseUrl}/api/v2/plans/${phaseId(before.id, "plan")}/json-output-redacted`, {
      headers: { Authorization: `Bearer ${viewer}` },
    });
    assert.is(off.status, 404);
    await off.arrayBuffer();
    const on = await fetch(`${server.baseUrl}/api/v2/plans/${phaseId(after.id, "plan")}/json-output-redacted`, {
      headers: { Authorization: `Bearer ${viewer}` },
    });
    assert.is(on.status, 200);
    const document = (await on.json()) as {
      resource_changes: Array<{ address: string }>;
      provider_schemas: Record<string, unknown>;
    };
    assert.ok(document.resource_changes.length > 0);
    assert.ok(Object.keys(document.provider_schemas).includes("registry.opentofu.org/hashicorp/random"));
  },
  { runner: true },
);

test.run();
