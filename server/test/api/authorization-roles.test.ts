import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  createOrganization,
  createOrganizationToken,
  createRun,
  createWorkspace,
  getConfigurationVersion,
  getOrganization,
  getRun,
  getWorkspace,
} from "../../../client/src/index.ts";
import {
  createPendingConfiguration,
  createToken,
  createWorkspace as createWorkspaceFixture,
  makeConfigurationTarball,
  putUpload,
  uploadConfiguration,
} from "../support/factories.ts";
import { expectStatus, expectV1Error, type SdkResult } from "../support/responses.ts";
import { allTablesUnchanged, labelled } from "../support/api-requests.ts";
import { authenticatedOperations, twoOrganizations } from "../support/api-authorization.ts";
import { testEachServer } from "../support/test-server.ts";
import type { ApiTokenRow, RunRow } from "../../src/store/rows.ts";

// ---------------------------------------------------------------------------------------------
const isolation = suite("organization isolation");

testEachServer(
  isolation,
  "fails 404 NOT_FOUND for every object of organization A with a token of organization B, and writes nothing",
  async (server) => {
    const fixture = await twoOrganizations(server);
    const bClient = server.v1(fixture.b.token);
    for (const [operationId, call] of authenticatedOperations(fixture)) {
      if (operationId === "createOrganization") continue;
      const result = await allTablesUnchanged(server, () => call(bClient));
      labelled(operationId, () => expectV1Error(result, 404, "NOT_FOUND"));
    }
    // B's own token still works on B.
    expectStatus(
      await getOrganization({ client: bClient, path: { organization_name: fixture.b.organizationName } }),
      200,
    );
  },
);

testEachServer(
  isolation,
  "answers a hidden object exactly like a missing one (same status, code, title and detail shape)",
  async (server) => {
    const fixture = await twoOrganizations(server);
    const bClient = server.v1(fixture.b.token);
    const pairs: Array<[string, SdkResult, SdkResult, string, string]> = [
      [
        "getRun",
        await getRun({ client: bClient, path: { run_id: fixture.run.id } }),
        await getRun({ client: bClient, path: { run_id: "run-0000000000000000" } }),
        fixture.run.id,
        "run-0000000000000000",
      ],
      [
        "getWorkspace",
        await getWorkspace({ client: bClient, path: { workspace_id: fixture.workspace.id } }),
        await getWorkspace({ client: bClient, path: { workspace_id: "ws-0000000000000000" } }),
        fixture.workspace.id,
        "ws-0000000000000000",
      ],
      [
        "getOrganization",
        await getOrganization({ client: bClient, path: { organization_name: fixture.a.organizationName } }),
        await getOrganization({ client: bClient, path: { organization_name: "org-z" } }),
        fixture.a.organizationName,
        "org-z",
      ],
    ];
    for (const [operationId, hidden, missing, hiddenId, missingId] of pairs) {
      labelled(operationId, () => {
        const h = expectV1Error(hidden, 404, "NOT_FOUND");
        const m = expectV1Error(missing, 404, "NOT_FOUND");
        assert.is(h.title, m.title);
        assert.is(h.detail?.replace(hiddenId, "<id>"), m.detail?.replace(missingId, "<id>"));
      });
    }
  },
);

testEachServer(
  isolation,
  "fails 404 NOT_FOUND (as for a missing one) when B names A's configuration version in a run of B's own workspace, and writes nothing",
  async (server) => {
    const fixture = await twoOrganizations(server);
    const bWorkspace = await createWorkspaceFixture(server, fixture.b.token, fixture.b.organizationName, {
      name: "b-ws",
    });
    await uploadConfiguration(server, fixture.b.token, bWorkspace.id);
    const result = await allTablesUnchanged(server, () =>
      createRun({
        client: server.v1(fixture.b.token),
        path: { workspace_id: bWorkspace.id },
        body: {
          data: {
            type: "runs",
            relationships: {
              configuration_version: { data: { type: "configuration-versions", id: fixture.configurationVersion.id } },
            },
          },
        },
      }),
    );
    // A's configuration version must look exactly like one that does not exist (404 at the same
    // pointer); anything else tells B that the id exists in another organization.
    const hidden = expectV1Error(result, 404, "NOT_FOUND", {
      pointer: "/data/relationships/configuration_version/data/id",
    });
    const missingId = "cv-0000000000000000";
    const missing = expectV1Error(
      await createRun({
        client: server.v1(fixture.b.token),
        path: { workspace_id: bWorkspace.id },
        body: {
          data: {
            type: "runs",
            relationships: { configuration_version: { data: { type: "configuration-versions", id: missingId } } },
          },
        },
      }),
      404,
      "NOT_FOUND",
    );
    assert.is(
      hidden.detail?.replace(fixture.configurationVersion.id, "<id>"),
      missing.detail?.replace(missingId, "<id>"),
    );
  },
);

testEachServer(
  isolation,
  "an organization admin token fails 403 FORBIDDEN creating organizations and 404 NOT_FOUND in another organization",
  async (server) => {
    const fixture = await twoOrganizations(server);
    const aClient = server.v1(fixture.a.token);
    const created = await allTablesUnchanged(server, () =>
      createOrganization({ client: aClient, body: { data: { type: "organizations", attributes: { name: "org-c" } } } }),
    );
    expectV1Error(created, 403, "FORBIDDEN");
    const token = await allTablesUnchanged(server, () =>
      createOrganizationToken({
        client: aClient,
        path: { organization_name: fixture.b.organizationName },
        body: { data: { type: "tokens", attributes: { role: "admin" } } },
      }),
    );
    expectV1Error(token, 404, "NOT_FOUND");
    const workspace = await allTablesUnchanged(server, () =>
      createWorkspace({
        client: aClient,
        path: { organization_name: fixture.b.organizationName },
        body: { data: { type: "workspaces", attributes: { name: "intruder" } } },
      }),
    );
    expectV1Error(workspace, 404, "NOT_FOUND");
  },
);

