// Shared by the request tests of server/test/api (requests*.test.ts, authorization*.test.ts): a labelled
// check, "every application table unchanged", the acme/networking set-up, and upload helpers.
import * as assert from "uvu/assert";
import * as sdk from "../../../client/src/index.ts";
import { applicationTables, expectNothingWritten } from "./database.ts";
import { createOrganizationWithToken, createWorkspace as createWorkspaceFixture } from "./factories.ts";
import { expectStatus, type SdkResult } from "./responses.ts";
import type { TestServer } from "./test-server.ts";

/** `act`'s result, after checking that it left every application table's row count as it was. */
export async function allTablesUnchanged<T>(server: TestServer, act: () => Promise<T>): Promise<T> {
  return expectNothingWritten(server, act, await applicationTables(server));
}

/** `check()`, with `label` in front of the message of what it throws. */
export function labelled<T>(label: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    (error as Error).message = `${label}: ${(error as Error).message}`;
    throw error;
  }
}

/** Organization acme (an admin token) with workspace networking. */
export async function setUpAcme(server: TestServer) {
  const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
  const workspace = await createWorkspaceFixture(server, token, organizationName, { name: "networking" });
  return { organizationName, token, workspace };
}

/** Bytes as an upload body: the SDK types it a Blob, and fetch sends a Buffer as it is. */
export function uploadBody(bytes: Buffer): Blob {
  return bytes as unknown as Blob;
}

/** The upload token at the end of a configuration version's upload_url. */
export function tokenOf(uploadUrl: string): string {
  const prefix = "/uploads/configuration-versions/";
  const url = new URL(uploadUrl);
  assert.ok(url.pathname.startsWith(prefix), uploadUrl);
  return url.pathname.slice(prefix.length);
}

/** uploadConfiguration of `bytes` with `uploadToken` and no credentials, checked to write nothing. */
export function refusedUpload(server: TestServer, uploadToken: string, bytes: Buffer): Promise<SdkResult> {
  return allTablesUnchanged(server, () =>
    sdk.uploadConfiguration({ client: server.v1(), path: { upload_token: uploadToken }, body: uploadBody(bytes) }),
  );
}

/** The configuration version as getConfigurationVersion shows it to `token`. */
export async function shownConfiguration(server: TestServer, token: string, configurationVersionId: string) {
  return expectStatus(
    await sdk.getConfigurationVersion({
      client: server.v1(token),
      path: { configuration_version_id: configurationVersionId },
    }),
    200,
  ).data;
}
