import { createHash } from "node:crypto";
import { suite } from "uvu";
import { READ, matrixMismatches, row, type Caller, type Row } from "../support/authorization-matrix.ts";
import * as assert from "uvu/assert";
import { operations } from "../../../generated/tfe/operations.gen.ts";
import { stateUploadUrls } from "../../src/commands/state-versions.ts";
import { stateVersionOutputId } from "../../src/api/tfe/presenters.ts";
import {
  createOrganizationWithToken,
  createToken,
  createVariable,
  createWorkspace,
  uploadConfiguration,
} from "../support/factories.ts";
import { seededOrganization, seedRunIn } from "../support/seeded-runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

// Every /api/v2 operation × caller → the status it must get, checked against the generated tfe
// operation table in both directions (a new operation without a row fails this test). The
// compatibility surface takes API tokens only (a dashboard cookie is ignored there).
//
// Callers: anonymous, other (an admin token of another organization), and viewer, operator,
// admin tokens of organization acme. The operation binding refuses a caller that holds the
// operation's x-stackship-permission nowhere (403; 404 for the read permissions, which make
// everything invisible); the handler then answers 404 for an object the caller cannot see,
// exactly as for a missing one.

const OPEN = (status: number) => row(status, status, status, status, status);

const EXPECTED: Record<string, Row> = {
  getDiscovery: OPEN(200),
  ping: OPEN(204),
  // Signed URLs: the signature is the authorization, whoever sends them.
  readLog: OPEN(200),
  uploadStateVersion: OPEN(204),
  uploadStateVersionJson: OPEN(204),
  getEntitlementSet: READ,
  listProjects: READ,
  createProject: row(401, 404, 403, 403, 201),
  listWorkspaces: READ,
  createWorkspace: row(401, 404, 403, 201, 201),
  getWorkspaceByName: READ,
  getWorkspace: READ,
  updateWorkspace: row(401, 404, 403, 200, 200),
  addWorkspaceTags: row(401, 404, 403, 204, 204),
  listWorkspaceTags: READ,
  removeWorkspaceTags: row(401, 404, 403, 204, 204),
  lockWorkspace: row(401, 404, 403, 200, 200),
  unlockWorkspace: row(401, 404, 403, 200, 200),
  // The workspace is not locked: an admin reaches the state check.
  forceUnlockWorkspace: row(401, 404, 403, 403, 409),
  getCurrentStateVersion: READ,
  listCurrentStateVersionOutputs: READ,
  // Only a run token publishes state; API tokens that can see the workspace are told so (409).
  createStateVersion: row(401, 404, 409, 409, 409),
  getStateVersion: READ,
  // Raw state needs state:read (operator and admin); a viewer holds it nowhere.
  downloadStateVersion: row(401, 404, 403, 200, 200),
  getStateVersionOutput: READ,
  createConfigurationVersion: row(401, 404, 403, 201, 201),
  getConfigurationVersion: READ,
  listWorkspaceRuns: READ,
  listRunQueue: READ,
  createRun: row(401, 404, 403, 201, 201),
  getRun: READ,
  listRunEvents: READ,
  // The seeded run is not awaiting approval: callers allowed to decide reach the state check (409).
  applyRun: row(401, 404, 403, 409, 409),
  discardRun: row(401, 404, 403, 409, 409),
  cancelRun: row(401, 404, 403, 202, 202),
  getPlan: READ,
  // The plan JSON is the raw plan in another encoding: artifact:read_sensitive (admin) only;
  // every other member gets the same 404 as for a missing plan.
  getPlanJsonOutput: row(401, 404, 404, 404, 200),
  // The redacted plan is for anyone with run:read; the seeded run stored none, so each reader gets the same 404.
  getPlanJsonOutputRedacted: row(401, 404, 404, 404, 404),
  getApply: READ,
  // Every authenticated caller lists its own organizations and reads its own account.
  listOrganizations: row(401, 200, 200, 200, 200),
  getAccountDetails: row(401, 200, 200, 200, 200),
  // Deployment administrators only: an organization admin token is refused like the rest.
  createOrganization: row(401, 403, 403, 403, 403),
  getOrganization: READ,
  listVariables: READ,
  getVariable: READ,
  createVariable: row(401, 404, 403, 201, 201),
  updateVariable: row(401, 404, 403, 200, 200),
  deleteVariable: row(401, 404, 403, 204, 204),
  listConfigurationVersions: READ,
  listRemoteStateConsumers: READ,
  getProject: READ,
  // Renaming a project is an organization administrator's decision.
  updateProject: row(401, 404, 403, 403, 200),
  // Deleting a workspace is an organization administrator's decision (a fresh workspace each time).
  deleteWorkspace: row(401, 404, 403, 403, 204),
  safeDeleteWorkspace: row(401, 404, 403, 403, 204),
  deleteWorkspaceByName: row(401, 404, 403, 403, 204),
  safeDeleteWorkspaceByName: row(401, 404, 403, 403, 204),
};

interface World {
  server: TestServer;
  adminToken: string;
  organizationId: string;
  workspaceId: string;
  workspaceName: string;
  tokens: Record<Exclude<Caller, "anonymous">, string>;
  stateVersionId: string;
  outputId: string;
  logPath: string;
}

