import { createHash, randomBytes } from "node:crypto";
import { writeRunArtifact } from "../../src/commands/run-artifacts.ts";
import { createRun } from "../../../client/src/index.ts";
import { buildPlanDiff } from "../../src/domain/plan-diff/plan-diff.mjs";
import { hashTokenSecret } from "../../src/domain/token-secrets.ts";
import { storePlanJson } from "../../src/runner/plan-json.ts";
import { createOrganizationWithToken, createWorkspace, uploadConfiguration } from "./factories.ts";
import { expectStatus } from "./responses.ts";
import type { TestServer } from "./test-server.ts";

// Runs with stored plan artifacts and state, written directly (no runner, no tofu): for tests of
// what the API serves from persisted records, not of how the runner produced them.

/** Organizations acme (admin token, workspace app) and other. */
export async function seededOrganization(server: TestServer) {
  const org = await createOrganizationWithToken(server, "acme", "admin");
  await createOrganizationWithToken(server, "other", "admin");
  const workspace = await createWorkspace(server, org.token, "acme", { name: "app" });
  return { org, workspace };
}

/** Organizations acme (with workspace app) and other; in app, a run whose plan JSON, plan-diff and two uploaded states (serial 1 published, serial 2 pending) are stored. */
export async function seededRun(server: TestServer) {
  const { org, workspace } = await seededOrganization(server);
  return { org, workspace, ...(await seedRunIn(server, org.token, workspace.id)) };
}

/** A new run in the workspace with stored plan artifacts and uploaded states. */
export async function seedRunIn(server: TestServer, token: string, workspaceId: string) {
  const { configurationVersion } = await uploadConfiguration(server, token, workspaceId);
  const run = expectStatus(
    await createRun({
      client: server.v1(token),
      path: { workspace_id: workspaceId },
      body: {
        data: {
          type: "runs",
          relationships: {
            configuration_version: { data: { type: "configuration-versions", id: configurationVersion.id } },
          },
        },
      },
    }),
    201,
  ).data;
  const planJson = Buffer.from(
    JSON.stringify({
      format_version: "1.2",
      terraform_version: "1.12.6",
      resource_changes: [
        {
          address: "x.y",
          mode: "managed",
          type: "x",
          name: "y",
          provider_name: "registry.opentofu.org/hashicorp/x",
          change: {
            actions: ["create"],
            before: null,
            after: { password: "hunter2-secret" },
            after_unknown: {},
            before_sensitive: false,
            after_sensitive: { password: true },
          },
        },
      ],
    }),
  );
  const planDiff = Buffer.from(buildPlanDiff(JSON.parse(planJson.toString()), { runId: run.id }).json);
  await storePlanArtifacts(server, run.id, planJson, planDiff);
  await server.db.knex("runs").where({ id: run.id }).update({ plan_status: "finished" });
  const top = (await server.services.stores.stateVersions.listByWorkspace(workspaceId))[0]?.serial ?? 0;
  await storeState(
    server,
    workspaceId,
    run.id,
    top + 1,
    "finalized",
    Buffer.from(`{"version":4,"serial":${top + 1},"lineage":"l","resources":[]}`),
  );
  const pending = await storeState(
    server,
    workspaceId,
    run.id,
    top + 2,
    "pending",
    Buffer.from(`{"version":4,"serial":${top + 2},"lineage":"l","resources":[{"secret":"pending-state-secret"}]}`),
  );
  return { run, planJson, planDiff, pending };
}

export async function storePlanArtifacts(server: TestServer, runId: string, planJson: Buffer, planDiff: Buffer) {
  const run = (await server.services.stores.runs.getById(runId))!;
  return {
    json: await storePlanJson(server.services, run, planJson),
    diff: await writeRunArtifact(server.services, run, "plan_diff", planDiff),
  };
}

export async function storeState(
  server: TestServer,
  workspaceId: string,
  runId: string | null,
  serial: number,
  status: "pending" | "finalized",
  body: Buffer,
) {
  const stores = server.services.stores;
  const version = await stores.stateVersions.create({
    workspaceId,
    runId,
    serial,
    lineage: "l",
    md5: createHash("md5").update(body).digest("hex"),
    fence: 1,
    outputs: null,
    createdAt: server.services.clock(),
  });
  const artifact = await server.services.artifacts.write(
    { kind: "state", workspaceId, key: `state/${workspaceId}/${version.id}.tfstate` },
    body,
  );
  await stores.stateVersions.markUploaded(version.id, {
    sha256: artifact.sha256,
    sizeBytes: artifact.sizeBytes,
    artifactKey: artifact.key,
    uploadedAt: server.services.clock(),
  });
  if (status === "finalized") await stores.stateVersions.finalize(version.id, server.services.clock());
  return { id: version.id, body };
}

/** A token whose principal holds exactly these permissions on the organization. */
export async function tokenWith(server: TestServer, organizationId: string, permissions: string[]): Promise<string> {
  const stores = server.services.stores;
  const now = server.services.clock();
  const principal = await stores.principals.createPrincipal({
    kind: "api_token",
    organizationId,
    name: permissions.join(","),
    createdAt: now,
  });
  for (const permission of permissions)
    await stores.grants.grant({
      principalId: principal.id,
      scopeKind: "organization",
      scopeId: organizationId,
      permission,
      createdAt: now,
    });
  const secret = `ss1.${randomBytes(32).toString("base64url")}`;
  await stores.tokens.createToken({
    principalId: principal.id,
    organizationId,
    role: null,
    description: null,
    tokenHash: hashTokenSecret(secret),
    createdAt: now,
  });
  return secret;
}
