// Shared by runs.test.ts and runs-refusals.test.ts: an organization with an uploaded configuration, a
// createRun document, and a createRun checked to write nothing.
import { createRun } from "../../../client/src/index.ts";
import { expectNothingWritten } from "./database.ts";
import { createOrganizationWithToken, createWorkspace, uploadConfiguration } from "./factories.ts";
import type { TestServer } from "./test-server.ts";

/** An organization with an admin token, a workspace and one uploaded configuration. */
export async function setUp(server: TestServer, name = "acme") {
  const { organizationName, organizationId, token } = await createOrganizationWithToken(server, name, "admin");
  const workspace = await createWorkspace(server, token, organizationName);
  const upload = await uploadConfiguration(server, token, workspace.id);
  return { organizationName, organizationId, token, workspace, ...upload };
}

/** A createRun document with `attributes`, naming the configuration version when one is given. */
export function runBody(attributes: Record<string, unknown> = {}, configurationVersionId?: string) {
  return {
    data: {
      type: "runs" as const,
      attributes,
      ...(configurationVersionId
        ? {
            relationships: {
              configuration_version: { data: { type: "configuration-versions" as const, id: configurationVersionId } },
            },
          }
        : {}),
    },
  };
}

/** createRun in `workspaceId` with `attributes` (and configuration version), checked to write nothing. */
export function refusedRun(
  server: TestServer,
  token: string,
  workspaceId: string,
  attributes: Record<string, unknown> = {},
  configurationVersionId?: string,
) {
  return expectNothingWritten(server, () =>
    createRun({
      client: server.v1(token),
      path: { workspace_id: workspaceId },
      body: runBody(attributes, configurationVersionId),
    }),
  );
}
