import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createRun } from "../../../client/src/index.ts";
import {
  createOrganizationWithToken,
  createPendingConfiguration,
  createWorkspace,
  makeConfigurationTarball,
  putUpload,
} from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { fixture, planApproveApply } from "../support/runs.ts";
import { testEachServer } from "../support/test-server.ts";

const publicUrl = suite("STACKSHIP_PUBLIC_URL and the sandbox");

testEachServer(
  publicUrl,
  "with a public URL the sandbox cannot reach, an apply still uploads its state through the loopback channel",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "behind-a-proxy" });
    // Clients get upload URLs on the public URL; this test reaches the server directly.
    const pending = await createPendingConfiguration(server, token, workspace.id);
    assert.match(pending.attributes.upload_url!, /^https:\/\/stackship\.invalid\//);
    const upload = await putUpload(
      `${server.baseUrl}${new URL(pending.attributes.upload_url!).pathname}`,
      makeConfigurationTarball(fixture("basic")),
    );
    assert.ok(upload.ok, `upload: ${upload.status}`);
    const run = expectStatus(
      await createRun({
        client: server.v1(token),
        path: { workspace_id: workspace.id },
        body: {
          data: {
            type: "runs",
            relationships: { configuration_version: { data: { type: "configuration-versions", id: pending.id } } },
          },
        },
      }),
      201,
    ).data;
    await planApproveApply(server, token, run.id);
    assert.is((await server.services.stores.stateVersions.current(workspace.id))?.runId, run.id);
  },
  { runner: true, config: { publicUrl: "https://stackship.invalid" } },
);

publicUrl.run();