// ---------------------------------------------------------------------------------------------
const roles = suite("roles");

testEachServer(
  roles,
  "a viewer token reads (200) but fails 403 FORBIDDEN on every write, and writes nothing",
  async (server) => {
    const fixture = await twoOrganizations(server);
    const { token: viewer } = await createToken(server, fixture.a.token, fixture.a.organizationName, "viewer");
    const client = server.v1(viewer);
    const reads = [
      "getOrganization",
      "listProjects",
      "listWorkspaces",
      "listOrganizationRuns",
      "getWorkspace",
      "listVariables",
      "getConfigurationVersion",
      "getRun",
    ];
    const writes = [
      "createOrganizationToken",
      "createProject",
      "createWorkspace",
      "createVariable",
      "createConfigurationVersion",
      "createRun",
    ];
    for (const [operationId, call] of authenticatedOperations(fixture)) {
      if (reads.includes(operationId)) {
        const result = await call(client);
        labelled(operationId, () => expectStatus(result, 200));
      } else if (writes.includes(operationId)) {
        const result = await allTablesUnchanged(server, () => call(client));
        labelled(operationId, () => expectV1Error(result, 403, "FORBIDDEN"));
      } else {
        assert.is(operationId, "createOrganization");
        const result = await allTablesUnchanged(server, () => call(client));
        labelled(operationId, () => expectV1Error(result, 403, "FORBIDDEN"));
      }
    }
    // The reads show the real objects.
    const run = expectStatus(await getRun({ client, path: { run_id: fixture.run.id } }), 200).data;
    assert.equal(run, fixture.run);
  },
);

testEachServer(
  roles,
  "a viewer never receives a usable upload_url for a pending configuration version, so it cannot upload configuration",
  async (server) => {
    const fixture = await twoOrganizations(server);
    const { token: viewer } = await createToken(server, fixture.a.token, fixture.a.organizationName, "viewer");
    const pending = await createPendingConfiguration(server, fixture.a.token, fixture.workspace.id);
    const shown = expectStatus(
      await getConfigurationVersion({ client: server.v1(viewer), path: { configuration_version_id: pending.id } }),
      200,
    ).data;
    assert.is(shown.attributes.status, "pending");
    const leaked = shown.attributes.upload_url;
    if (leaked !== null) {
      // Show what the leak allows before failing: a read-only token writes the configuration.
      const response = await putUpload(
        leaked,
        makeConfigurationTarball({ "main.tf": 'resource "terraform_data" "injected" {}\n' }),
      );
      assert.unreachable(`a viewer got the signed upload_url; PUT with it answered ${response.status}`);
    }
    // The writer still gets it.
    const forWriter = expectStatus(
      await getConfigurationVersion({
        client: server.v1(fixture.a.token),
        path: { configuration_version_id: pending.id },
      }),
      200,
    ).data;
    assert.type(forWriter.attributes.upload_url, "string");
  },
);

testEachServer(
  roles,
  "an operator token creates workspaces, configuration versions and runs, but fails 403 FORBIDDEN on tokens and projects",
  async (server) => {
    const fixture = await twoOrganizations(server);
    const { token: operator } = await createToken(server, fixture.a.token, fixture.a.organizationName, "operator");
    const client = server.v1(operator);
    const run = expectStatus(
      await createRun({
        client,
        path: { workspace_id: fixture.workspace.id },
        body: { data: { type: "runs", attributes: { message: "by operator" } } },
      }),
      201,
    ).data;
    assert.is(run.attributes.message, "by operator");
    const row = await server.db.knex("runs").where({ id: run.id }).first<Pick<RunRow, "created_by">>("created_by");
    const principal = await server.db
      .knex("api_tokens")
      .where({ role: "operator" })
      .first<Pick<ApiTokenRow, "principal_id">>("principal_id");
    assert.is(row.created_by, principal.principal_id);
    const workspace = expectStatus(
      await createWorkspace({
        client,
        path: { organization_name: fixture.a.organizationName },
        body: { data: { type: "workspaces", attributes: { name: "by-operator" } } },
      }),
      201,
    ).data;
    await uploadConfiguration(server, operator, workspace.id);
    expectStatus(
      await createRun({ client, path: { workspace_id: workspace.id }, body: { data: { type: "runs" } } }),
      201,
    );
    for (const [operationId, call] of authenticatedOperations(fixture).filter(([id]) =>
      ["createOrganizationToken", "createProject", "createOrganization"].includes(id),
    )) {
      const result = await allTablesUnchanged(server, () => call(client));
      labelled(operationId, () => expectV1Error(result, 403, "FORBIDDEN"));
    }
  },
);

testEachServer(roles, "an operator of A fails 404 NOT_FOUND on B's objects", async (server) => {
  const fixture = await twoOrganizations(server);
  const { token: operator } = await createToken(server, fixture.a.token, fixture.a.organizationName, "operator");
  const bWorkspace = await createWorkspaceFixture(server, fixture.b.token, fixture.b.organizationName, {
    name: "b-ws",
  });
  await uploadConfiguration(server, fixture.b.token, bWorkspace.id);
  const result = await allTablesUnchanged(server, () =>
    createRun({ client: server.v1(operator), path: { workspace_id: bWorkspace.id }, body: { data: { type: "runs" } } }),
  );
  expectV1Error(result, 404, "NOT_FOUND");
});

isolation.run();
roles.run();
