import { suite } from "uvu";
import { READ, matrixMismatches, row, type Caller, type Row } from "../support/authorization-matrix.ts";
import * as assert from "uvu/assert";
import { operations } from "../../../generated/v1/operations.gen.ts";
import { seededOrganization } from "../support/seeded-runs.ts";
import { signedInMember } from "../support/sessions.ts";
import { testEachServer } from "../support/test-server.ts";
import { callFor, POLICY, type Call, type World } from "../support/api-v1-matrix-calls.ts";

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

/** The caller's session cookie (and its CSRF token on writes), or the call's own session. */
function sessionHeaders(
  world: World,
  operation: { method: string },
  caller: Caller,
  call: Call,
): Record<string, string> {
  const session =
    call.session !== undefined ? call.session : caller === "anonymous" ? null : world.sessions[caller].session;
  if (!session) return {};
  return operation.method === "GET"
    ? { Cookie: session.cookie }
    : { Cookie: session.cookie, "X-CSRF-Token": session.csrfToken };
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
    const mismatches = await matrixMismatches(operations, EXPECTED, {
      baseUrl: server.baseUrl,
      call: (operation, caller) => callFor(operation.operationId, caller, world),
      credentials: (operation, caller, call) => sessionHeaders(world, operation, caller, call),
    });
    assert.equal(mismatches, []);
  },
  { publicUrlIsBaseUrl: true },
);

matrix.run();
