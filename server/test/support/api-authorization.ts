// Shared by authorization.test.ts and authorization-roles.test.ts: two organizations with objects in
// the first, and every authenticated v1 operation called against those objects.
import {
  createConfigurationVersion,
  createOrganization,
  createOrganizationToken,
  createProject,
  createRun,
  createVariable,
  createWorkspace,
  getConfigurationVersion,
  getOrganization,
  getRun,
  getWorkspace,
  listOrganizationRuns,
  listProjects,
  listVariables,
  listWorkspaces,
  type Client,
} from "../../../client/src/index.ts";
import {
  createOrganizationWithToken,
  createWorkspace as createWorkspaceFixture,
  uploadConfiguration,
} from "./factories.ts";
import { expectStatus, type SdkResult } from "./responses.ts";
import type { TestServer } from "./test-server.ts";

/** Organization A with a workspace, an uploaded configuration and a run; organization B with its own admin. */
export async function twoOrganizations(server: TestServer) {
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

export type Fixture = Awaited<ReturnType<typeof twoOrganizations>>;

/** Every authenticated v1 operation, called with a valid request against organization A's objects. */
export function authenticatedOperations(f: Fixture): Array<[string, (client: Client) => Promise<SdkResult>]> {
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

/** A v1 client without a token that sends `headers` (e.g. a malformed Authorization). */
export function createClientWithHeaders(server: TestServer, headers: Record<string, string>): Client {
  const client = server.v1();
  client.setConfig({ headers });
  return client;
}
