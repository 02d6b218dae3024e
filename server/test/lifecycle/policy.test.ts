import { suite } from "uvu";
import * as assert from "uvu/assert";
import { approveRun, createPolicyOverride, getRun, getRunPolicyEvaluation } from "../../../client/src/index.ts";
import { databaseText, leakForms } from "../support/database.ts";
import { createOrganizationWithToken, createToken, createVariable, createWorkspace } from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { fixture, readLog, startRun, waitToSettle } from "../support/runs.ts";
import { FIND_NOTHING, FLAG_EVERY_DATA, newPolicySet, policy } from "../support/policies.ts";
import { acmeWorkspace, shiftedClock } from "../support/scenarios.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

async function override(
  server: TestServer,
  token: string,
  runId: string,
  attributes: { result_digest: string; reason: string; duration_seconds?: number },
) {
  return createPolicyOverride({
    client: server.v1(token),
    path: { run_id: runId },
    body: { data: { type: "policy-overrides", attributes } },
  });
}

async function approve(server: TestServer, token: string, runId: string, planDigest: string) {
  return approveRun({
    client: server.v1(token),
    path: { run_id: runId },
    body: { data: { type: "approvals", attributes: { plan_digest: planDigest } } },
  });
}

async function evaluation(server: TestServer, token: string, runId: string) {
  return expectStatus(await getRunPolicyEvaluation({ client: server.v1(token), path: { run_id: runId } }), 200).data
    .attributes;
}

async function auditActions(server: TestServer, runId: string): Promise<string[]> {
  const rows = await server.db
    .knex("audit_events")
    .where({ target_id: runId })
    .orderBy("created_at", "asc")
    .select<Array<{ action: string; data: string }>>("action", "data");
  return rows
    .filter((row) => row.action.startsWith("policy.") || row.action === "run.approved")
    .map(
      (row) =>
        `${row.action}${(JSON.parse(row.data) as { code?: string }).code ? `:${(JSON.parse(row.data) as { code?: string }).code}` : ""}`,
    );
}

const evaluations = suite("policy evaluation with real tofu and real OPA");

testEachServer(
  evaluations,
  "a passing plan with an advisory finding: passed, findings persisted, OPA identity recorded, approvable and applied",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    const set = expectStatus(
      await newPolicySet(server, token, organizationName, "baseline", [
        policy("advice", "advisory", FLAG_EVERY_DATA("stackship.advice", "Heads up")),
        policy("quiet", "hard_mandatory", FIND_NOTHING),
      ]),
      201,
    ).data;
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    const planned = await waitToSettle(server, token, run.id, "awaiting_approval", { phase: "policy" });
    assert.is(planned.attributes.policy_outcome, "passed");
    assert.match(planned.attributes.policy_result_digest ?? "", /^[0-9a-f]{64}$/);

    const result = await evaluation(server, token, run.id);
    assert.is(result.outcome, "passed");
    assert.is(result.result_digest, planned.attributes.policy_result_digest);
    assert.is(result.opa_version, "1.22.4");
    assert.equal(result.policy_set_versions, [
      { policy_set_id: set.id, version: 1, digest: set.attributes.current_version.digest },
    ]);
    assert.equal(result.findings, [
      {
        policy_set_id: set.id,
        policy_set_version: 1,
        policy: "advice",
        enforcement_level: "advisory",
        title: "Heads up",
        message: "terraform_data.greeting is flagged",
        address: "terraform_data.greeting",
      },
    ]);
    assert.is(result.error, null);
    const log = await readLog(server, token, run.id, "policy");
    assert.match(log, "OPA 1.22.4");
    assert.match(log, "Policy outcome: passed");

    expectStatus(await approve(server, token, run.id, planned.attributes.plan_digest!), 202);
    await waitToSettle(server, token, run.id, "applied");
  },
  { runner: true },
);