interface Call {
  path: Record<string, string>;
  body?: unknown;
  rawBody?: Uint8Array;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}-${(counter += 1)}`;

async function tfe(
  world: World,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<Response> {
  const headers: Record<string, string> = { "Content-Type": "application/vnd.api+json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  return fetch(`${world.server.baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A pending state version that has not been uploaded yet, and the signed URLs to upload it. */
async function pendingUpload(world: World, bytesFor: (serial: number) => Buffer) {
  const { server } = world;
  const top = (await server.services.stores.stateVersions.listByWorkspace(world.workspaceId))[0]?.serial ?? 0;
  const bytes = bytesFor(top + 1);
  const version = await server.services.stores.stateVersions.create({
    workspaceId: world.workspaceId,
    runId: null,
    serial: top + 1,
    lineage: "l",
    md5: createHash("md5").update(bytes).digest("hex"),
    fence: 1,
    outputs: null,
    createdAt: server.services.clock(),
  });
  return { bytes, urls: stateUploadUrls(server.services, server.baseUrl, version)! };
}

/** A valid request for each operation, as the caller would send it; fresh objects where a call consumes one. */
async function callFor(operationId: string, caller: Caller, world: World): Promise<Call> {
  const { server } = world;
  const org = { organization_name: "acme" };
  const ws = { workspace_id: world.workspaceId };
  const run = async () => (await seedRunIn(server, world.adminToken, world.workspaceId)).run.id;
  const freshWorkspace = async () =>
    (await createWorkspace(server, world.adminToken, "acme", { name: unique("lock") })).id;
  switch (operationId) {
    case "getDiscovery":
    case "ping":
      return { path: {} };
    case "readLog":
      return { path: { log_token: world.logPath.split("/").pop()! } };
    case "uploadStateVersion": {
      const { bytes, urls } = await pendingUpload(world, (serial) =>
        Buffer.from(`{"version":4,"serial":${serial},"lineage":"l","resources":[]}`),
      );
      return { path: { upload_token: urls.state.split("/").pop()! }, rawBody: bytes };
    }
    case "uploadStateVersionJson": {
      const { urls } = await pendingUpload(world, () => Buffer.from("{}"));
      return { path: { upload_token: urls.json.split("/").pop()! }, rawBody: Buffer.from("{}") };
    }
    case "getEntitlementSet":
    case "listProjects":
    case "listWorkspaces":
    case "listRunQueue":
      return { path: org };
    case "createProject":
      return { path: org, body: { data: { type: "projects", attributes: { name: unique("project") } } } };
    case "createWorkspace":
      return { path: org, body: { data: { type: "workspaces", attributes: { name: unique("ws") } } } };
    case "getWorkspaceByName":
      return { path: { ...org, workspace_name: world.workspaceName } };
    case "getWorkspace":
    case "getCurrentStateVersion":
    case "listCurrentStateVersionOutputs":
    case "listWorkspaceRuns":
      return { path: ws };
    case "updateWorkspace":
      return { path: ws, body: { data: { type: "workspaces", attributes: { description: unique("d") } } } };
    case "listWorkspaceTags":
      return { path: ws };
    case "addWorkspaceTags":
    case "removeWorkspaceTags":
      return { path: ws, body: { data: [{ type: "tags", attributes: { name: unique("tag") } }] } };
    case "lockWorkspace":
      return {
        path: { workspace_id: await freshWorkspace() },
        body: { data: { type: "", attributes: { reason: "matrix" } } },
      };
    case "unlockWorkspace": {
      const workspaceId = await freshWorkspace();
      // Locked by the caller itself where it may lock, so the unlock is the caller's own.
      if (caller === "operator" || caller === "admin") {
        const locked = await tfe(
          world,
          "POST",
          `/api/v2/workspaces/${workspaceId}/actions/lock`,
          world.tokens[caller],
          { data: { type: "", attributes: { reason: "matrix" } } },
        );
        assert.is(locked.status, 200);
      }
      return { path: { workspace_id: workspaceId } };
    }
    case "listConfigurationVersions":
    case "listRemoteStateConsumers":
      return { path: ws };
    case "getProject":
      return { path: { project_id: (await server.services.stores.workspaces.getById(world.workspaceId))!.projectId } };
    case "updateProject": {
      const created = await tfe(world, "POST", "/api/v2/organizations/acme/projects", world.adminToken, {
        data: { type: "projects", attributes: { name: unique("renamed") } },
      });
      const project = (await created.json()) as { data: { id: string } };
      return {
        path: { project_id: project.data.id },
        body: { data: { type: "projects", attributes: { name: unique("project") } } },
      };
    }
    case "forceUnlockWorkspace":
    case "deleteWorkspace":
    case "safeDeleteWorkspace":
      return { path: { workspace_id: await freshWorkspace() } };
    case "deleteWorkspaceByName":
    case "safeDeleteWorkspaceByName": {
      const name = unique("delete");
      await createWorkspace(server, world.adminToken, "acme", { name });
      return { path: { ...org, workspace_name: name } };
    }
    case "createStateVersion":
      return {
        path: ws,
        body: { data: { type: "state-versions", attributes: { serial: 1000, md5: "0".repeat(32), lineage: "l" } } },
      };
    case "getStateVersion":
    case "downloadStateVersion":
      return { path: { state_version_id: world.stateVersionId } };
    case "getStateVersionOutput":
      return { path: { state_version_output_id: world.outputId } };
    case "createConfigurationVersion":
      return { path: ws, body: { data: { type: "configuration-versions", attributes: { speculative: true } } } };
    case "getConfigurationVersion": {
      const { configurationVersion } = await uploadConfiguration(server, world.adminToken, world.workspaceId);
      return { path: { configuration_version_id: configurationVersion.id } };
    }
    case "createRun": {
      const { configurationVersion } = await uploadConfiguration(server, world.adminToken, world.workspaceId);
      return {
        path: {},
        body: {
          data: {
            type: "runs",
            attributes: {},
            relationships: {
              workspace: { data: { type: "workspaces", id: world.workspaceId } },
              "configuration-version": { data: { type: "configuration-versions", id: configurationVersion.id } },
            },
          },
        },
      };
    }
    case "getRun":
    case "listRunEvents":
      return { path: { run_id: await run() } };
    case "applyRun":
    case "discardRun":
    case "cancelRun":
      return { path: { run_id: await run() }, body: { comment: "matrix" } };
    case "getPlan":
    case "getPlanJsonOutput":
    case "getPlanJsonOutputRedacted":
      return { path: { plan_id: (await run()).replace(/^run-/, "plan-") } };
    case "getApply":
      return { path: { apply_id: (await run()).replace(/^run-/, "apply-") } };
    case "listOrganizations":
    case "getAccountDetails":
      return { path: {} };
    case "createOrganization":
      return {
        path: {},
        body: { data: { type: "organizations", attributes: { name: unique("org"), email: "ops@example.com" } } },
      };
    case "getOrganization":
      return { path: org };
    case "listVariables":
      return { path: ws };
    case "createVariable":
      return {
        path: ws,
        body: {
          data: {
            type: "vars",
            attributes: { key: unique("key").replace("-", "_"), value: "v", category: "terraform" },
          },
        },
      };
    case "getVariable":
    case "updateVariable":
    case "deleteVariable": {
      const variable = await createVariable(server, world.adminToken, world.workspaceId, {
        key: unique("var").replace("-", "_"),
        value: "v",
      });
      const body =
        operationId === "updateVariable"
          ? { data: { type: "vars", id: variable.id, attributes: { value: "changed" } } }
          : undefined;
      return { path: { ...ws, variable_id: variable.id }, body };
    }
    default:
      throw new Error(`no request for ${operationId}: add it to callFor and a row to EXPECTED`);
  }
}

const matrix = suite("authorization matrix (tfe)");

matrix("has exactly one row per /api/v2 operation of the spec", () => {
  assert.equal(Object.keys(EXPECTED).sort(), operations.map((op) => op.operationId).sort());
});

testEachServer(
  matrix,
  "every /api/v2 operation × anonymous/other-org/viewer/operator/admin token answers the expected status",
  async (server) => {
    const { org, workspace } = await seededOrganization(server);
    const other = await createOrganizationWithToken(server, "globex", "admin");
    // A published state version with an output, and a run whose plan has a log URL.
    const seeded = await seedRunIn(server, org.token, workspace.id);
    const published = (await server.services.stores.stateVersions.listByWorkspace(workspace.id)).find(
      (v) => v.status === "finalized",
    )!;
    await server.db
      .knex("state_versions")
      .where({ id: published.id })
      .update({ json_outputs: JSON.stringify([{ name: "greeting", sensitive: false, type: "string", value: "hi" }]) });
    const plan = await fetch(`${server.baseUrl}/api/v2/plans/${seeded.run.id.replace(/^run-/, "plan-")}`, {
      headers: { Authorization: `Bearer ${org.token}` },
    });
    const logReadUrl = ((await plan.json()) as { data: { attributes: { "log-read-url": string } } }).data.attributes[
      "log-read-url"
    ];
    const world: World = {
      server,
      adminToken: org.token,
      organizationId: org.organizationId,
      workspaceId: workspace.id,
      workspaceName: workspace.attributes.name,
      tokens: {
        other: other.token,
        viewer: (await createToken(server, org.token, "acme", "viewer")).token,
        operator: (await createToken(server, org.token, "acme", "operator")).token,
        admin: org.token,
      },
      stateVersionId: published.id,
      outputId: stateVersionOutputId(published.id, 0),
      logPath: new URL(logReadUrl).pathname,
    };
    const mismatches = await matrixMismatches(operations, EXPECTED, {
      baseUrl: server.baseUrl,
      call: (operation, caller) => callFor(operation.operationId, caller, world),
      credentials: (_, caller): Record<string, string> =>
        caller === "anonymous" ? {} : { Authorization: `Bearer ${world.tokens[caller]}` },
    });
    assert.equal(mismatches, []);
  },
);

matrix.run();
