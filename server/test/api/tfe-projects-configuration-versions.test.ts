// GET /api/v2/projects/{id} and the workspace's configuration-version list (issue 26, part 2):
// what go-tfe's Projects.Read and ConfigurationVersions.List call.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  createOrganizationWithToken,
  createPendingConfiguration,
  createToken,
  createWorkspace,
  uploadConfiguration,
} from "../support/factories.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { Tfe } from "../support/documents.ts";

async function tfe<T = unknown>(server: TestServer, path: string, token: string): Promise<{ status: number; json: T }> {
  const response = await fetch(`${server.baseUrl}/api/v2${path}`, { headers: { Authorization: `Bearer ${token}` } });
  const text = await response.text();
  return { status: response.status, json: (text ? JSON.parse(text) : undefined) as T };
}

const test = suite("tfe projects and configuration-version list");

testEachServer(
  test,
  "a project by id: its name and organization; 404 for another organization and for a missing id",
  async (server) => {
    const org = await createOrganizationWithToken(server, "acme", "admin");
    const other = await createOrganizationWithToken(server, "globex", "admin");
    const viewer = (await createToken(server, org.token, "acme", "viewer")).token;
    const workspace = await createWorkspace(server, org.token, "acme", { name: "app" });
    const projectId = (await server.services.stores.workspaces.getById(workspace.id))!.projectId;
    for (const token of [org.token, viewer]) {
      const shown = await tfe<Tfe["ProjectDocument"]>(server, `/projects/${projectId}`, token);
      assert.is(shown.status, 200, JSON.stringify(shown.json));
      assert.is(shown.json.data.id, projectId);
      assert.is(shown.json.data.type, "projects");
      assert.is(shown.json.data.attributes.name, "Default Project");
      assert.equal(shown.json.data.relationships!.organization!.data, { type: "organizations", id: "acme" });
    }
    assert.is((await tfe(server, `/projects/${projectId}`, other.token)).status, 404);
    assert.is((await tfe(server, `/projects/prj-0000000000000000`, org.token)).status, 404);
  },
);

testEachServer(
  test,
  "the project list's q keeps names containing the text, ignoring case, and combines with filter[names]",
  async (server) => {
    const org = await createOrganizationWithToken(server, "acme", "admin");
    for (const name of ["Payments", "payroll", "infra"]) {
      const response = await fetch(`${server.baseUrl}/api/v2/organizations/acme/projects`, {
        method: "POST",
        headers: { Authorization: `Bearer ${org.token}`, "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({ data: { type: "projects", attributes: { name } } }),
      });
      assert.is(response.status, 201);
    }
    const names = async (query: string) =>
      (await tfe<Tfe["ProjectListDocument"]>(server, `/organizations/acme/projects?${query}`, org.token)).json.data
        .map((p) => p.attributes.name)
        .sort();
    assert.equal(await names("q=PAY"), ["Payments", "payroll"]);
    assert.equal(await names("q=roll"), ["payroll"]);
    assert.equal(await names("q=zzz"), []);
    assert.equal(await names("q=pay&filter[names]=payroll,infra"), ["payroll"]);
    assert.equal(await names(""), ["Default Project", "Payments", "infra", "payroll"].sort());
  },
);

testEachServer(
  test,
  "configuration versions: newest first, speculative and pending too, no upload-url, paged; 404 elsewhere",
  async (server) => {
    const org = await createOrganizationWithToken(server, "acme", "admin");
    const other = await createOrganizationWithToken(server, "globex", "admin");
    const workspace = await createWorkspace(server, org.token, "acme", { name: "app" });
    const sibling = await createWorkspace(server, org.token, "acme", { name: "sibling" });
    const first = (await uploadConfiguration(server, org.token, workspace.id)).configurationVersion;
    const second = await createPendingConfiguration(server, org.token, workspace.id, true);
    await uploadConfiguration(server, org.token, sibling.id);

    const list = await tfe<Tfe["ConfigurationVersionListDocument"]>(
      server,
      `/workspaces/${workspace.id}/configuration-versions`,
      org.token,
    );
    assert.is(list.status, 200, JSON.stringify(list.json));
    assert.equal(
      list.json.data.map((version) => version.id),
      [second.id, first.id],
    );
    assert.equal(
      list.json.data.map((version) => [version.attributes.status, version.attributes.speculative]),
      [
        ["pending", true],
        ["uploaded", false],
      ],
    );
    for (const version of list.json.data) assert.is(version.attributes["upload-url"], null);
    assert.is(list.json.meta.pagination["total-count"], 2);

    const page2 = await tfe<Tfe["ConfigurationVersionListDocument"]>(
      server,
      `/workspaces/${workspace.id}/configuration-versions?page[size]=1&page[number]=2`,
      org.token,
    );
    assert.equal(
      page2.json.data.map((version) => version.id),
      [first.id],
    );
    assert.is(page2.json.meta.pagination["current-page"], 2);
    assert.is(page2.json.meta.pagination["next-page"], null);
    const past = await tfe<Tfe["ConfigurationVersionListDocument"]>(
      server,
      `/workspaces/${workspace.id}/configuration-versions?page[size]=1&page[number]=3`,
      org.token,
    );
    assert.equal(past.json.data, []);
    assert.is((await tfe(server, `/workspaces/${workspace.id}/configuration-versions`, other.token)).status, 404);
  },
);

test.run();
