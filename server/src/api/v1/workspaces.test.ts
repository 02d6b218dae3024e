import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  createRun,
  createWorkspace as createWorkspaceSdk,
  deleteVariable,
  listVariables,
  updateVariable,
} from "../../../../client/src/index.ts";
import {
  createOrganizationWithToken,
  createVariable,
  createWorkspace,
  uploadConfiguration,
} from "../../../test/support/factories.ts";
import { expectStatus, expectV1Error } from "../../../test/support/responses.ts";
import { testEachServer } from "../../../test/support/test-server.ts";
import type { InputSnapshotRow, WorkspaceVariableRow } from "../../store/rows.ts";

const variables = suite("updateVariable / deleteVariable");

testEachServer(
  variables,
  "updates key, value and description, and keeps a sensitive value sealed when not sent",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName);
    const client = server.v1(token);
    const plain = await createVariable(server, token, workspace.id, { key: "region", value: "eu" });
    const secret = await createVariable(server, token, workspace.id, {
      key: "password",
      value: "s3cr3t-value",
      sensitive: true,
    });

    const renamed = expectStatus(
      await updateVariable({
        client,
        path: { workspace_id: workspace.id, variable_id: plain.id },
        body: { data: { type: "variables", attributes: { key: "aws_region", value: "us" } } },
      }),
      200,
    );
    assert.is(renamed.data.attributes.key, "aws_region");
    assert.is(renamed.data.attributes.value, "us");

    const described = expectStatus(
      await updateVariable({
        client,
        path: { workspace_id: workspace.id, variable_id: secret.id },
        body: { data: { type: "variables", attributes: { description: "db" } } },
      }),
      200,
    );
    assert.is(described.data.attributes.value, null);
    assert.is(described.data.attributes.description, "db");
    const stored = await server.services.stores.variables.getById(secret.id);
    assert.ok(stored?.sensitive);
    assert.is(server.services.keys.secrets.openText(stored.valueCiphertext), "s3cr3t-value");
  },
);

testEachServer(
  variables,
  "fails 422 VARIABLE_SENSITIVITY_IRREVERSIBLE when a sensitive variable is made non-sensitive",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName);
    const secret = await createVariable(server, token, workspace.id, {
      key: "password",
      value: "s3cr3t-value",
      sensitive: true,
    });
    const result = await updateVariable({
      client: server.v1(token),
      path: { workspace_id: workspace.id, variable_id: secret.id },
      body: { data: { type: "variables", attributes: { sensitive: false } } },
    });
    expectV1Error(result, 422, "VARIABLE_SENSITIVITY_IRREVERSIBLE", { pointer: "/data/attributes/sensitive" });
    assert.ok((await server.services.stores.variables.getById(secret.id))?.sensitive);
  },
);

testEachServer(variables, "making a plain variable sensitive seals its current value", async (server) => {
  const { token, organizationName } = await createOrganizationWithToken(server, "acme");
  const workspace = await createWorkspace(server, token, organizationName);
  const plain = await createVariable(server, token, workspace.id, { key: "api_key", value: "abc-123-def" });
  const result = expectStatus(
    await updateVariable({
      client: server.v1(token),
      path: { workspace_id: workspace.id, variable_id: plain.id },
      body: { data: { type: "variables", attributes: { sensitive: true } } },
    }),
    200,
  );
  assert.is(result.data.attributes.value, null);
  const row = await server.db.knex<WorkspaceVariableRow>("workspace_variables").where({ id: plain.id }).first();
  assert.is(row?.value, null);
  assert.not.match(row?.value_ciphertext ?? "", "abc-123-def");
});

testEachServer(variables, "deletes a variable; runs created before keep it in their snapshot", async (server) => {
  const { token, organizationName } = await createOrganizationWithToken(server, "acme");
  const workspace = await createWorkspace(server, token, organizationName);
  await uploadConfiguration(server, token, workspace.id);
  const client = server.v1(token);
  const variable = await createVariable(server, token, workspace.id, { key: "region", value: "eu" });
  const before = expectStatus(
    await createRun({ client, path: { workspace_id: workspace.id }, body: { data: { type: "runs" } } }),
    201,
  );

  const deleted = await deleteVariable({ client, path: { workspace_id: workspace.id, variable_id: variable.id } });
  assert.is(deleted.response.status, 204);
  const listed = expectStatus(await listVariables({ client, path: { workspace_id: workspace.id } }), 200);
  assert.equal(listed.data, []);
  const snapshot = await server.db
    .knex<InputSnapshotRow>("input_snapshots")
    .where({ id: (await server.services.stores.runs.getById(before.data.id))!.inputSnapshotId })
    .first();
  assert.match(snapshot?.document ?? "", '"key":"region"');
  const again = await deleteVariable({ client, path: { workspace_id: workspace.id, variable_id: variable.id } });
  expectV1Error(again, 404, "NOT_FOUND");
});

testEachServer(
  variables,
  "fails 404 for a variable of another workspace, and 404 for another organization's token",
  async (server) => {
    const acme = await createOrganizationWithToken(server, "acme");
    const other = await createOrganizationWithToken(server, "other");
    const first = await createWorkspace(server, acme.token, "acme", { name: "first" });
    const second = await createWorkspace(server, acme.token, "acme", { name: "second" });
    const variable = await createVariable(server, acme.token, first.id, { key: "region", value: "eu" });
    const body = { data: { type: "variables" as const, attributes: { value: "x" } } };
    const path = (workspace: { id: string }) => ({ workspace_id: workspace.id, variable_id: variable.id });
    // Through another workspace of its organization, and from another organization: not found.
    expectV1Error(await updateVariable({ client: server.v1(acme.token), path: path(second), body }), 404, "NOT_FOUND");
    expectV1Error(await updateVariable({ client: server.v1(other.token), path: path(first), body }), 404, "NOT_FOUND");
    expectV1Error(await deleteVariable({ client: server.v1(other.token), path: path(first) }), 404, "NOT_FOUND");
  },
);

variables.run();

const approvalWindow = suite("createWorkspace approval_ttl_seconds");

testEachServer(
  approvalWindow,
  "accepts 60 and 604800 seconds, refuses 59 and 604801 with 422 DOCUMENT_INVALID, defaults to 86400",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const client = server.v1(token);
    const create = (name: string, approval_ttl_seconds?: number) =>
      createWorkspaceSdk({
        client,
        path: { organization_name: organizationName },
        body: { data: { type: "workspaces", attributes: { name, approval_ttl_seconds } } },
      });
    assert.is(expectStatus(await create("default"), 201).data.attributes.approval_ttl_seconds, 86_400);
    assert.is(expectStatus(await create("min", 60), 201).data.attributes.approval_ttl_seconds, 60);
    assert.is(expectStatus(await create("max", 604_800), 201).data.attributes.approval_ttl_seconds, 604_800);
    expectV1Error(await create("below", 59), 422, "DOCUMENT_INVALID", {
      pointer: "/data/attributes/approval_ttl_seconds",
    });
    expectV1Error(await create("above", 604_801), 422, "DOCUMENT_INVALID", {
      pointer: "/data/attributes/approval_ttl_seconds",
    });
  },
);

approvalWindow.run();
