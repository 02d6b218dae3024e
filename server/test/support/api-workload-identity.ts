// Shared by the workload-identity api and lifecycle tests: federation profile targets,
// a plain HTTP call, a profile and a run to mint for, and a relying party verifying tokens.
import { createRemoteJWKSet, jwtVerify } from "jose";
import * as assert from "uvu/assert";
import type { Run } from "../../src/domain/records.ts";
import { uploadConfiguration } from "./factories.ts";
import type { TestServer } from "./test-server.ts";
import type { V1 } from "./documents.ts";

export const ROLE = "arn:aws:iam::123456789012:role/stackship-plan";
export const GCP = {
  workload_identity_provider: "projects/123/locations/global/workloadIdentityPools/stackship/providers/main",
  service_account: "planner@proj-1.iam.gserviceaccount.com",
};
export const AZURE = {
  client_id: "11111111-2222-3333-4444-555555555555",
  tenant_id: "66666666-7777-8888-9999-000000000000",
};

/** A request to the server with an optional bearer token and JSON:API body; the answer parsed. */
export async function api<T = unknown>(
  server: TestServer,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
) {
  const headers: Record<string, string> = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/vnd.api+json";
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: (text ? JSON.parse(text) : null) as T,
    contentType: response.headers.get("content-type"),
  };
}

/** An AWS profile for plans (the default audience): the one most tests start from. */
export const AWS_PLAN_PROFILE = { name: "aws-plan", provider: "aws", target: { role_arn: ROLE }, phases: ["plan"] };

export const profileBody = (attributes: Record<string, unknown>) => ({
  data: { type: "federation-profiles", attributes },
});

export async function createProfile(
  server: TestServer,
  token: string,
  workspaceId: string,
  attributes: Record<string, unknown>,
) {
  const created = await api<V1["FederationProfileDocument"]>(
    server,
    token,
    "POST",
    `/v1/workspaces/${workspaceId}/federation-profiles`,
    profileBody(attributes),
  );
  assert.is(created.status, 201, JSON.stringify(created.body));
  return created.body.data;
}

export async function newRun(
  server: TestServer,
  token: string,
  workspaceId: string,
  kind: "plan_and_apply" | "speculative",
): Promise<Run> {
  const { configurationVersion } = await uploadConfiguration(server, token, workspaceId);
  const created = await api<V1["RunDocument"]>(server, token, "POST", `/v1/workspaces/${workspaceId}/runs`, {
    data: {
      type: "runs",
      attributes: { kind },
      relationships: {
        configuration_version: { data: { type: "configuration-versions", id: configurationVersion.id } },
      },
    },
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  return (await server.services.stores.runs.getById(created.body.data.id))!;
}

/** A relying party as a cloud does it: discovery over HTTP, then the JWKS it names, then jose. */
export async function relyingParty(server: TestServer) {
  const discovery = await fetch(`${server.baseUrl}/.well-known/openid-configuration`);
  assert.is(discovery.status, 200);
  const config = (await discovery.json()) as { issuer: string; jwks_uri: string };
  return {
    config,
    verify: (token: string, audience: string, currentDate?: Date) =>
      jwtVerify(token, createRemoteJWKSet(new URL(config.jwks_uri)), {
        issuer: config.issuer,
        audience,
        algorithms: ["RS256"],
        currentDate,
      }),
  };
}

/** The code a rejected promise carries ("accepted" when it resolves). */
export async function rejectionCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
  return "accepted";
}