testEachServer(
  evaluations,
  "a soft failure waits; override refusals each have their code and are audited; an override within bounds lets it be approved and applied",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    expectStatus(
      await newPolicySet(
        server,
        token,
        organizationName,
        "tags",
        [policy("tagged", "soft_mandatory", FLAG_EVERY_DATA("soft", "Needs tags"))],
        { workspace_ids: [workspace.id] },
      ),
      201,
    );
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    const failed = await waitToSettle(server, token, run.id, "policy_soft_failed", { phase: "policy" });
    assert.is(failed.attributes.policy_outcome, "soft_failed");
    const digest = failed.attributes.policy_result_digest!;

    // Not approvable while it waits on the soft failure.
    expectV1Error(await approve(server, token, run.id, failed.attributes.plan_digest!), 409, "RUN_TRANSITION_INVALID");

    const { token: operator } = await createToken(server, token, organizationName, "operator");
    expectV1Error(
      await override(server, operator, run.id, { result_digest: digest, reason: "ship it" }),
      403,
      "POLICY_OVERRIDE_PERMISSION_REQUIRED",
    );
    expectV1Error(
      await override(server, token, run.id, { result_digest: "0".repeat(64), reason: "ship it" }),
      409,
      "POLICY_OVERRIDE_DIGEST_MISMATCH",
    );
    expectV1Error(
      await override(server, token, run.id, { result_digest: digest, reason: "too long", duration_seconds: 86_401 }),
      422,
      "DOCUMENT_INVALID",
    );
    expectV1Error(
      await override(server, token, run.id, { result_digest: digest, reason: "never", duration_seconds: 0 }),
      422,
      "DOCUMENT_INVALID",
    );
    assert.is(
      expectStatus(await getRun({ client: server.v1(token), path: { run_id: run.id } }), 200).data.attributes.status,
      "policy_soft_failed",
    );

    const created = expectStatus(
      await override(server, token, run.id, {
        result_digest: digest,
        reason: "tags follow in the next change",
        duration_seconds: 86_400,
      }),
      201,
    ).data;
    assert.is(created.attributes.result_digest, digest);
    assert.is(
      new Date(created.attributes.expires_at).getTime() - new Date(created.attributes.created_at).getTime(),
      86_400_000,
    );
    const waiting = expectStatus(await getRun({ client: server.v1(token), path: { run_id: run.id } }), 200).data;
    assert.is(waiting.attributes.status, "awaiting_approval");
    assert.is(waiting.attributes.policy_outcome, "soft_failed");

    expectStatus(await approve(server, token, run.id, waiting.attributes.plan_digest!), 202);
    await waitToSettle(server, token, run.id, "applied");

    assert.equal(await auditActions(server, run.id), [
      "policy.override_refused:POLICY_OVERRIDE_PERMISSION_REQUIRED",
      "policy.override_refused:POLICY_OVERRIDE_DIGEST_MISMATCH",
      "policy.overridden",
      "run.approved",
    ]);
    // Too late: the run no longer waits on a soft failure.
    expectV1Error(
      await override(server, token, run.id, { result_digest: digest, reason: "again" }),
      409,
      "POLICY_OVERRIDE_NOT_SOFT_FAILED",
    );
    const result = await evaluation(server, token, run.id);
    assert.is(result.overrides.length, 1);
    assert.is(result.overrides_truncated, false);
  },
  { runner: true },
);

/** A run stopped by a soft-mandatory policy flagging every data resource (policy_soft_failed). */
async function softFailedRun(server: TestServer) {
  const { token, organizationName, workspace } = await acmeWorkspace(server, "app");
  expectStatus(
    await newPolicySet(server, token, organizationName, "tags", [
      policy("tagged", "soft_mandatory", FLAG_EVERY_DATA("soft", "Needs tags")),
    ]),
    201,
  );
  const run = await startRun(server, token, workspace.id, fixture("basic"));
  const failed = await waitToSettle(server, token, run.id, "policy_soft_failed", { phase: "policy" });
  return { token, organizationName, workspace, run, failed };
}

