import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getRun } from "../../../client/src/index.ts";
import {
  createRun as tfeCreateRun,
  createWorkspace as tfeCreateWorkspace,
  getDiscovery,
  getEntitlementSet,
  getWorkspaceByName,
  ping,
} from "../../../generated/tfe/client/index.ts";
import { operations as tfeOperations } from "../../../generated/tfe/operations.gen.ts";
import * as tfeValidators from "../../../generated/tfe/validators.gen.js";
import { allTablesUnchanged } from "../support/api-requests.ts";
import {
  createOrganizationWithToken,
  createToken,
  createWorkspace as createV1Workspace,
  pinnedOpenTofuVersion,
  uploadConfiguration,
} from "../support/factories.ts";
import { expectStatus, expectTfeError, type SdkResult } from "../support/responses.ts";
import type { Tfe } from "../support/documents.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

/** An organization, an admin token, a workspace with an uploaded configuration. */
async function setUp(server: TestServer, name = "acme") {
  const { organizationName, token } = await createOrganizationWithToken(server, name, "admin");
  const workspace = await createV1Workspace(server, token, organizationName, { name: "networking" });
  const { configurationVersion } = await uploadConfiguration(server, token, workspace.id);
  return { organizationName, token, workspace, configurationVersion };
}

function runDocument(
  workspaceId: string,
  configurationVersionId: string,
  attributes: Record<string, unknown>,
): Tfe["RunCreateDocument"] {
  return {
    data: {
      type: "runs" as const,
      attributes,
      relationships: {
        workspace: { data: { type: "workspaces", id: workspaceId } },
        "configuration-version": { data: { type: "configuration-versions", id: configurationVersionId } },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
const discovery = suite("getDiscovery and ping");

testEachServer(
  discovery,
  "serves the discovery document as application/json with the four service keys at /api/v2/",
  async (server) => {
    const result = await getDiscovery({ client: server.tfe() });
    const body = expectStatus(result, 200);
    assert.is(result.response.headers.get("content-type")?.split(";")[0].trim(), "application/json");
    assert.equal(body, {
      "tfe.v2": "/api/v2/",
      "tfe.v2.1": "/api/v2/",
      "tfe.v2.2": "/api/v2/",
      "state.v2": "/api/v2/",
    });
  },
);

testEachServer(
  discovery,
  "answers ping 204 with TFP-API-Version exactly 2.5, X-TFE-Version v202302-1 (structured run output) and no TFP-AppName",
  async (server) => {
    const result = await ping({ client: server.tfe() });
    assert.is(result.response.status, 204);
    assert.is(result.response.headers.get("tfp-api-version"), "2.5");
    assert.is(result.response.headers.get("tfp-appname"), null);
    // The oldest TFE release for which the pinned OpenTofu renders a plan from json-output-redacted (issue 29).
    assert.is(result.response.headers.get("x-tfe-version"), "v202302-1");
  },
);

// ---------------------------------------------------------------------------------------------
const organizations = suite("getEntitlementSet");

testEachServer(organizations, "reports operations true for the organization", async (server) => {
  const { organizationName, token } = await setUp(server);
  const result = await getEntitlementSet({ client: server.tfe(token), path: { organization_name: organizationName } });
  const body = expectStatus(result, 200);
  assert.ok(
    tfeValidators.getEntitlementSetResponse200(body),
    JSON.stringify(tfeValidators.getEntitlementSetResponse200.errors),
  );
  assert.is(body.data.type, "entitlement-sets");
  assert.is(body.data.attributes.operations, true);
});

testEachServer(
  organizations,
  "fails 404 not found for another organization's token and for a missing organization; 401 unauthorized without a token",
  async (server) => {
    const { organizationName } = await setUp(server);
    const other = await createOrganizationWithToken(server, "other", "admin");
    expectTfeError(
      await getEntitlementSet({ client: server.tfe(other.token), path: { organization_name: organizationName } }),
      404,
      "not found",
    );
    expectTfeError(
      await getEntitlementSet({ client: server.tfe(other.token), path: { organization_name: "missing" } }),
      404,
      "not found",
    );
    expectTfeError(
      await getEntitlementSet({ client: server.tfe(), path: { organization_name: organizationName } }),
      401,
      "unauthorized",
    );
  },
);

// ---------------------------------------------------------------------------------------------
const workspaces = suite("createWorkspace and getWorkspaceByName");

testEachServer(
  workspaces,
  "creates a workspace by name and shows it as never destroyable, never auto-applying, structured output off",
  async (server) => {
    const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
    const created = await tfeCreateWorkspace({
      client: server.tfe(token),
      path: { organization_name: organizationName },
      body: { data: { type: "workspaces", attributes: { name: "from-cli" } } },
    });
    const createdWorkspace = expectStatus(created, 201).data;
    const shown = await getWorkspaceByName({
      client: server.tfe(token),
      path: { organization_name: organizationName, workspace_name: "from-cli" },
    });
    const workspace = expectStatus(shown, 200).data;
    assert.ok(
      tfeValidators.getWorkspaceByNameResponse200(shown.data),
      JSON.stringify(tfeValidators.getWorkspaceByNameResponse200.errors),
    );
    assert.equal(workspace, createdWorkspace);
    assert.match(workspace.id, /^ws-[0-9a-z]{16}$/);
    const a = workspace.attributes;
    assert.is(a.name, "from-cli");
    assert.is(a["allow-destroy-plan"], false);
    assert.is(a.permissions["can-queue-destroy"], false);
    assert.is(a.permissions["can-destroy"], false);
    assert.is(a.actions["is-destroyable"], false);
    assert.is(a["auto-apply"], false);
    assert.is(a["structured-run-output-enabled"], true);
    assert.is(a["execution-mode"], "remote");
    assert.is(a.operations, true);
    assert.is(a["terraform-version"], pinnedOpenTofuVersion());
    assert.is(a.permissions["can-queue-run"], true);
    assert.match(a["created-at"], /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(a["created-at"].endsWith("Z"));
    assert.ok(a["updated-at"].endsWith("Z"));
    assert.equal(workspace.relationships.organization.data, { type: "organizations", id: organizationName });
  },
);

testEachServer(workspaces, "shows a viewer that it cannot queue runs, and still never destroy", async (server) => {
  const { organizationName, token } = await setUp(server);
  const { token: viewer } = await createToken(server, token, organizationName, "viewer");
  const workspace = expectStatus(
    await getWorkspaceByName({
      client: server.tfe(viewer),
      path: { organization_name: organizationName, workspace_name: "networking" },
    }),
    200,
  ).data;
  assert.is(workspace.attributes.permissions["can-queue-run"], false);
  assert.is(workspace.attributes.permissions["can-queue-apply"], false);
  assert.is(workspace.attributes.permissions["can-queue-destroy"], false);
  assert.is(workspace.attributes.permissions["can-update"], false);
});

testEachServer(
  workspaces,
  "fails 404 not found for a missing workspace name and for another organization's token, and writes nothing",
  async (server) => {
    const { organizationName } = await setUp(server);
    const other = await createOrganizationWithToken(server, "other", "admin");
    expectTfeError(
      await getWorkspaceByName({
        client: server.tfe(other.token),
        path: { organization_name: organizationName, workspace_name: "networking" },
      }),
      404,
      "not found",
    );
    expectTfeError(
      await getWorkspaceByName({
        client: server.tfe(other.token),
        path: { organization_name: other.organizationName, workspace_name: "networking" },
      }),
      404,
      "not found",
    );
    const created = await allTablesUnchanged(server, () =>
      tfeCreateWorkspace({
        client: server.tfe(other.token),
        path: { organization_name: organizationName },
        body: { data: { type: "workspaces", attributes: { name: "intruder" } } },
      }),
    );
    expectTfeError(created, 404, "not found");
  },
);

// ---------------------------------------------------------------------------------------------
const runs = suite("createRun (tfe)");

testEachServer(
  runs,
  "fails 422 invalid_document telling to rerun without -auto-approve when auto-apply is true, and writes nothing",
  async (server) => {
    const { token, workspace, configurationVersion } = await setUp(server);
    const result = await allTablesUnchanged(server, () =>
      tfeCreateRun({
        client: server.tfe(token),
        body: runDocument(workspace.id, configurationVersion.id, { "auto-apply": true }),
      }),
    );
    const error = expectTfeError(result, 422, "invalid_document");
    assert.is(error.status, "422");
    assert.ok(error.detail!.includes("-auto-approve"), error.detail);
    assert.match(error.detail!, /rerun/i);
    assert.match(error.detail!, /without -auto-approve/);
    assert.is(error.code, "RUN_AUTO_APPLY_FORBIDDEN");
  },
);

testEachServer(
  runs,
  "fails 422 invalid_document about destroy when is-destroy is true, and writes nothing",
  async (server) => {
    const { token, workspace, configurationVersion } = await setUp(server);
    const result = await allTablesUnchanged(server, () =>
      tfeCreateRun({
        client: server.tfe(token),
        body: runDocument(workspace.id, configurationVersion.id, { "is-destroy": true }),
      }),
    );
    const error = expectTfeError(result, 422, "invalid_document");
    assert.match(error.detail!, /destroy/i);
    assert.is(error.code, "RUN_DESTROY_FORBIDDEN");
  },
);

testEachServer(
  runs,
  "answers both flags (tofu destroy -auto-approve) with the destroy refusal, and writes nothing",
  async (server) => {
    const { token, workspace, configurationVersion } = await setUp(server);
    const result = await allTablesUnchanged(server, () =>
      tfeCreateRun({
        client: server.tfe(token),
        body: runDocument(workspace.id, configurationVersion.id, { "auto-apply": true, "is-destroy": true }),
      }),
    );
    const error = expectTfeError(result, 422, "invalid_document");
    assert.is(error.code, "RUN_DESTROY_FORBIDDEN");
    assert.match(error.detail!, /destroy/i);
  },
);

testEachServer(runs, "fails 422 invalid_document for non-boolean flags, and writes nothing", async (server) => {
  const { token, workspace, configurationVersion } = await setUp(server);
  for (const attributes of [
    { "auto-apply": "true" },
    { "auto-apply": 1 },
    { "is-destroy": "yes" },
    { "auto-apply": null },
  ]) {
    const result = await allTablesUnchanged(server, () =>
      tfeCreateRun({ client: server.tfe(token), body: runDocument(workspace.id, configurationVersion.id, attributes) }),
    );
    expectTfeError(result, 422, "invalid_document");
  }
});

testEachServer(
  runs,
  "fails 422 invalid_document when the workspace relationship is missing or null, and writes nothing",
  async (server) => {
    const { token, configurationVersion } = await setUp(server);
    // Documents the createRun body type cannot describe (no workspace relationship), sent as that body.
    const bodies: unknown[] = [
      {
        data: {
          type: "runs",
          relationships: {
            "configuration-version": { data: { type: "configuration-versions", id: configurationVersion.id } },
          },
        },
      },
      { data: { type: "runs", relationships: { workspace: { data: null } } } },
      { data: { type: "runs" } },
    ];
    for (const body of bodies) {
      const result = await allTablesUnchanged(server, () =>
        tfeCreateRun({ client: server.tfe(token), body: body as Tfe["RunCreateDocument"] }),
      );
      expectTfeError(result, 422, "invalid_document");
    }
  },
);

testEachServer(
  runs,
  "creates a run with auto-apply false: 201, plan and apply relationships, visible through v1 with source tfe-api",
  async (server) => {
    const { token, workspace, configurationVersion } = await setUp(server);
    const result = await tfeCreateRun({
      client: server.tfe(token),
      body: runDocument(workspace.id, configurationVersion.id, { "auto-apply": false, message: "from the CLI" }),
    });
    const run = expectStatus(result, 201).data;
    assert.ok(
      tfeValidators.createRunResponse201(result.data),
      JSON.stringify(tfeValidators.createRunResponse201.errors),
    );
    const suffix = run.id.slice("run-".length);
    assert.equal(run.relationships.plan.data, { type: "plans", id: `plan-${suffix}` });
    assert.equal(run.relationships.apply.data, { type: "applies", id: `apply-${suffix}` });
    assert.equal(run.relationships.workspace.data, { type: "workspaces", id: workspace.id });
    assert.equal(run.relationships["configuration-version"].data, {
      type: "configuration-versions",
      id: configurationVersion.id,
    });
    assert.is(run.attributes["auto-apply"], false);
    assert.is(run.attributes["is-destroy"], false);
    assert.is(run.attributes["plan-only"], false);
    assert.is(run.attributes.status, "pending");
    assert.ok(run.attributes["created-at"].endsWith("Z"));

    const v1 = expectStatus(await getRun({ client: server.v1(token), path: { run_id: run.id } }), 200).data;
    assert.is(v1.attributes.source, "cli");
    assert.is(v1.attributes.commit, null);
    assert.is(v1.attributes.message, "from the CLI");
    assert.is(v1.attributes.kind, "plan_and_apply");
    assert.is(v1.attributes.auto_apply, false);
    assert.is(v1.attributes.config_digest, configurationVersion.attributes.config_digest);
    assert.is(v1.attributes.created_at, run.attributes["created-at"]);
  },
);

testEachServer(runs, "creates a speculative run for plan-only, and a run without any attributes", async (server) => {
  const { token, workspace, configurationVersion } = await setUp(server);
  const planOnly = expectStatus(
    await tfeCreateRun({
      client: server.tfe(token),
      body: runDocument(workspace.id, configurationVersion.id, { "plan-only": true }),
    }),
    201,
  ).data;
  assert.is(planOnly.attributes["plan-only"], true);
  const v1 = expectStatus(await getRun({ client: server.v1(token), path: { run_id: planOnly.id } }), 200).data;
  assert.is(v1.attributes.kind, "speculative");
  const bare = await tfeCreateRun({
    client: server.tfe(token),
    body: { data: { type: "runs", relationships: { workspace: { data: { type: "workspaces", id: workspace.id } } } } },
  });
  assert.is(expectStatus(bare, 201).data.relationships["configuration-version"].data?.id, configurationVersion.id);
});

testEachServer(
  runs,
  "fails 404 not found for a token of another organization, and writes nothing; 401 unauthorized without a token",
  async (server) => {
    const { workspace, configurationVersion } = await setUp(server);
    const other = await createOrganizationWithToken(server, "other", "admin");
    const foreign = await allTablesUnchanged(server, () =>
      tfeCreateRun({
        client: server.tfe(other.token),
        body: runDocument(workspace.id, configurationVersion.id, { "auto-apply": false }),
      }),
    );
    expectTfeError(foreign, 404, "not found");
    // Even the refused flags reveal nothing about a workspace the token cannot see.
    const foreignAutoApply = await allTablesUnchanged(server, () =>
      tfeCreateRun({
        client: server.tfe(other.token),
        body: runDocument(workspace.id, configurationVersion.id, { "auto-apply": true }),
      }),
    );
    expectTfeError(foreignAutoApply, 404, "not found");
    const anonymous = await allTablesUnchanged(server, () =>
      tfeCreateRun({ client: server.tfe(), body: runDocument(workspace.id, configurationVersion.id, {}) }),
    );
    expectTfeError(anonymous, 401, "unauthorized");
  },
);

testEachServer(
  runs,
  "fails 404 not found (as for a missing one) when another organization names this organization's configuration version, and writes nothing",
  async (server) => {
    const { configurationVersion } = await setUp(server);
    const other = await setUp(server, "other");
    const hidden = await allTablesUnchanged(server, () =>
      tfeCreateRun({
        client: server.tfe(other.token),
        body: runDocument(other.workspace.id, configurationVersion.id, {}),
      }),
    );
    expectTfeError(hidden, 404, "not found");
    const missing = await tfeCreateRun({
      client: server.tfe(other.token),
      body: runDocument(other.workspace.id, "cv-0000000000000000", {}),
    });
    expectTfeError(missing, 404, "not found");
  },
);

testEachServer(runs, "fails 403 for a viewer, and writes nothing", async (server) => {
  const { organizationName, token, workspace, configurationVersion } = await setUp(server);
  const { token: viewer } = await createToken(server, token, organizationName, "viewer");
  const result = (await allTablesUnchanged(server, () =>
    tfeCreateRun({ client: server.tfe(viewer), body: runDocument(workspace.id, configurationVersion.id, {}) }),
  )) as SdkResult;
  assert.is(result.response.status, 403);
  const body = result.error as { errors: Array<{ status: string; title: string }> };
  assert.is(body.errors[0].status, "403");
});

testEachServer(
  runs,
  "answers a viewer's refused writes with a status the tfe spec declares for the operation",
  async (server) => {
    const { organizationName, token, workspace, configurationVersion } = await setUp(server);
    const { token: viewer } = await createToken(server, token, organizationName, "viewer");
    const declared = (operationId: string) =>
      Object.keys(tfeOperations.find((op) => op.operationId === operationId)!.responses).map(Number);
    const run = (await tfeCreateRun({
      client: server.tfe(viewer),
      body: runDocument(workspace.id, configurationVersion.id, {}),
    })) as SdkResult;
    const ws = (await tfeCreateWorkspace({
      client: server.tfe(viewer),
      path: { organization_name: organizationName },
      body: { data: { type: "workspaces", attributes: { name: "by-viewer" } } },
    })) as SdkResult;
    const undeclared = [
      ["createRun", run.response.status],
      ["createWorkspace", ws.response.status],
    ].filter(([operationId, status]) => !declared(operationId as string).includes(status as number));
    assert.equal(undeclared, []);
  },
);

testEachServer(runs, "answers an unknown /api/v2 route with a tfe-shaped 404 not found", async (server) => {
  const { token } = await setUp(server);
  const result = (await server.tfe(token).get({ url: "/api/v2/organizations/acme/nothing" })) as SdkResult;
  expectTfeError(result, 404, "not found");
});

discovery.run();
organizations.run();
workspaces.run();
runs.run();
