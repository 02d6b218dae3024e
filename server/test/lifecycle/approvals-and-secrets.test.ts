import { suite } from "uvu";
import { readStateBytes } from "../../src/commands/state-versions.ts";
import * as assert from "uvu/assert";
import { approveRun, cancelRun, discardRun, getRun } from "../../../client/src/index.ts";
import { createOrganizationWithToken, createVariable, createWorkspace } from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { fixture, startRun, waitForPlanned, waitForStatus, waitToSettle } from "../support/runs.ts";
import { testEachServer } from "../support/test-server.ts";

/** The parts of a state file these tests read. */
interface StateFile {
  resources: Array<{
    type: string;
    name: string;
    instances: Array<{ attributes: { result?: string; input?: { value: unknown } } }>;
  }>;
}

const approvals = suite("approvals bound to evidence");

const approve = (
  server: Parameters<Parameters<typeof testEachServer>[2]>[0],
  token: string,
  runId: string,
  planDigest: string,
) =>
  approveRun({
    client: server.v1(token),
    path: { run_id: runId },
    body: { data: { type: "approvals", attributes: { plan_digest: planDigest } } },
  });

testEachServer(
  approvals,
  "refuses a wrong plan digest and a changed predecessor state with 409, records nothing, and two racing approvals give one apply",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "bound" });
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    const planned = await waitToSettle(server, token, run.id, "awaiting_approval");

    expectV1Error(await approve(server, token, run.id, "0".repeat(64)), 409, "RUN_PLAN_DIGEST_MISMATCH", {
      pointer: "/data/attributes/plan_digest",
    });
    assert.is(
      await server.db
        .knex("run_reviews")
        .where({ run_id: run.id })
        .count({ n: "*" })
        .first()
        .then((r) => Number(r!.n)),
      0,
    );
    assert.is(
      expectStatus(await getRun({ client: server.v1(token), path: { run_id: run.id } }), 200).data.attributes.status,
      "awaiting_approval",
    );

    // Two approvals at once: exactly one wins, the other is refused, one apply job exists.
    const [a, b] = await Promise.all([
      approve(server, token, run.id, planned.attributes.plan_digest!),
      approve(server, token, run.id, planned.attributes.plan_digest!),
    ]);
    const statuses = [a.response.status, b.response.status].sort();
    assert.equal(statuses, [202, 409]);
    const applyJobs = await server.db
      .knex("run_jobs")
      .where({ run_id: run.id, phase: "apply" })
      .count({ n: "*" })
      .first();
    assert.is(Number(applyJobs!.n), 1);
    await waitForStatus(server, token, run.id, ["applied"]);
  },
  { runner: true },
);

testEachServer(
  approvals,
  "refuses approval after the workspace state changed (409 RUN_PREDECESSOR_STATE_CHANGED)",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "moved" });
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    const planned = await waitForStatus(server, token, run.id, ["awaiting_approval"]);
    // Another state appears after the plan (as if published behind StackShip's back).
    const now = new Date().toISOString();
    await server.db.knex("state_versions").insert({
      id: "sv-0000000000000001",
      workspace_id: workspace.id,
      run_id: null,
      serial: 7,
      lineage: "l",
      md5: "0".repeat(32),
      sha256: "1".repeat(64),
      size_bytes: 10,
      status: "finalized",
      fence: 0,
      artifact_key: "x",
      json_outputs: "[]",
      created_at: now,
      uploaded_at: now,
      published_at: now,
    });
    expectV1Error(
      await approve(server, token, run.id, planned.attributes.plan_digest!),
      409,
      "RUN_PREDECESSOR_STATE_CHANGED",
    );
    assert.is(
      expectStatus(await getRun({ client: server.v1(token), path: { run_id: run.id } }), 200).data.attributes.status,
      "awaiting_approval",
    );
  },
  { runner: true },
);

testEachServer(
  approvals,
  "discard and cancel record the decision and free the workspace for the next run",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "decide" });
    const first = await startRun(server, token, workspace.id, fixture("basic"));
    const second = await startRun(server, token, workspace.id, fixture("basic"));
    await waitForStatus(server, token, first.id, ["awaiting_approval"]);
    // The second run waits: the workspace belongs to the first until it ends.
    assert.is(
      expectStatus(await getRun({ client: server.v1(token), path: { run_id: second.id } }), 200).data.attributes.status,
      "pending",
    );

    const discarded = await discardRun({
      client: server.v1(token),
      path: { run_id: first.id },
      body: { data: { type: "decisions", attributes: { reason: "not today" } } },
    });
    assert.is(expectStatus(discarded, 202).data.attributes.status, "discarded");
    const review = (await server.db
      .knex<{ run_id: string; decision: string; reason: string | null }>("run_reviews")
      .where({ run_id: first.id })
      .first())!;
    assert.is(review.decision, "discarded");
    assert.is(review.reason, "not today");

    await waitForStatus(server, token, second.id, ["awaiting_approval"]);
    const canceled = await cancelRun({ client: server.v1(token), path: { run_id: second.id } });
    assert.is(expectStatus(canceled, 202).data.attributes.status, "canceled");
    expectV1Error(await approve(server, token, second.id, "0".repeat(64)), 409, "RUN_TRANSITION_INVALID");
  },
  { runner: true },
);

const secrets = suite("sensitive values never reach stored logs");

testEachServer(
  secrets,
  "a sensitive workspace variable and a random_password stay out of every stored log",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "secret" });
    const value = "very-secret-value-81723";
    await createVariable(server, token, workspace.id, { key: "db_password", value, sensitive: true });
    // The configuration does not declare the variable sensitive, so tofu itself would print it.
    const files = {
      ...fixture("random"),
      "leak.tf":
        'variable "db_password" { type = string }\nresource "terraform_data" "leak" {\n  input = var.db_password\n}\noutput "leak" {\n  value = terraform_data.leak.output\n}\n',
    };
    const run = await startRun(server, token, workspace.id, files);
    const planned = await waitForPlanned(server, token, run.id);
    expectStatus(await approve(server, token, run.id, planned.attributes.plan_digest!), 202);
    await waitForStatus(server, token, run.id, ["applied"]);

    const stateVersion = await server.services.stores.stateVersions.current(workspace.id);
    const state = JSON.parse((await readStateBytes(server.services, stateVersion!)).toString("utf8")) as StateFile;
    const password = state.resources.find((r) => r.type === "random_password")!.instances[0].attributes.result!;
    assert.is(password.length, 24);
    const leak = state.resources.find((r) => r.type === "terraform_data" && r.name === "leak")!;
    assert.is(leak.instances[0].attributes.input!.value, value, "the sensitive variable reached tofu");

    const logs = (
      await server.db.knex("run_log_chunks").where({ run_id: run.id }).select<Array<{ text: string }>>("text")
    )
      .map((r) => r.text)
      .join("");
    assert.ok(logs.includes("terraform_data.leak"), "the logs are there");
    assert.not.ok(logs.includes(value), "the sensitive variable leaked into the logs");
    assert.not.ok(logs.includes(password), "the random password leaked into the logs");
    assert.ok(logs.includes("[sensitive value]") || logs.includes("(sensitive value)"));
  },
  { runner: true },
);

approvals.run();
secrets.run();
