import { suite } from "uvu";
import { READ, matrixMismatches, matrixRequest, row, type Caller, type Row } from "../support/authorization-matrix.ts";
import * as assert from "uvu/assert";
import { operations } from "../../../generated/v1/operations.gen.ts";
import {
  createPendingConfiguration,
  createToken,
  createVariable,
  createWorkspace,
  makeConfigurationTarball,
} from "../support/factories.ts";
import { seededOrganization, seedRunIn } from "../support/seeded-runs.ts";
import { createUser, signIn, signedInMember, type TestSession } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

// Every v1 operation × caller → the status it must get. The rows are checked against the
// generated operation table in both directions, so a new operation without a row (or a row for
// an operation that is gone) fails this test.
//
// Callers: anonymous (no credentials), other (an admin of another organization), and viewer,
// operator, admin of organization acme, all as signed-in dashboard sessions.

const WRITE = row(401, 404, 403, 201, 201);
const ADMIN_CREATE = row(401, 404, 403, 403, 201);
const SITE_ADMIN = row(401, 403, 403, 403, 403);
const SESSION = row(401, 200, 200, 200, 200);

const EXPECTED: Record<string, Row> = {
  getHealth: row(200, 200, 200, 200, 200),
  // A scrape endpoint: unauthenticated, its labels name no tenant (runner-process-cancel.test.ts).
  getMetrics: row(200, 200, 200, 200, 200),
  // The reference pages and bundled specs are public.
  getOpenApiV1: row(200, 200, 200, 200, 200),
  getOpenApiTfe: row(200, 200, 200, 200, 200),
  getApiReference: row(200, 200, 200, 200, 200),
  getTfeApiReference: row(200, 200, 200, 200, 200),
  // Authorized by its signed URL, not by the caller; each call gets a fresh pending version.
  uploadConfiguration: row(200, 200, 200, 200, 200),
  createSession: row(201, 201, 201, 201, 201),
  // The setup link's token is the credential: an unknown one is refused alike for every caller (setup.test.ts spends a real one).
  checkSetupToken: row(422, 422, 422, 422, 422),
  completeSetup: row(422, 422, 422, 422, 422),
  getCurrentSession: SESSION,
  deleteCurrentSession: row(401, 204, 204, 204, 204),
  stepUp: SESSION,
  createUser: SITE_ADMIN,
  createOrganization: SITE_ADMIN,
  // Everyone signed in may list their own organizations ("other" sees its own, not acme).
  listOrganizations: SESSION,
  getOrganization: READ,
  listMemberships: row(401, 404, 403, 403, 200),
  // The audit history: organization admins only.
  listAuditEvents: row(401, 404, 403, 403, 200),
  listAuditCheckpoints: row(401, 404, 403, 403, 200),
  createMembership: ADMIN_CREATE,
  updateMembership: row(401, 404, 403, 403, 200),
  deleteMembership: row(401, 404, 403, 403, 204),
  // Each signed-in caller acts on a throwaway user of its own (these end sessions and change passwords).
  deleteAllSessions: row(401, 204, 204, 204, 204),
  changePassword: SESSION,
  updateUser: SITE_ADMIN,
  deleteUserSessions: SITE_ADMIN,
  listPolicySets: READ,
  createPolicySet: ADMIN_CREATE,
  createPolicySetVersion: ADMIN_CREATE,
  listProjects: READ,
  createProject: ADMIN_CREATE,
  listOrganizationRuns: READ,
  createOrganizationToken: ADMIN_CREATE,
  listOrganizationTokens: row(401, 404, 403, 403, 200),
  deleteOrganizationToken: row(401, 404, 403, 403, 204),
  listWorkspaces: READ,
  createWorkspace: WRITE,
  getWorkspace: READ,
  getWorkspaceStateSummary: READ,
  listVariables: READ,
  createVariable: WRITE,
  updateVariable: row(401, 404, 403, 200, 200),
  deleteVariable: row(401, 404, 403, 204, 204),
  createConfigurationVersion: WRITE,
  getConfigurationVersion: READ,
  createRun: WRITE,
  getRun: READ,
  getRunLog: READ,
  getRunPlanChanges: READ,
  getRunPolicyEvaluation: READ,
  getRunReview: READ,
  listRunAttestations: READ,
  // The seeded run is not awaiting approval: callers allowed to decide reach the state check (409).
  approveRun: row(401, 404, 403, 409, 409),
  discardRun: row(401, 404, 403, 409, 409),
  cancelRun: row(401, 404, 403, 202, 202),
  resolveRunRecovery: row(401, 404, 403, 403, 409),
  createPolicyOverride: row(401, 404, 403, 403, 409),
  downloadRedactedPlan: READ,
  downloadRawPlan: row(401, 404, 403, 403, 200),
  downloadEmergencyState: row(401, 404, 403, 403, 200),
  updateWorkspace: row(401, 404, 403, 200, 200),
  // The issuer's discovery and keys are public (the server below sets STACKSHIP_PUBLIC_URL).
  getOpenIdConfiguration: row(200, 200, 200, 200, 200),
  getJsonWebKeySet: row(200, 200, 200, 200, 200),
  // The attestation keys are public: anyone verifies an attestation.
  getAttestationKeys: row(200, 200, 200, 200, 200),
  listFederationProfiles: READ,
  createFederationProfile: WRITE,
  getFederationProfile: READ,
  updateFederationProfile: row(401, 404, 403, 200, 200),
  deleteFederationProfile: row(401, 404, 403, 204, 204),
  // Organization admins only: the other organization's admin does not see the profile.
  verifyFederationProfile: row(401, 404, 403, 403, 200),
  // Authorized by its signature, not by the caller; this server has no GitHub App configured.
  receiveGithubWebhook: row(503, 503, 503, 503, 503),
  getWorkspaceSource: READ,
  // Organization admins only; without a GitHub App on this server the admin reaches 503.
  putWorkspaceSource: row(401, 404, 403, 403, 503),
  deleteWorkspaceSource: row(401, 404, 403, 403, 204),
  // Each caller finds the lock free (lock), held by themselves (unlock) or held by someone (force-unlock).
  lockWorkspace: row(401, 404, 403, 200, 200),
  unlockWorkspace: row(401, 404, 403, 200, 200),
  forceUnlockWorkspace: row(401, 404, 403, 403, 200),
  // Each caller gets a workspace of its own to delete.
  deleteWorkspace: row(401, 404, 403, 403, 204),
  // Installation binding: a setup state for an organization admin's session; a bare id only for
  // deployment administrators (none of these callers); release by the organization's admin.
  createGithubInstallationState: ADMIN_CREATE,
  bindGithubInstallation: row(401, 403, 403, 403, 403),
  releaseGithubInstallation: row(401, 404, 403, 403, 204),
};

