// Organizations and the caller's account on /api/v2 (issue 26, part 2): what go-tfe's test
// fixtures call first. POST creates the organization exactly as /v1 does (same command: the
// organization, its Default Project, the audit event) and only for deployment administrators.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { countRows, expectNothingWritten } from "../support/database.ts";
import { createToken, createOrganizationWithToken } from "../support/factories.ts";
import { expectStatus, expectTfeError } from "../support/responses.ts";
import {
  createOrganization,
  getAccountDetails,
  getOrganization,
  listOrganizations,
} from "../../../generated/tfe/client/index.ts";
import { getOrganization as v1GetOrganization, listProjects as v1ListProjects } from "../../../client/src/index.ts";
import { BOOTSTRAP_PRINCIPAL_ID } from "../../src/http/middleware/authenticate.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const ORGANIZATION_TABLES = ["organizations", "projects", "audit_events"] as const;

function createDocument(name: string) {
  return { data: { type: "organizations" as const, attributes: { name, email: "ops@example.com" } } };
}

async function auditActions(server: TestServer, targetId: string): Promise<string[]> {
  const rows = await server.db
    .knex("audit_events")
    .where({ target_id: targetId })
    .select<{ action: string }[]>("action");
  return rows.map((row) => row.action);
}

// ---------------------------------------------------------------------------------------------
const create = suite("POST /api/v2/organizations");

testEachServer(
  create,
  "a deployment administrator creates the organization as /v1 does: the same record, its Default Project, audited",
  async (server) => {
    const body = expectStatus(
      await createOrganization({ client: server.tfe(server.bootstrapToken), body: createDocument("acme") }),
      201,
    );
    const organization = body.data;
    assert.is(organization.type, "organizations");
    assert.is(organization.id, "acme", "go-tfe reads the name as the id");
    assert.is(organization.attributes.name, "acme");
    assert.is(organization.attributes.email, "", "no organization email is stored, so none is shown");
    assert.match(organization.attributes["created-at"], /Z$/);
    // The very record /v1 shows.
    const v1 = expectStatus(
      await v1GetOrganization({ client: server.admin, path: { organization_name: "acme" } }),
      200,
    );
    assert.is(organization.attributes["external-id"], v1.data.id);
    const projects = expectStatus(
      await v1ListProjects({ client: server.admin, path: { organization_name: "acme" } }),
      200,
    );
    assert.equal(
      projects.data.map((project) => project.attributes.name),
      ["Default Project"],
    );
    assert.equal(organization.relationships["default-project"].data, { type: "projects", id: projects.data[0].id });
    assert.equal(await auditActions(server, v1.data.id), ["organization.created"]);
    const audit = (await server.db.knex("audit_events").where({ target_id: v1.data.id }).first()) as {
      actor_id: string;
    };
    assert.is(audit.actor_id, BOOTSTRAP_PRINCIPAL_ID);
    // The bootstrap administrator may do everything StackShip offers on it.
    assert.is(organization.attributes.permissions["can-create-workspace"], true);
    assert.is(organization.attributes.permissions["can-create-project"], true);
  },
);

testEachServer(
  create,
  "anyone but a deployment administrator gets 403 and nothing is written, even an organization admin token",
  async (server) => {
    const acme = await createOrganizationWithToken(server, "acme", "admin");
    const viewer = (await createToken(server, acme.token, "acme", "viewer")).token;
    const before = await countRows(server, ORGANIZATION_TABLES);
    for (const token of [acme.token, viewer]) {
      const result = await expectNothingWritten(
        server,
        () => createOrganization({ client: server.tfe(token), body: createDocument("globex") }),
        ORGANIZATION_TABLES,
      );
      assert.is(expectTfeError(result, 403, "Permission denied").code, "FORBIDDEN");
    }
    expectTfeError(
      await createOrganization({ client: server.tfe(), body: createDocument("globex") }),
      401,
      "unauthorized",
    );
    assert.equal(await countRows(server, ORGANIZATION_TABLES), before);
    assert.is(await server.services.stores.organizations.getByName("globex"), undefined);
  },
);

