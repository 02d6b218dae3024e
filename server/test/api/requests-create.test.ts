import { suite } from "uvu";
import * as assert from "uvu/assert";
import * as sdk from "../../../client/src/index.ts";
import {
  createOrganizationWithToken,
  createWorkspace as createWorkspaceFixture,
  pinnedOpenTofuVersion,
} from "../support/factories.ts";
import { expectV1Error } from "../support/responses.ts";
import { allTablesUnchanged, labelled, setUpAcme } from "../support/api-requests.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

/** createWorkspace with `attributes` in acme, checked to write nothing. */
function refusedWorkspace(
  server: TestServer,
  token: string,
  organizationName: string,
  attributes: NonNullable<Parameters<typeof sdk.createWorkspace>[0]["body"]>["data"]["attributes"],
) {
  return allTablesUnchanged(server, () =>
    sdk.createWorkspace({
      client: server.v1(token),
      path: { organization_name: organizationName },
      body: { data: { type: "workspaces", attributes } },
    }),
  );
}

/** createOrganization with `attributes` as the administrator, checked to write nothing. */
function refusedOrganization(server: TestServer, attributes: { name: string }) {
  return allTablesUnchanged(server, () =>
    sdk.createOrganization({ client: server.admin, body: { data: { type: "organizations", attributes } } }),
  );
}

// ---------------------------------------------------------------------------------------------
const workspaces = suite("createWorkspace");

testEachServer(
  workspaces,
  "resolves opentofu_version latest, the major.minor prefix and the exact version to the pinned version",
  async (server) => {
    const { organizationName, token } = await setUpAcme(server);
    const pinned = pinnedOpenTofuVersion();
    const prefix = pinned.split(".").slice(0, 2).join(".");
    for (const [name, requested] of [
      ["latest", "latest"],
      ["prefix", prefix],
      ["exact", pinned],
      ["default", undefined],
    ] as const) {
      const workspace = await createWorkspaceFixture(
        server,
        token,
        organizationName,
        requested === undefined ? { name } : { name, opentofu_version: requested },
      );
      labelled(String(requested), () => assert.is(workspace.attributes.opentofu_version, pinned));
      const row = await server.db
        .knex("workspaces")
        .where({ id: workspace.id })
        .first<{ opentofu_version: string }>("opentofu_version");
      assert.is(row.opentofu_version, pinned);
    }
  },
);

testEachServer(
  workspaces,
  "fails 422 OPENTOFU_VERSION_UNAVAILABLE for a version this deployment does not provide, and writes nothing",
  async (server) => {
    const { organizationName, token } = await setUpAcme(server);
    const pinned = pinnedOpenTofuVersion();
    const [major, minor] = pinned.split(".");
    // NOTE: "1.1" must not match 1.12.x: a prefix is whole components.
    for (const requested of [
      "9.9.9",
      `${major}.${minor}.999`,
      `${major}.${Number(minor) + 1}`,
      `${major}.${minor.slice(0, 1)}`,
      "oldest",
    ]) {
      const result = await refusedWorkspace(server, token, organizationName, {
        name: "w",
        opentofu_version: requested,
      });
      labelled(JSON.stringify(requested), () =>
        expectV1Error(result, 422, "OPENTOFU_VERSION_UNAVAILABLE", { pointer: "/data/attributes/opentofu_version" }),
      );
    }
  },
);

testEachServer(
  workspaces,
  "fails 422 for an empty opentofu_version (it is none of exact, major.minor or latest), and writes nothing",
  async (server) => {
    const { organizationName, token } = await setUpAcme(server);
    const result = await refusedWorkspace(server, token, organizationName, { name: "w", opentofu_version: "" });
    assert.is(
      result.response.status,
      422,
      `got ${result.response.status}: ${JSON.stringify(result.data ?? result.error).slice(0, 300)}`,
    );
    const code = (result.error as { errors: Array<{ code: string }> }).errors[0].code;
    assert.ok(code === "OPENTOFU_VERSION_UNAVAILABLE" || code === "DOCUMENT_INVALID", code);
  },
);

testEachServer(
  workspaces,
  "fails 422 EXECUTION_REGION_UNAVAILABLE for execution_region mars, and writes nothing; local is accepted",
  async (server) => {
    const { organizationName, token } = await setUpAcme(server);
    const result = await refusedWorkspace(server, token, organizationName, { name: "w", execution_region: "mars" });
    expectV1Error(result, 422, "EXECUTION_REGION_UNAVAILABLE", { pointer: "/data/attributes/execution_region" });
    const local = await createWorkspaceFixture(server, token, organizationName, {
      name: "here",
      execution_region: "local",
    });
    assert.is(local.attributes.execution_region, "local");
  },
);

testEachServer(
  workspaces,
  "fails 409 WORKSPACE_NAME_TAKEN for a duplicate name in the organization, and writes nothing; another organization may reuse it",
  async (server) => {
    const { organizationName, token } = await setUpAcme(server);
    const result = await refusedWorkspace(server, token, organizationName, { name: "networking" });
    expectV1Error(result, 409, "WORKSPACE_NAME_TAKEN");
    const other = await createOrganizationWithToken(server, "other-org", "admin");
    const reused = await createWorkspaceFixture(server, other.token, other.organizationName, { name: "networking" });
    assert.is(reused.attributes.name, "networking");
  },
);

// ---------------------------------------------------------------------------------------------
const organizations = suite("createOrganization");

testEachServer(
  organizations,
  "fails 409 ORGANIZATION_NAME_TAKEN for a duplicate organization, and writes nothing",
  async (server) => {
    await setUpAcme(server);
    const result = await refusedOrganization(server, { name: "acme" });
    expectV1Error(result, 409, "ORGANIZATION_NAME_TAKEN");
  },
);

testEachServer(
  organizations,
  "fails 422 DOCUMENT_INVALID at /data/attributes/name for a name outside the pattern, and writes nothing",
  async (server) => {
    await setUpAcme(server);
    for (const name of ["", "-acme", "a".repeat(41), "acme corp", "acme/x"]) {
      const result = await refusedOrganization(server, { name });
      labelled(JSON.stringify(name), () =>
        expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer: "/data/attributes/name" }),
      );
    }
  },
);

workspaces.run();
organizations.run();