const POLICY = {
  name: "p",
  enforcement_level: "advisory",
  source: 'package p\n\nviolations contains {"title": "t", "message": "m"} if {\n  false\n}\n',
};

interface World {
  server: TestServer;
  organizationName: string;
  adminToken: string;
  workspaceId: string;
  projectId: string;
  policySetId: string;
  sessions: Record<Exclude<Caller, "anonymous">, { session: TestSession; email: string; password: string }>;
}

interface Call {
  path: Record<string, string>;
  body?: unknown;
  rawBody?: Uint8Array;
  /** Credentials other than the caller's own session (e.g. a throwaway session to sign out). */
  session?: TestSession | null;
}

const sourceConnection = {
  data: { type: "source-connections", attributes: { installation_id: 1, repository: "acme/infra" } },
};

let counter = 0;
const unique = (prefix: string) => `${prefix}-${(counter += 1)}`;

/** A valid request for each operation, as the caller would send it; fresh objects where a call consumes one. */
async function callFor(operationId: string, caller: Caller, world: World): Promise<Call> {
  const { server } = world;
  const org = { organization_name: world.organizationName };
  const ws = { workspace_id: world.workspaceId };
  const run = async () => ({ run_id: (await seedRunIn(server, world.adminToken, world.workspaceId)).run.id });
  const caller_ = caller === "anonymous" ? null : world.sessions[caller];
  const reason = { data: { type: "download-requests", attributes: { reason: "authorization matrix" } } };
  switch (operationId) {
    case "getHealth":
    case "getMetrics":
    case "getOpenApiV1":
    case "getOpenApiTfe":
    case "getApiReference":
    case "getTfeApiReference":
      return { path: {} };
    case "uploadConfiguration": {
      const pending = await createPendingConfiguration(server, world.adminToken, world.workspaceId);
      return {
        path: { upload_token: new URL(pending.attributes.upload_url!).pathname.split("/").pop()! },
        rawBody: makeConfigurationTarball(),
      };
    }
    case "createSession": {
      // Signed in from a fresh browser: a session cookie sent along would be revoked (rotation).
      const user = await createUser(server);
      return {
        path: {},
        body: { data: { type: "sessions", attributes: { email: user.email, password: user.password } } },
        session: null,
      };
    }
    case "checkSetupToken":
      return { path: {}, body: { data: { type: "setup-token-checks", attributes: { token: "sst.unknown" } } } };
    case "completeSetup":
      return {
        path: {},
        body: {
          data: {
            type: "setups",
            attributes: {
              token: "sst.unknown",
              email: `${unique("setup")}@example.com`,
              display_name: "Setup",
              password: "twelve-chars",
            },
          },
        },
      };
    case "getCurrentSession":
    case "listOrganizations":
      return { path: {} };
    case "deleteCurrentSession":
      return { path: {}, session: caller_ ? await signIn(server, caller_.email, caller_.password) : null };
    case "stepUp":
      return {
        path: {},
        body: { data: { type: "step-ups", attributes: { password: caller_?.password ?? "not a session at all" } } },
      };
    case "createUser":
      return {
        path: {},
        body: {
          data: {
            type: "users",
            attributes: { email: `${unique("u")}@example.com`, password: "long enough password" },
          },
        },
      };
    case "createOrganization":
      return { path: {}, body: { data: { type: "organizations", attributes: { name: unique("org") } } } };
    case "getOrganization":
    case "listMemberships":
    case "listAuditEvents":
    case "listAuditCheckpoints":
    case "listPolicySets":
    case "listProjects":
    case "listOrganizationRuns":
    case "listWorkspaces":
      return { path: org };
    case "createMembership": {
      const user = await createUser(server);
      return { path: org, body: { data: { type: "memberships", attributes: { email: user.email, role: "viewer" } } } };
    }
    case "updateMembership":
    case "deleteMembership": {
      const user = await createUser(server);
      const created = await fetch(`${server.baseUrl}/v1/organizations/${world.organizationName}/memberships`, {
        method: "POST",
        headers: { Authorization: `Bearer ${world.adminToken}`, "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({ data: { type: "memberships", attributes: { email: user.email, role: "viewer" } } }),
      });
      const membershipId = ((await created.json()) as { data: { id: string } }).data.id;
      return {
        path: { ...org, membership_id: membershipId },
        body:
          operationId === "updateMembership"
            ? { data: { type: "memberships", attributes: { role: "operator" } } }
            : undefined,
      };
    }
    case "deleteAllSessions":
    case "changePassword": {
      const user = await createUser(server);
      const session = caller_ ? await signIn(server, user.email, user.password) : null;
      const body = {
        data: {
          type: "password-changes",
          attributes: { current_password: user.password, new_password: `${user.password}-new` },
        },
      };
      return { path: {}, session, body: operationId === "changePassword" ? body : undefined };
    }
    case "updateUser":
      return {
        path: { user_id: (await createUser(server)).userId },
        body: { data: { type: "users", attributes: { disabled: false } } },
      };
    case "deleteUserSessions":
      return { path: { user_id: (await createUser(server)).userId } };
    case "listOrganizationTokens":
      return { path: org };
    case "deleteOrganizationToken":
      return {
        path: {
          ...org,
          token_id: (await createToken(server, world.adminToken, world.organizationName, "viewer")).tokenId,
        },
      };
    case "createPolicySet":
      return {
        path: org,
        body: { data: { type: "policy-sets", attributes: { name: unique("set"), global: true, policies: [POLICY] } } },
      };
    case "createPolicySetVersion":
      return {
        path: { policy_set_id: world.policySetId },
        body: { data: { type: "policy-set-versions", attributes: { policies: [POLICY] } } },
      };
    case "createProject":
      return { path: org, body: { data: { type: "projects", attributes: { name: unique("project") } } } };
    case "createOrganizationToken":
      return { path: org, body: { data: { type: "tokens", attributes: { role: "viewer" } } } };
    case "createWorkspace":
      return { path: org, body: { data: { type: "workspaces", attributes: { name: unique("ws") } } } };
    case "getWorkspace":
    case "getWorkspaceStateSummary":
    case "listVariables":
      return { path: ws };
    case "createVariable":
      return {
        path: ws,
        body: { data: { type: "variables", attributes: { key: unique("key").replace("-", "_"), value: "v" } } },
      };
    case "updateVariable":
    case "deleteVariable": {
      const variable = await createVariable(server, world.adminToken, world.workspaceId, {
        key: unique("key").replace("-", "_"),
        value: "v",
      });
      return {
        path: { ...ws, variable_id: variable.id },
        body:
          operationId === "updateVariable" ? { data: { type: "variables", attributes: { value: "w" } } } : undefined,
      };
    }
    case "createConfigurationVersion":
      return { path: ws, body: { data: { type: "configuration-versions" } } };
    case "getConfigurationVersion":
      return {
        path: {
          configuration_version_id: (await createPendingConfiguration(server, world.adminToken, world.workspaceId)).id,
        },
      };
    case "createRun":
      return { path: ws, body: { data: { type: "runs" } } };
    case "getRun":
    case "getRunPlanChanges":
    case "getRunPolicyEvaluation":
    case "getRunReview":
    case "listRunAttestations":
    case "downloadRedactedPlan":
      return { path: await run() };
    case "getRunLog":
      return { path: { ...(await run()), phase: "plan" } };
    case "approveRun":
      return { path: await run(), body: { data: { type: "approvals", attributes: { plan_digest: "0".repeat(64) } } } };
    case "discardRun":
    case "cancelRun":
      return { path: await run(), body: { data: { type: "decisions", attributes: {} } } };
    case "resolveRunRecovery":
      return {
        path: await run(),
        body: {
          data: {
            type: "recovery-resolutions",
            attributes: { resolution: "keep_current_state", reason: "authorization matrix" },
          },
        },
      };
    case "createPolicyOverride":
      return {
        path: await run(),
        body: {
          data: {
            type: "policy-overrides",
            attributes: { result_digest: "0".repeat(64), reason: "authorization matrix" },
          },
        },
      };
    case "downloadRawPlan":
    case "downloadEmergencyState":
      return { path: await run(), body: reason };
    case "receiveGithubWebhook":
      return { path: {}, rawBody: Buffer.from(JSON.stringify({ zen: "hi" })) };
    case "getWorkspaceSource":
      return { path: ws };
    case "putWorkspaceSource":
      return { path: ws, body: sourceConnection };
    case "deleteWorkspaceSource": {
      // Each caller gets a connection to remove (written directly: this server has no GitHub App to confirm one).
      const workspace = (await server.services.stores.workspaces.getById(world.workspaceId))!;
      await server.services.stores.github.putConnection({
        workspaceId: workspace.id,
        organizationId: workspace.organizationId,
        installationId: 1,
        repository: "acme/infra",
        triggerPaths: [],
        now: new Date(),
      });
      return { path: ws };
    }
    case "lockWorkspace":
    case "unlockWorkspace":
    case "forceUnlockWorkspace": {
      const locks = server.services.stores.workspaceLocks;
      await locks.forceRelease(world.workspaceId);
      if (operationId !== "lockWorkspace") {
        const holder = caller_ ?? world.sessions.admin;
        await locks.acquire(world.workspaceId, { kind: "user", id: holder.session.userId }, "matrix", new Date());
      }
      return {
        path: ws,
        body:
          operationId === "lockWorkspace"
            ? { data: { type: "workspace-locks", attributes: { reason: "maintenance" } } }
            : undefined,
      };
    }
    case "deleteWorkspace": {
      const doomed = await createWorkspace(server, world.adminToken, world.organizationName, {
        name: unique("doomed"),
      });
      return {
        path: { workspace_id: doomed.id },
        body: { data: { type: "workspace-deletions", attributes: { name: doomed.attributes.name } } },
      };
    }
    case "createGithubInstallationState":
      return { path: { organization_name: world.organizationName } };
    case "bindGithubInstallation":
      return {
        path: {},
        body: {
          data: {
            type: "github-installations",
            attributes: { installation_id: 1, organization: world.organizationName },
          },
        },
      };
    case "releaseGithubInstallation": {
      // Each caller gets a bound installation to release.
      const organization = (await server.services.stores.organizations.getByName(world.organizationName))!;
      await server.services.stores.github.bindInstallation({
        installationId: 77,
        organizationId: organization.id,
        account: "acme",
        boundBy: "matrix",
        now: new Date(),
      });
      return { path: { organization_name: world.organizationName, installation_id: "77" } };
    }
    case "updateWorkspace":
      return { path: ws, body: { data: { type: "workspaces", attributes: { plan_requires_credential: false } } } };
    case "getOpenIdConfiguration":
    case "getJsonWebKeySet":
    case "getAttestationKeys":
    case "listFederationProfiles":
      return { path: operationId === "listFederationProfiles" ? ws : {} };
    case "createFederationProfile":
      return {
        path: ws,
        body: {
          data: {
            type: "federation-profiles",
            attributes: { name: unique("fp"), provider: "generic", audience: "a", target: {}, phases: ["plan"] },
          },
        },
      };
    case "getFederationProfile":
    case "updateFederationProfile":
    case "deleteFederationProfile":
    case "verifyFederationProfile": {
      const created = await fetch(`${server.baseUrl}/v1/workspaces/${world.workspaceId}/federation-profiles`, {
        method: "POST",
        headers: { Authorization: `Bearer ${world.adminToken}`, "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({
          data: {
            type: "federation-profiles",
            attributes: {
              name: unique("fp"),
              provider: "generic",
              audience: "a",
              target: {},
              phases: ["speculative_plan"],
            },
          },
        }),
      });
      const profileId = ((await created.json()) as { data: { id: string } }).data.id;
      if (operationId === "verifyFederationProfile") return { path: { profile_id: profileId } };
      return {
        path: { ...ws, profile_id: profileId },
        body:
          operationId === "updateFederationProfile"
            ? { data: { type: "federation-profiles", attributes: { audience: "b" } } }
            : undefined,
      };
    }
    default:
      throw new Error(`no request for ${operationId}: add it to callFor and a row to EXPECTED`);
  }
}

