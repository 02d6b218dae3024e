import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  createRun,
  getRun,
  getWorkspace,
  listOrganizationRuns,
  listVariables,
  type Run,
} from "../../../client/src/index.ts";
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import { databaseText, leakForms } from "../support/database.ts";
import {
  createOrganizationWithToken,
  createPendingConfiguration,
  createVariable,
  createWorkspace,
  expectedPlatform,
  makeConfigurationTarball,
  pinnedOpenTofuVersion,
  randomId,
  sha256,
  uploadConfiguration,
} from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { InputSnapshotDocument, SnapshotVariable } from "../../src/domain/input-snapshot.ts";
import type { AuditEventRow, InputSnapshotRow, RunRow, SnapshotSecretRow } from "../../src/store/rows.ts";

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** A sensitive variable in a snapshot document: a handle, never the value. */
type SealedVariable = Extract<SnapshotVariable, { sensitive: true }>;
import { runBody, setUp } from "../support/api-runs.ts";

async function snapshotOf(
  server: TestServer,
  runId: string,
): Promise<{ id: string; document: string; input_digest: string }> {
  const row = await server.db
    .knex("runs")
    .join("input_snapshots", "input_snapshots.id", "runs.input_snapshot_id")
    .where("runs.id", runId)
    .first<Pick<InputSnapshotRow, "id" | "document" | "input_digest"> | undefined>(
      "input_snapshots.id",
      "input_snapshots.document",
      "input_snapshots.input_digest",
    );
  assert.ok(row, `no input snapshot for ${runId}`);
  return row;
}

// ---------------------------------------------------------------------------------------------
const create = suite("createRun");

testEachServer(
  create,
  "pins config_digest, input_digest, the exact OpenTofu version, region and platform; pending, both flags false",
  async (server) => {
    const { token, workspace, configurationVersion, bytes, digest, organizationId } = await setUp(server);
    assert.is(digest, sha256(bytes));
    assert.is(configurationVersion.attributes.config_digest, digest);
    assert.is(configurationVersion.attributes.size_bytes, bytes.length);
    assert.is(configurationVersion.attributes.upload_url, null);

    const result = await createRun({
      client: server.v1(token),
      path: { workspace_id: workspace.id },
      body: runBody({ message: "first" }),
    });
    const run = expectStatus(result, 201).data;
    assert.ok(v1Validators.createRunResponse201(result.data), JSON.stringify(v1Validators.createRunResponse201.errors));
    assert.match(run.id, /^run-[0-9a-z]{16}$/);
    assert.is(run.attributes.config_digest, sha256(bytes));
    assert.match(run.attributes.input_digest, SHA256_HEX);
    assert.is(run.attributes.opentofu_version, pinnedOpenTofuVersion());
    assert.is(run.attributes.execution_region, "local");
    assert.is(run.attributes.platform, expectedPlatform());
    assert.is(run.attributes.status, "pending");
    assert.is(run.attributes.kind, "plan_and_apply");
    assert.is(run.attributes.source, "api");
    assert.is(run.attributes.message, "first");
    assert.is(run.attributes.auto_apply, false);
    assert.is(run.attributes.is_destroy, false);
    assert.equal(run.relationships.configuration_version.data, {
      type: "configuration-versions",
      id: configurationVersion.id,
    });
    assert.equal(run.relationships.workspace.data, { type: "workspaces", id: workspace.id });
    assert.equal(run.relationships.organization.data, { type: "organizations", id: organizationId });

    // The row says the same, including the flags the database refuses to be anything but false.
    const row = (await server.db.knex("runs").where({ id: run.id }).first()) as RunRow;
    assert.is(row.config_digest, sha256(bytes));
    assert.is(row.input_digest, run.attributes.input_digest);
    assert.is(row.opentofu_version, pinnedOpenTofuVersion());
    assert.is(Boolean(row.auto_apply), false);
    assert.is(Boolean(row.is_destroy), false);
    // The input digest is the SHA-256 of the stored canonical snapshot document.
    const snapshot = await snapshotOf(server, run.id);
    assert.is(snapshot.input_digest, run.attributes.input_digest);
    assert.is(sha256(snapshot.document), run.attributes.input_digest);
    const document = JSON.parse(snapshot.document) as InputSnapshotDocument;
    assert.is(document.opentofu_version, pinnedOpenTofuVersion());
    // The creation is audited with the pinned digests.
    const audit = (await server.db.knex("audit_events").where({ target_id: run.id })) as AuditEventRow[];
    assert.is(audit.length, 1);
    assert.is(audit[0].action, "run.created");
    const data = JSON.parse(audit[0].data) as { config_digest: string; input_digest: string };
    assert.is(data.config_digest, sha256(bytes));
    assert.is(data.input_digest, run.attributes.input_digest);
    assert.is(document.platform, expectedPlatform());
    assert.is(document.execution_region, "local");
  },
);

