// Shared by the TFE run-side suites (tfe-runs.test.ts, tfe-lists.test.ts, tfe-workspace-patch.test.ts):
// a JSON:API client of /api/v2, an organization with a workspace, and configuration versions and
// runs created through the API.
import type { TestServer } from "./test-server.ts";
import { answerAs, type Tfe } from "./documents.ts";
import { createOrganizationWithToken, createWorkspace, makeConfigurationTarball, putUpload } from "./factories.ts";

export const JSON_API = "application/vnd.api+json";

/** A request to /api/v2; `json` is the parsed body when the answer is JSON (read it with `answerAs`). */
export async function api(
  server: TestServer,
  token: string | null,
  method: string,
  path: string,
  body?: string,
  contentType = JSON_API,
): Promise<{ status: number; json: unknown; headers: Headers }> {
  const headers: Record<string, string> = { Accept: JSON_API };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined || method !== "GET") headers["Content-Type"] = contentType;
  const response = await fetch(`${server.baseUrl}/api/v2${path}`, { method, headers, body });
  const text = await response.text();
  const json: unknown = /json/.test(response.headers.get("content-type") ?? "") && text ? JSON.parse(text) : undefined;
  return { status: response.status, json, headers: response.headers };
}

export async function setUp(server: TestServer) {
  const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
  const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
  return { organizationName, token, workspace };
}

export function createVersion(
  server: TestServer,
  token: string,
  workspaceId: string,
  attributes: Record<string, unknown>,
) {
  return api(
    server,
    token,
    "POST",
    `/workspaces/${workspaceId}/configuration-versions`,
    JSON.stringify({ data: { type: "configuration-versions", attributes } }),
  );
}

/** A speculative configuration version with the default tarball uploaded; its id. */
export async function uploadedVersion(server: TestServer, token: string, workspaceId: string): Promise<string> {
  const created = answerAs<Tfe["ConfigurationVersionDocument"]>(
    await createVersion(server, token, workspaceId, { speculative: true }),
  );
  await putUpload(created.json.data.attributes["upload-url"]!, makeConfigurationTarball());
  return created.json.data.id;
}

export function createRun(
  server: TestServer,
  token: string,
  workspaceId: string,
  versionId: string,
  attributes: Record<string, unknown>,
) {
  return api(
    server,
    token,
    "POST",
    "/runs",
    JSON.stringify({
      data: {
        type: "runs",
        attributes,
        relationships: {
          workspace: { data: { type: "workspaces", id: workspaceId } },
          "configuration-version": { data: { type: "configuration-versions", id: versionId } },
        },
      },
    }),
  );
}
