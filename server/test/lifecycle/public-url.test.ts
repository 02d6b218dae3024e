import { suite } from "uvu";
import * as assert from "uvu/assert";
import { approveRun, createRun } from "../../../client/src/index.ts";
import { createOrganizationWithToken, createPendingConfiguration, createWorkspace, expectStatus, makeConfigurationTarball, putUpload } from "../support/factories.ts";
import { fixture, readLog, waitForStatus } from "../support/runs.ts";
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
    const upload = await putUpload(`${server.baseUrl}${new URL(pending.attributes.upload_url!).pathname}`, makeConfigurationTarball(fixture("basic")));
    assert.ok(upload.ok, `upload: ${upload.status}`);
    const run = expectStatus(
      await createRun({
        client: server.v1(token),
        path: { workspace_id: workspace.id },
        body: { data: { type: "runs", relationships: { configuration_version: { data: { type: "configuration-versions", id: pending.id } } } } },
      }),
      201,
    ).data;
    const planned = await waitForStatus(server, token, run.id, ["awaiting_approval", "errored"]);
    assert.is(planned.attributes.status, "awaiting_approval", await readLog(server, token, run.id, "plan"));
    expectStatus(
      await approveRun({ client: server.v1(token), path: { run_id: run.id }, body: { data: { type: "approvals", attributes: { plan_digest: planned.attributes.plan_digest! } } } }),
      202,
    );
    const applied = await waitForStatus(server, token, run.id, ["applied", "errored", "needs_recovery"]);
    assert.is(applied.attributes.status, "applied", await readLog(server, token, run.id, "apply"));
    assert.is((await server.services.stores.stateVersions.current(workspace.id))?.runId, run.id);
  },
  { runner: true, config: { publicUrl: "https://stackship.invalid" } },
);

publicUrl.run();