testEachServer(
  create,
  "accepts auto_apply false and is_destroy false spelled out, and a speculative kind",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const explicit = expectStatus(
      await createRun({
        client: server.v1(token),
        path: { workspace_id: workspace.id },
        body: runBody({ auto_apply: false, is_destroy: false }),
      }),
      201,
    ).data;
    assert.is(explicit.attributes.auto_apply, false);
    assert.is(explicit.attributes.is_destroy, false);
    const speculative = expectStatus(
      await createRun({
        client: server.v1(token),
        path: { workspace_id: workspace.id },
        body: runBody({ kind: "speculative" }),
      }),
      201,
    ).data;
    assert.is(speculative.attributes.kind, "speculative");
    assert.is(speculative.attributes.status, "pending");
  },
);

testEachServer(
  create,
  "uses the newest uploaded configuration when no configuration_version relationship is given",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const newer = await uploadConfiguration(
      server,
      token,
      workspace.id,
      makeConfigurationTarball({ "main.tf": 'resource "terraform_data" "y" {}\n' }),
    );
    // A later pending one must not be picked.
    await createPendingConfiguration(server, token, workspace.id);
    const run = expectStatus(
      await createRun({ client: server.v1(token), path: { workspace_id: workspace.id }, body: runBody() }),
      201,
    ).data;
    assert.is(run.relationships.configuration_version.data.id, newer.configurationVersion.id);
    assert.is(run.attributes.config_digest, newer.digest);
  },
);

testEachServer(
  create,
  "pins an input_digest that depends on the variables, not on the order they were created in",
  async (server) => {
    const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
    const variables = [
      { key: "region", value: "eu-west-1" },
      { key: "instance_count", value: "3", hcl: true },
      { key: "TF_LOG", value: "INFO", category: "env" as const },
      { key: "zone", value: "b", description: "descriptions are not inputs" },
    ];
    const first = await createWorkspace(server, token, organizationName, { name: "first" });
    const second = await createWorkspace(server, token, organizationName, { name: "second" });
    for (const variable of variables) await createVariable(server, token, first.id, variable);
    for (const variable of [...variables].reverse()) await createVariable(server, token, second.id, variable);
    await uploadConfiguration(server, token, first.id);
    await uploadConfiguration(server, token, second.id);

    const runA1 = expectStatus(
      await createRun({ client: server.v1(token), path: { workspace_id: first.id }, body: runBody() }),
      201,
    ).data;
    const runA2 = expectStatus(
      await createRun({
        client: server.v1(token),
        path: { workspace_id: first.id },
        body: runBody({ message: "again" }),
      }),
      201,
    ).data;
    const runB = expectStatus(
      await createRun({ client: server.v1(token), path: { workspace_id: second.id }, body: runBody() }),
      201,
    ).data;

    // Same workspace, same variables: the same digest.
    assert.match(runA1.attributes.input_digest, SHA256_HEX);
    assert.is(runA2.attributes.input_digest, runA1.attributes.input_digest);

    // NOTE: the snapshot document names its workspace, so digests of two workspaces differ by
    // design; creation order must not matter for anything else. B's document with A's workspace id
    // is byte-for-byte A's document, so it hashes to A's digest.
    const snapshotA = await snapshotOf(server, runA1.id);
    const snapshotB = await snapshotOf(server, runB.id);
    assert.is(sha256(snapshotB.document), runB.attributes.input_digest);
    const bAsA = snapshotB.document.split(second.id).join(first.id);
    assert.is(bAsA, snapshotA.document);
    assert.is(sha256(bAsA), runA1.attributes.input_digest);
    const documentA = JSON.parse(snapshotA.document) as InputSnapshotDocument;
    assert.equal(
      documentA.variables.map((v: { category: string; key: string }) => `${v.category}/${v.key}`),
      ["env/TF_LOG", "terraform/instance_count", "terraform/region", "terraform/zone"],
    );

    // A changed input changes the digest.
    await createVariable(server, token, first.id, { key: "extra", value: "1" });
    const runA3 = expectStatus(
      await createRun({ client: server.v1(token), path: { workspace_id: first.id }, body: runBody() }),
      201,
    ).data;
    assert.is.not(runA3.attributes.input_digest, runA1.attributes.input_digest);
  },
);