testEachServer(
  create,
  "a taken name is 409 ORGANIZATION_NAME_TAKEN and a name outside /v1's rule is 422; nothing is written",
  async (server) => {
    await createOrganizationWithToken(server, "acme", "admin");
    const taken = await expectNothingWritten(
      server,
      () => createOrganization({ client: server.tfe(server.bootstrapToken), body: createDocument("acme") }),
      ORGANIZATION_TABLES,
    );
    assert.is(expectTfeError(taken, 409, "Organization name already taken").code, "ORGANIZATION_NAME_TAKEN");
    for (const name of ["-starts-with-dash", "has space", "x".repeat(41)]) {
      const invalid = await expectNothingWritten(
        server,
        () => createOrganization({ client: server.tfe(server.bootstrapToken), body: createDocument(name) }),
        ORGANIZATION_TABLES,
      );
      const error = expectTfeError(invalid, 422, "invalid_document");
      assert.is(error.code, "DOCUMENT_INVALID");
      assert.is(error.source?.pointer, "/data/attributes/name");
    }
    // The longest name the rule allows (40 characters) is accepted.
    expectStatus(
      await createOrganization({ client: server.tfe(server.bootstrapToken), body: createDocument("x".repeat(40)) }),
      201,
    );
  },
);

// ---------------------------------------------------------------------------------------------
const read = suite("GET /api/v2/organizations and /api/v2/organizations/{name}");

testEachServer(
  read,
  "the list is the caller's organizations: all for a deployment administrator, its own for an organization token",
  async (server) => {
    const acme = await createOrganizationWithToken(server, "acme", "admin");
    await createOrganizationWithToken(server, "globex", "admin");
    await createOrganizationWithToken(server, "initech", "admin");
    const all = expectStatus(await listOrganizations({ client: server.tfe(server.bootstrapToken), query: {} }), 200);
    assert.equal(
      all.data.map((organization) => organization.id),
      ["acme", "globex", "initech"],
    );
    assert.is(all.meta.pagination["total-count"], 3);
    const own = expectStatus(await listOrganizations({ client: server.tfe(acme.token), query: {} }), 200);
    assert.equal(
      own.data.map((organization) => organization.id),
      ["acme"],
    );
    // `q` keeps names containing it (case-insensitive); pages are exact.
    const searched = expectStatus(
      await listOrganizations({ client: server.tfe(server.bootstrapToken), query: { q: "E" } }),
      200,
    );
    assert.equal(
      searched.data.map((organization) => organization.id),
      ["acme", "globex", "initech"].filter((name) => name.includes("e")),
    );
    const second = expectStatus(
      await listOrganizations({
        client: server.tfe(server.bootstrapToken),
        query: { "page[size]": 2, "page[number]": 2 },
      }),
      200,
    );
    assert.equal(
      second.data.map((organization) => organization.id),
      ["initech"],
    );
    assert.equal(second.meta.pagination, {
      "current-page": 2,
      "next-page": null,
      "prev-page": 1,
      "total-count": 3,
      "total-pages": 2,
    });
  },
);

testEachServer(read, "a query the list does not implement is 400, never the whole list", async (server) => {
  await createOrganizationWithToken(server, "acme", "admin");
  for (const parameter of ["q[email]", "filter[name]", "search[name]"]) {
    const response = await fetch(`${server.baseUrl}/api/v2/organizations?${encodeURIComponent(parameter)}=x`, {
      headers: { Authorization: `Bearer ${server.bootstrapToken}` },
    });
    assert.is(response.status, 400, parameter);
    const body = (await response.json()) as { errors: { code: string; source?: { parameter?: string } }[] };
    assert.is(body.errors[0].code, "REQUEST_INVALID");
    assert.is(body.errors[0].source?.parameter, parameter);
  }
});

