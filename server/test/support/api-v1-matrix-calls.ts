// The v1 authorization matrix's requests (authorization-matrix.test.ts): for each operation, a valid
// request as a caller would send it against a seeded organization.
import { type Caller } from "./authorization-matrix.ts";
import {
  createPendingConfiguration,
  createToken,
  createVariable,
  createWorkspace,
  makeConfigurationTarball,
} from "./factories.ts";
import { seedRunIn } from "./seeded-runs.ts";
import { createUser, signIn, type TestSession } from "./sessions.ts";
import { type TestServer } from "./test-server.ts";

export const POLICY = {
  name: "p",
  enforcement_level: "advisory",
  source: 'package p\n\nviolations contains {"title": "t", "message": "m"} if {\n  false\n}\n',
};

export interface World {
  server: TestServer;
  organizationName: string;
  adminToken: string;
  workspaceId: string;
  projectId: string;
  policySetId: string;
  sessions: Record<Exclude<Caller, "anonymous">, { session: TestSession; email: string; password: string }>;
}

export interface Call {
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
export async function callFor(operationId: string, caller: Caller, world: World): Promise<Call> {
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