const clock = shiftedClock();
testEachServer(
  evaluations,
  "an expired override does not allow approval; 257 overrides list 256 newest first, truncated, and the audit keeps all",
  async (server) => {
    clock.set(0);
    const { token, run, failed } = await softFailedRun(server);
    const digest = failed.attributes.policy_result_digest!;

    for (let i = 0; i < 257; i += 1) {
      expectStatus(
        await override(server, token, run.id, { result_digest: digest, reason: `override ${i}`, duration_seconds: 60 }),
        201,
      );
    }
    const result = await evaluation(server, token, run.id);
    assert.is(result.overrides.length, 256);
    assert.is(result.overrides_truncated, true);
    assert.is(result.overrides[0].attributes.reason, "override 256");
    const audited = await server.db
      .knex("audit_events")
      .where({ target_id: run.id, action: "policy.overridden" })
      .count({ n: "*" })
      .first();
    assert.is(Number(audited!.n), 257);

    clock.set(61_000);
    const expired = expectV1Error(
      await approve(server, token, run.id, failed.attributes.plan_digest!),
      409,
      "POLICY_OVERRIDE_EXPIRED",
    );
    assert.ok(expired);
    assert.is(
      expectStatus(await getRun({ client: server.v1(token), path: { run_id: run.id } }), 200).data.attributes.status,
      "awaiting_approval",
    );
  },
  { runner: true, clock: clock.now },
);

testEachServer(
  evaluations,
  "the apply re-checks the override: one that expired between approval and apply applies nothing",
  async (server) => {
    clock.set(0);
    const { token, workspace, run, failed } = await softFailedRun(server);
    expectStatus(
      await override(server, token, run.id, {
        result_digest: failed.attributes.policy_result_digest!,
        reason: "briefly",
        duration_seconds: 60,
      }),
      201,
    );

    await server.runner!.stop();
    expectStatus(await approve(server, token, run.id, failed.attributes.plan_digest!), 202);
    clock.set(61_000);
    await server.runner!.start();
    await waitToSettle(server, token, run.id, "errored", { reason: "apply_failed" });
    assert.match(await readLog(server, token, run.id, "apply"), "the override of its soft failure expired");
    assert.is(await server.services.stores.stateVersions.current(workspace.id), undefined);
  },
  { runner: true, clock: clock.now },
);

testEachServer(
  evaluations,
  "a soft failure of a plan without changes, once overridden, ends planned_and_finished (finished_at set) and frees the workspace",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    const ALWAYS = `package always\n\nviolations contains {"title": "Always", "message": "always flagged"} if {\n  true\n}\n`;
    expectStatus(
      await newPolicySet(server, token, organizationName, "always", [policy("always", "soft_mandatory", ALWAYS)], {
        workspace_ids: [workspace.id],
      }),
      201,
    );
    const run = await startRun(server, token, workspace.id, { "main.tf": "terraform {}\n" });
    const failed = await waitToSettle(server, token, run.id, "policy_soft_failed", { phase: "policy" });
    assert.is(failed.attributes.has_changes, false);
    assert.ok(
      await server.db.knex("workspace_locks").where({ workspace_id: workspace.id }).first(),
      "the run holds the workspace while it waits",
    );

    expectStatus(
      await override(server, token, run.id, {
        result_digest: failed.attributes.policy_result_digest!,
        reason: "nothing to apply",
      }),
      201,
    );
    const ended = expectStatus(await getRun({ client: server.v1(token), path: { run_id: run.id } }), 200).data;
    assert.is(ended.attributes.status, "planned_and_finished");
    assert.is(ended.attributes.status_reason, "no_changes");
    assert.ok(ended.attributes.finished_at);
    assert.is(await server.db.knex("workspace_locks").where({ workspace_id: workspace.id }).first(), undefined);
  },
  { runner: true },
);