async function send(
  world: World,
  operation: (typeof operations)[number],
  caller: Caller,
  call: Call,
): Promise<Response> {
  const { url, headers, body } = matrixRequest(operation, call);
  const session =
    call.session !== undefined ? call.session : caller === "anonymous" ? null : world.sessions[caller].session;
  if (session) {
    headers.Cookie = session.cookie;
    if (operation.method !== "GET") headers["X-CSRF-Token"] = session.csrfToken;
  }
  return fetch(`${world.server.baseUrl}${url}`, { method: operation.method, headers, body });
}

const matrix = suite("authorization matrix");

matrix("has exactly one row per v1 operation of the spec", () => {
  const specIds = operations.map((op) => op.operationId).sort();
  assert.equal(Object.keys(EXPECTED).sort(), specIds);
});

testEachServer(
  matrix,
  "every v1 operation × anonymous/other-org/viewer/operator/admin answers the expected status",
  async (server) => {
    const { org, workspace } = await seededOrganization(server);
    const project = await server.services.stores.projects.getByName(org.organizationId, "Default Project");
    const policySet = await fetch(`${server.baseUrl}/v1/organizations/acme/policy-sets`, {
      method: "POST",
      headers: { Authorization: `Bearer ${org.token}`, "Content-Type": "application/vnd.api+json" },
      body: JSON.stringify({
        data: { type: "policy-sets", attributes: { name: "baseline", global: true, policies: [POLICY] } },
      }),
    });
    assert.is(policySet.status, 201, await policySet.clone().text());
    const sessions = {
      other: await signedInMember(server, "other", "admin"),
      viewer: await signedInMember(server, "acme", "viewer"),
      operator: await signedInMember(server, "acme", "operator"),
      admin: await signedInMember(server, "acme", "admin"),
    };
    const world: World = {
      server,
      organizationName: "acme",
      adminToken: org.token,
      workspaceId: workspace.id,
      projectId: project!.id,
      policySetId: ((await policySet.json()) as { data: { id: string } }).data.id,
      sessions,
    };
    assert.equal(
      await matrixMismatches(operations, EXPECTED, async (operation, caller) =>
        send(world, operation, caller, await callFor(operation.operationId, caller, world)),
      ),
      [],
    );
  },
  { publicUrlIsBaseUrl: true },
);

matrix.run();