testEachServer(
  create,
  "never lets a sensitive value reach the database in clear, any API response, or a speculative snapshot",
  async (server) => {
    const SECRET = "hunter2-Sup3rS3cret-value-7f3a";
    const { organizationName, token, workspace } = await setUp(server);
    const responses: unknown[] = [];
    responses.push(
      await createVariable(server, token, workspace.id, { key: "db_password", value: SECRET, sensitive: true }),
    );
    responses.push(
      await createVariable(server, token, workspace.id, {
        key: "AWS_SECRET_ACCESS_KEY",
        value: `${SECRET}-env`,
        sensitive: true,
        category: "env",
      }),
    );
    responses.push(await createVariable(server, token, workspace.id, { key: "region", value: "eu-west-1" }));

    const full = await createRun({ client: server.v1(token), path: { workspace_id: workspace.id }, body: runBody() });
    const run = expectStatus(full, 201).data;
    responses.push(full.data);
    const secretsAfterFull = await server.db.knex("snapshot_secrets").select("handle", "ciphertext");
    const spec = await createRun({
      client: server.v1(token),
      path: { workspace_id: workspace.id },
      body: runBody({ kind: "speculative" }),
    });
    const speculative = expectStatus(spec, 201).data;
    responses.push(spec.data);
    responses.push((await getRun({ client: server.v1(token), path: { run_id: run.id } })).data);
    responses.push((await getRun({ client: server.v1(token), path: { run_id: speculative.id } })).data);
    responses.push((await listVariables({ client: server.v1(token), path: { workspace_id: workspace.id } })).data);
    responses.push((await getWorkspace({ client: server.v1(token), path: { workspace_id: workspace.id } })).data);
    responses.push(
      (await listOrganizationRuns({ client: server.v1(token), path: { organization_name: organizationName } })).data,
    );

    // plan_and_apply: each sensitive variable is a handle to a sealed copy of its value.
    const fullDocument = JSON.parse((await snapshotOf(server, run.id)).document) as InputSnapshotDocument;
    const dbPassword = fullDocument.variables.find((v) => v.key === "db_password") as SealedVariable | undefined;
    assert.ok(dbPassword, "the plan_and_apply snapshot lacks the sensitive variable");
    assert.is(dbPassword.sensitive, true);
    assert.not.ok("value" in dbPassword);
    assert.match(dbPassword.value_handle, /^sec-[0-9a-z]{16}$/);
    const envSecret = fullDocument.variables.find((v) => v.key === "AWS_SECRET_ACCESS_KEY") as SealedVariable;
    assert.match(envSecret.value_handle, /^sec-[0-9a-z]{16}$/);
    assert.is.not(envSecret.value_handle, dbPassword.value_handle);
    const sealed = (await server.db.knex("snapshot_secrets").where({ handle: dbPassword.value_handle }).first()) as
      SnapshotSecretRow | undefined;
    assert.ok(sealed, "the handle has no snapshot secret");
    assert.is(server.services.keys.secrets.openText(sealed.ciphertext), SECRET);
    assert.equal(
      fullDocument.variables.find((v: { key: string }) => v.key === "region"),
      { key: "region", category: "terraform", hcl: false, sensitive: false, value: "eu-west-1" },
    );

    // speculative: sensitive variables are absent altogether, and no secret was sealed for it.
    const speculativeText = (await snapshotOf(server, speculative.id)).document;
    const speculativeDocument = JSON.parse(speculativeText) as InputSnapshotDocument;
    assert.equal(
      speculativeDocument.variables.map((v: { key: string }) => v.key),
      ["region"],
    );
    assert.not.ok(speculativeText.includes("db_password"));
    assert.not.ok(speculativeText.includes("value_handle"));
    assert.equal(await server.db.knex("snapshot_secrets").select("handle", "ciphertext"), secretsAfterFull);

    // Nowhere in clear: not in any table, not in any response.
    const stored = await databaseText(server);
    const answered = JSON.stringify(responses);
    for (const form of [...leakForms(SECRET), ...leakForms(`${SECRET}-env`)]) {
      assert.not.ok(stored.includes(form), `the database holds the sensitive value (as ${form})`);
      assert.not.ok(answered.includes(form), `an API response carries the sensitive value (as ${form})`);
    }
  },
);

// ---------------------------------------------------------------------------------------------
const get = suite("getRun");

testEachServer(get, "returns the same document createRun returned", async (server) => {
  const { token, workspace } = await setUp(server);
  const created = expectStatus(
    await createRun({
      client: server.v1(token),
      path: { workspace_id: workspace.id },
      body: runBody({ message: "same" }),
    }),
    201,
  ).data;
  const result = await getRun({ client: server.v1(token), path: { run_id: created.id } });
  const shown: Run = expectStatus(result, 200).data;
  assert.ok(v1Validators.getRunResponse200(result.data), JSON.stringify(v1Validators.getRunResponse200.errors));
  assert.equal(shown, created);
});

testEachServer(get, "fails 404 NOT_FOUND for a well-formed run id that does not exist", async (server) => {
  const { token } = await setUp(server);
  expectV1Error(await getRun({ client: server.v1(token), path: { run_id: randomId("run") } }), 404, "NOT_FOUND");
});

testEachServer(get, "fails 400 REQUEST_INVALID with source.parameter run_id for a malformed run id", async (server) => {
  const { token } = await setUp(server);
  for (const runId of ["run-SHORT", "ws-0123456789abcdef", "run-0123456789abcdeF", "run-0123456789abcdef0"]) {
    expectV1Error(await getRun({ client: server.v1(token), path: { run_id: runId } }), 400, "REQUEST_INVALID", {
      parameter: "run_id",
    });
  }
});

create.run();
get.run();
