import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  createConfigurationVersion,
  createOrganization,
  createOrganizationToken,
  createProject,
  createRun,
  createVariable,
  createWorkspace,
  getConfigurationVersion,
  getHealth,
  getOrganization,
  getRun,
  getWorkspace,
  listOrganizationRuns,
  listProjects,
  listVariables,
  listWorkspaces,
  type Client,
} from "../../../client/src/index.ts";
import { operations as tfeOperations } from "../../../generated/tfe/operations.gen.ts";
import { operations as v1Operations } from "../../../generated/v1/operations.gen.ts";
import {
  applicationTables,
  countRows,
  createOrganizationWithToken,
  createPendingConfiguration,
  createToken,
  createWorkspace as createWorkspaceFixture,
  databaseText,
  expectNothingWritten,
  expectStatus,
  expectTfeError,
  expectV1Error,
  leakForms,
  makeConfigurationTarball,
  putUpload,
  randomId,
  sha256,
  uploadConfiguration,
  type SdkResult,
} from "../support/factories.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { V1 } from "../support/documents.ts";
import type { ApiTokenRow, RunRow } from "../../src/store/rows.ts";

/** Organization A with a workspace, an uploaded configuration and a run; organization B with its own admin. */
async function twoOrganizations(server: TestServer) {
  const a = await createOrganizationWithToken(server, "org-a", "admin");
  const b = await createOrganizationWithToken(server, "org-b", "admin");
  const workspace = await createWorkspaceFixture(server, a.token, a.organizationName, { name: "networking" });
  const { configurationVersion } = await uploadConfiguration(server, a.token, workspace.id);
  const run = expectStatus(
    await createRun({
      client: server.v1(a.token),
      path: { workspace_id: workspace.id },
      body: { data: { type: "runs" } },
    }),
    201,
  ).data;
  return { a, b, workspace, configurationVersion, run };
}

type Fixture = Awaited<ReturnType<typeof twoOrganizations>>;

/** Every authenticated v1 operation, called with a valid request against organization A's objects. */
function authenticatedOperations(f: Fixture): Array<[string, (client: Client) => Promise<SdkResult>]> {
  const org = { organization_name: f.a.organizationName };
  const ws = { workspace_id: f.workspace.id };
  return [
    [
      "createOrganization",
      (client) =>
        createOrganization({ client, body: { data: { type: "organizations", attributes: { name: "org-new" } } } }),
    ],
    ["getOrganization", (client) => getOrganization({ client, path: org })],
    [
      "createOrganizationToken",
      (client) =>
        createOrganizationToken({
          client,
          path: org,
          body: { data: { type: "tokens", attributes: { role: "admin" } } },
        }),
    ],
    ["listProjects", (client) => listProjects({ client, path: org })],
    [
      "createProject",
      (client) =>
        createProject({ client, path: org, body: { data: { type: "projects", attributes: { name: "new-project" } } } }),
    ],
    ["listWorkspaces", (client) => listWorkspaces({ client, path: org })],
    [
      "createWorkspace",
      (client) =>
        createWorkspace({
          client,
          path: org,
          body: { data: { type: "workspaces", attributes: { name: "new-workspace" } } },
        }),
    ],
    ["listOrganizationRuns", (client) => listOrganizationRuns({ client, path: org })],
    ["getWorkspace", (client) => getWorkspace({ client, path: ws })],
    ["listVariables", (client) => listVariables({ client, path: ws })],
    [
      "createVariable",
      (client) =>
        createVariable({
          client,
          path: ws,
          body: { data: { type: "variables", attributes: { key: "new_key", value: "v" } } },
        }),
    ],
    [
      "createConfigurationVersion",
      (client) => createConfigurationVersion({ client, path: ws, body: { data: { type: "configuration-versions" } } }),
    ],
    [
      "getConfigurationVersion",
      (client) => getConfigurationVersion({ client, path: { configuration_version_id: f.configurationVersion.id } }),
    ],
    ["createRun", (client) => createRun({ client, path: ws, body: { data: { type: "runs" } } })],
    ["getRun", (client) => getRun({ client, path: { run_id: f.run.id } })],
  ];
}

const ALL_TABLES_NOTE = "every application table";

async function expectAllTablesUnchanged<T>(server: TestServer, act: () => Promise<T>): Promise<T> {
  return expectNothingWritten(server, act, await applicationTables(server));
}