testEachServer(
  evaluations,
  "a hard failure ends errored (policy_hard_failed), can never be approved or overridden, and frees the workspace",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    expectStatus(
      await newPolicySet(server, token, organizationName, "guard", [
        policy("never", "hard_mandatory", FLAG_EVERY_DATA("hard.guard", "Forbidden")),
        policy("soft", "soft_mandatory", FLAG_EVERY_DATA("soft", "Soft")),
      ]),
      201,
    );
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    const ended = await waitToSettle(server, token, run.id, "errored", {
      reason: "policy_hard_failed",
      phase: "policy",
    });
    assert.is(ended.attributes.policy_outcome, "hard_failed");
    assert.ok(ended.attributes.finished_at);
    const result = await evaluation(server, token, run.id);
    assert.equal(result.findings.map((f) => f.enforcement_level).sort(), ["hard_mandatory", "soft_mandatory"]);

    expectV1Error(await approve(server, token, run.id, ended.attributes.plan_digest!), 409, "RUN_TRANSITION_INVALID");
    expectV1Error(
      await override(server, token, run.id, {
        result_digest: ended.attributes.policy_result_digest!,
        reason: "please",
      }),
      409,
      "POLICY_OVERRIDE_HARD_FAILED",
    );
    assert.equal(await auditActions(server, run.id), ["policy.override_refused:POLICY_OVERRIDE_HARD_FAILED"]);
    assert.is(await server.db.knex("workspace_locks").where({ workspace_id: workspace.id }).first(), undefined);
  },
  { runner: true },
);

testEachServer(
  evaluations,
  "an OPA error blocks: errored with policy_errored, never a pass",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    const broken = `package broken\n\nviolations contains {"title": "t", "message": "m"} if {\n  input.resource_changes[_\n`;
    expectStatus(
      await newPolicySet(server, token, organizationName, "broken", [policy("broken", "advisory", broken)]),
      201,
    );
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    const ended = await waitToSettle(server, token, run.id, "errored", { reason: "policy_errored", phase: "policy" });
    assert.is(ended.attributes.policy_outcome, "errored");
    const result = await evaluation(server, token, run.id);
    assert.match(result.error ?? "", "rego_parse_error");
    assert.match(await readLog(server, token, run.id, "policy"), "never treated as a pass");
    expectV1Error(await approve(server, token, run.id, ended.attributes.plan_digest!), 409, "RUN_TRANSITION_INVALID");
  },
  { runner: true },
);

testEachServer(
  evaluations,
  "a sensitive value interpolated into a policy message never reaches storage",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    const secret = "policy-secret-value-55120";
    await createVariable(server, token, workspace.id, { key: "greeting", value: secret, sensitive: true });
    const leaky = `package leaky\n\nviolations contains {"title": sprintf("title %s", [input.variables.greeting.value]), "message": sprintf("greeting is %s", [input.variables.greeting.value]), "address": sprintf("addr.%s", [input.variables.greeting.value])} if {\n  input.variables.greeting.value != ""\n}\n`;
    expectStatus(
      await newPolicySet(server, token, organizationName, "leaky", [policy("leaky", "advisory", leaky)]),
      201,
    );
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    await waitToSettle(server, token, run.id, "awaiting_approval", { phase: "policy" });
    const result = await evaluation(server, token, run.id);
    assert.is(result.findings.length, 1, "the policy saw the value");
    assert.is(result.findings[0].message, "greeting is [sensitive value]");
    assert.is(result.findings[0].title, "title [sensitive value]");
    assert.is(result.findings[0].address, "addr.[sensitive value]");
    const stored = await databaseText(server);
    for (const form of leakForms(secret))
      assert.not.ok(stored.includes(form), `the secret reached the database as ${form}`);
    assert.not.ok((await readLog(server, token, run.id, "policy")).includes(secret));
  },
  { runner: true },
);

evaluations.run();