testEachServer(
  read,
  "an organization reads for its members with their own permissions and is 404 to another organization's token",
  async (server) => {
    const acme = await createOrganizationWithToken(server, "acme", "admin");
    const globex = await createOrganizationWithToken(server, "globex", "admin");
    const viewer = (await createToken(server, acme.token, "acme", "viewer")).token;
    const operator = (await createToken(server, acme.token, "acme", "operator")).token;
    const permissions = async (token: string) =>
      expectStatus(await getOrganization({ client: server.tfe(token), path: { organization_name: "acme" } }), 200).data
        .attributes.permissions;
    const admin = await permissions(acme.token);
    assert.is(admin["can-create-workspace"], true);
    assert.is(admin["can-create-project"], true);
    assert.is(admin["can-update-api-token"], true);
    const asOperator = await permissions(operator);
    assert.is(asOperator["can-create-workspace"], true);
    assert.is(asOperator["can-create-project"], false);
    const asViewer = await permissions(viewer);
    assert.is(asViewer["can-create-workspace"], false);
    assert.is(asViewer["can-create-project"], false);
    // What StackShip does not serve is never claimed.
    for (const each of [admin, asOperator, asViewer]) {
      assert.is(each["can-update"], false);
      assert.is(each["can-destroy"], false);
      assert.is(each["can-create-team"], false);
    }
    const hidden = await getOrganization({ client: server.tfe(globex.token), path: { organization_name: "acme" } });
    assert.is(expectTfeError(hidden, 404, "not found").code, "NOT_FOUND");
    const missing = await getOrganization({ client: server.tfe(acme.token), path: { organization_name: "nope" } });
    assert.is(expectTfeError(missing, 404, "not found").code, "NOT_FOUND");
    assert.is(hidden.response.status, missing.response.status);
  },
);

// ---------------------------------------------------------------------------------------------
const account = suite("GET /api/v2/account/details");

testEachServer(
  account,
  "the caller: the bootstrap administrator, or an organization token's principal as a service account",
  async (server) => {
    const acme = await createOrganizationWithToken(server, "acme", "admin");
    const viewer = await createToken(server, acme.token, "acme", "viewer");
    const bootstrap = expectStatus(await getAccountDetails({ client: server.tfe(server.bootstrapToken) }), 200).data;
    assert.is(bootstrap.type, "users");
    assert.is(bootstrap.id, BOOTSTRAP_PRINCIPAL_ID);
    assert.is(bootstrap.attributes["is-site-admin"], true);
    assert.is(bootstrap.attributes["is-service-account"], true);
    assert.is(bootstrap.attributes.permissions["can-create-organizations"], true);

    const token = (await server.db.knex("api_tokens").where({ id: viewer.tokenId }).first()) as {
      principal_id: string;
    };
    const principal = await server.services.stores.principals.getById(token.principal_id);
    const asViewer = expectStatus(await getAccountDetails({ client: server.tfe(viewer.token) }), 200).data;
    assert.is(asViewer.id, principal!.id);
    assert.is(asViewer.attributes.username, principal!.name);
    assert.is(asViewer.attributes["is-service-account"], true);
    assert.is(asViewer.attributes["is-site-admin"], false);
    assert.is(asViewer.attributes["is-admin"], false);
    assert.is(asViewer.attributes.permissions["can-create-organizations"], false);
    assert.is(asViewer.attributes.email, "");
    const asAdmin = expectStatus(await getAccountDetails({ client: server.tfe(acme.token) }), 200).data;
    assert.is(asAdmin.attributes["is-admin"], true);
    assert.is.not(asAdmin.id, asViewer.id);
    expectTfeError(await getAccountDetails({ client: server.tfe() }), 401, "unauthorized");
  },
);

create.run();
read.run();
account.run();