function labelled(label: string, check: () => void): void {
  try {
    check();
  } catch (error) {
    (error as Error).message = `${label}: ${(error as Error).message}`;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
const authentication = suite("authentication");

testEachServer(
  authentication,
  "fails 401 UNAUTHENTICATED without a token on every authenticated v1 operation, and writes nothing",
  async (server) => {
    const fixture = await twoOrganizations(server);
    const operations = authenticatedOperations(fixture);
    assert.is(operations.length, 15);
    for (const [operationId, call] of operations) {
      const result = await expectAllTablesUnchanged(server, () => call(server.v1()));
      labelled(`${operationId} (${ALL_TABLES_NOTE})`, () => {
        const error = expectV1Error(result, 401, "UNAUTHENTICATED");
        assert.is(error.source?.header, "Authorization");
      });
    }
  },
);

testEachServer(
  authentication,
  "fails 401 without a token on every authenticated operation of both generated operation tables, and writes nothing",
  async (server) => {
    const fixture = await twoOrganizations(server);
    // Real objects of A where the parameter names one, well-formed ids elsewhere.
    const values: Record<string, string> = {
      organization_name: fixture.a.organizationName,
      workspace_id: fixture.workspace.id,
      workspace_name: "networking",
      run_id: fixture.run.id,
      configuration_version_id: fixture.configurationVersion.id,
      plan_id: `plan-${fixture.run.id.slice("run-".length)}`,
      apply_id: `apply-${fixture.run.id.slice("run-".length)}`,
      variable_id: "var-0000000000000000",
      user_id: "usr-0000000000000000",
      membership_id: "mbr-0000000000000000",
      token_id: "at-0000000000000000",
      phase: "plan",
      state_version_id: "sv-0000000000000000",
      state_version_output_id: "wsout-0000000000000000",
      policy_set_id: "pset-0000000000000000",
      profile_id: "fp-0000000000000000",
      installation_id: "1",
      project_id: "prj-0000000000000000",
    };
    const surfaces = [
      {
        name: "v1",
        table: v1Operations,
        client: server.v1(),
        check: (result: SdkResult) => expectV1Error(result, 401, "UNAUTHENTICATED"),
      },
      {
        name: "tfe",
        table: tfeOperations,
        client: server.tfe(),
        check: (result: SdkResult) => expectTfeError(result, 401, "unauthorized"),
      },
    ];
    let checked = 0;
    for (const surface of surfaces) {
      for (const operation of surface.table.filter((op) => op.authenticated)) {
        const url = operation.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
          if (!(name in values))
            throw new Error(`${surface.name} ${operation.operationId}: no test value for path parameter ${name}`);
          return values[name];
        });
        const result = (await expectAllTablesUnchanged(server, () =>
          surface.client.request({
            method: operation.method,
            url,
            body: operation.requestBody ? { data: { type: "anything" } } : undefined,
          }),
        )) as SdkResult;
        labelled(`${surface.name} ${operation.operationId} ${operation.method} ${url}`, () => surface.check(result));
        checked += 1;
      }
    }
    assert.ok(checked >= 30, `only ${checked} operations checked`);
  },
);

testEachServer(
  authentication,
  "fails 401 UNAUTHENTICATED for malformed, unknown and non-bearer credentials, and writes nothing",
  async (server) => {
    const fixture = await twoOrganizations(server);
    const credentials: Array<[string, Record<string, string>]> = [
      ["a short bearer token", { Authorization: "Bearer x" }],
      ["an unknown well-formed token", { Authorization: `Bearer ss1.${"A".repeat(43)}` }],
      ["the bootstrap token plus one character", { Authorization: `Bearer ${server.bootstrapToken}x` }],
      ["A's token minus its last character", { Authorization: `Bearer ${fixture.a.token.slice(0, -1)}` }],
      [
        "A's token as a Basic credential",
        { Authorization: `Basic ${Buffer.from(`user:${fixture.a.token}`).toString("base64")}` },
      ],
      ["A's token without the scheme", { Authorization: fixture.a.token }],
      ["A's token hash instead of the token", { Authorization: `Bearer ${sha256(fixture.a.token)}` }],
      ["a bearer token with spaces inside", { Authorization: "Bearer abc def ghi jkl mno" }],
      ["an empty bearer", { Authorization: "Bearer " }],
    ];
    for (const [label, headers] of credentials) {
      for (const [operationId, call] of authenticatedOperations(fixture).filter(([id]) =>
        ["getRun", "createRun", "createOrganization"].includes(id),
      )) {
        const result = await expectAllTablesUnchanged(server, () => call(createClientWithHeaders(server, headers)));
        labelled(`${label} → ${operationId}`, () => expectV1Error(result, 401, "UNAUTHENTICATED"));
      }
    }
  },
);

testEachServer(
  authentication,
  "answers 401 the same for an existing and a missing organization when no token is sent",
  async (server) => {
    const { a } = await twoOrganizations(server);
    const existing = expectV1Error(
      await getOrganization({ client: server.v1(), path: { organization_name: a.organizationName } }),
      401,
      "UNAUTHENTICATED",
    );
    const missing = expectV1Error(
      await getOrganization({ client: server.v1(), path: { organization_name: "no-such-org" } }),
      401,
      "UNAUTHENTICATED",
    );
    assert.is(existing.detail, missing.detail);
  },
);

