import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  createOrganizationToken,
  getHealth,
  getOrganization,
  getRun,
  getWorkspace,
  listOrganizationRuns,
} from "../../../client/src/index.ts";
import { operations as tfeOperations } from "../../../generated/tfe/operations.gen.ts";
import { operations as v1Operations } from "../../../generated/v1/operations.gen.ts";
import { countRows, databaseText, leakForms } from "../support/database.ts";
import { randomId, sha256 } from "../support/factories.ts";
import { expectStatus, expectTfeError, expectV1Error, type SdkResult } from "../support/responses.ts";
import { allTablesUnchanged, labelled } from "../support/api-requests.ts";
import { authenticatedOperations, createClientWithHeaders, twoOrganizations } from "../support/api-authorization.ts";
import { testEachServer } from "../support/test-server.ts";
import type { V1 } from "../support/documents.ts";
import type { ApiTokenRow } from "../../src/store/rows.ts";

const ALL_TABLES_NOTE = "every application table";

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
      const result = await allTablesUnchanged(server, () => call(server.v1()));
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
        const result = (await allTablesUnchanged(server, () =>
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
        const result = await allTablesUnchanged(server, () => call(createClientWithHeaders(server, headers)));
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
    const result = await allTablesUnchanged(server, () =>
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
tokens.run();
