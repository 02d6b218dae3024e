// What the fault suites (test/invariants: the artifact directory's filesystem full, the S3 store
// killed) expect of runs around a fault: a plan whose artifacts cannot be written ends errored and
// publishes nothing, and the same server then plans and applies again (state.ts's expectPublished
// checks that a state landing after the fault is whole). Each suite injects its own fault between
// these steps.
import * as assert from "uvu/assert";
import {
  createOrganizationWithToken,
  createWorkspace,
  makeConfigurationTarball,
  uploadConfiguration,
} from "./factories.ts";
import { createRunOn, fixture, planApproveApply, waitToSettle } from "./runs.ts";
import { expectPublished, type CurrentState } from "./state.ts";
import type { TestServer } from "./test-server.ts";

/** A new organization and workspace with the `basic` fixture uploaded: where a fault suite starts. */
export async function faultWorkspace(
  server: TestServer,
  organization: string,
  workspace: string,
): Promise<{ token: string; workspaceId: string; configurationVersionId: string }> {
  const { token, organizationName } = await createOrganizationWithToken(server, organization);
  const { id: workspaceId } = await createWorkspace(server, token, organizationName, { name: workspace });
  const { configurationVersion } = await uploadConfiguration(
    server,
    token,
    workspaceId,
    makeConfigurationTarball(fixture("basic")),
  );
  return { token, workspaceId, configurationVersionId: configurationVersion.id };
}

/** Starts a run whose plan cannot write its artifacts: it ends errored (plan_failed) with no plan published. */
export async function expectPlanUnpublished(
  server: TestServer,
  token: string,
  workspaceId: string,
  configurationVersionId: string,
): Promise<void> {
  const starved = await createRunOn(server, token, workspaceId, configurationVersionId);
  const failed = await waitToSettle(server, token, starved.id, "errored", { reason: "plan_failed" });
  assert.is(failed.attributes.plan_digest, null, "no plan was published");
}

/** Once the fault is gone: the same server plans, approves and applies; its state is the first, whole. */
export async function expectAppliesAgain(
  server: TestServer,
  token: string,
  workspaceId: string,
  configurationVersionId: string,
): Promise<CurrentState> {
  await planApproveApply(server, token, (await createRunOn(server, token, workspaceId, configurationVersionId)).id);
  return expectPublished(server, token, workspaceId, 1);
}