testEachServer(
  authentication,
  "serves getHealth without a token, and ignores a bad Authorization header there",
  async (server) => {
    for (const client of [server.v1(), createClientWithHeaders(server, { Authorization: "Bearer x" })]) {
      const result = await getHealth({ client });
      const body = expectStatus(result, 200);
      assert.is(body.status, "ok");
      assert.is(body.database, "ok");
      assert.type(body.version, "string");
    }
  },
);

function createClientWithHeaders(server: TestServer, headers: Record<string, string>): Client {
  const client = server.v1();
  client.setConfig({ headers });
  return client;
}

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
      const result = await expectAllTablesUnchanged(server, () => call(bClient));
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
    const result = await expectAllTablesUnchanged(server, () =>
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
    const created = await expectAllTablesUnchanged(server, () =>
      createOrganization({ client: aClient, body: { data: { type: "organizations", attributes: { name: "org-c" } } } }),
    );
    expectV1Error(created, 403, "FORBIDDEN");
    const token = await expectAllTablesUnchanged(server, () =>
      createOrganizationToken({
        client: aClient,
        path: { organization_name: fixture.b.organizationName },
        body: { data: { type: "tokens", attributes: { role: "admin" } } },
      }),
    );
    expectV1Error(token, 404, "NOT_FOUND");
    const workspace = await expectAllTablesUnchanged(server, () =>
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
        const result = await expectAllTablesUnchanged(server, () => call(client));
        labelled(operationId, () => expectV1Error(result, 403, "FORBIDDEN"));
      } else {
        assert.is(operationId, "createOrganization");
        const result = await expectAllTablesUnchanged(server, () => call(client));
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
      const result = await expectAllTablesUnchanged(server, () => call(client));
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
  const result = await expectAllTablesUnchanged(server, () =>
    createRun({ client: server.v1(operator), path: { workspace_id: bWorkspace.id }, body: { data: { type: "runs" } } }),
  );
  expectV1Error(result, 404, "NOT_FOUND");
});

// ---------------------------------------------------------------------------------------------
const tokens = suite("createOrganizationToken");

testEachServer(tokens, "returns the secret once and stores only its SHA-256", async (server) => {
  const { a } = await twoOrganizations(server);
  const before = await countRows(server, ["api_tokens"]);
  const result = await createOrganizationToken({
    client: server.v1(a.token),
    path: { organization_name: a.organizationName },
    body: { data: { type: "tokens", attributes: { role: "viewer", description: "ci reader" } } },
  });
  const token = expectStatus(result, 201).data;
  const secret = token.attributes.secret;
  assert.type(secret, "string");
  assert.ok(secret.length >= 32, secret);
  assert.is(token.attributes.role, "viewer");
  assert.is(token.attributes.description, "ci reader");
  assert.equal(await countRows(server, ["api_tokens"]), { api_tokens: before.api_tokens + 1 });

  const row = await server.db.knex("api_tokens").where({ id: token.id }).first<ApiTokenRow>();
  assert.is(row.token_hash, sha256(secret));
  const rowText = JSON.stringify(row);
  const everything = await databaseText(server);
  for (const form of leakForms(secret)) {
    assert.not.ok(rowText.includes(form), `api_tokens holds the secret (as ${form})`);
    assert.not.ok(everything.includes(form), `the database holds the secret (as ${form})`);
  }
  // The secret works, and is never shown again.
  const shown = await getOrganization({ client: server.v1(secret), path: { organization_name: a.organizationName } });
  expectStatus(shown, 200);
  assert.not.ok(JSON.stringify(shown.data).includes(secret));
});

testEachServer(
  tokens,
  "fails 422 DOCUMENT_INVALID at /data/attributes/role for an unknown role, and writes nothing",
  async (server) => {
    const { a } = await twoOrganizations(server);
    const result = await expectAllTablesUnchanged(server, () =>
      createOrganizationToken({
        client: server.v1(a.token),
        path: { organization_name: a.organizationName },
        body: { data: { type: "tokens", attributes: { role: "owner" } } } as unknown as V1["TokenCreateDocument"],
      }),
    );
    expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer: "/data/attributes/role" });
  },
);

testEachServer(
  tokens,
  "the bootstrap token can act in every organization; a random workspace id is 404 even for it",
  async (server) => {
    const fixture = await twoOrganizations(server);
    expectStatus(await getRun({ client: server.admin, path: { run_id: fixture.run.id } }), 200);
    expectStatus(
      await listOrganizationRuns({ client: server.admin, path: { organization_name: fixture.b.organizationName } }),
      200,
    );
    expectV1Error(
      await getWorkspace({ client: server.admin, path: { workspace_id: randomId("ws") } }),
      404,
      "NOT_FOUND",
    );
  },
);

authentication.run();
isolation.run();
roles.run();
tokens.run();
