// Workspace variables on /api/v2 (issue 26, part 2): the tfe provider's tfe_variable and go-tfe's
// Variables service. They are the /v1 variables (the same rows, commands, permissions, audit and
// validation): written through one API, read through the other. A sensitive value is write-only:
// the canaries below must never appear in any response of either API, nor in the database.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { databaseText, leakForms } from "../support/database.ts";
import { createToken, createVariable as v1CreateVariable } from "../support/factories.ts";
import type { Tfe, V1 } from "../support/documents.ts";
import { testEachServer } from "../support/test-server.ts";
import {
  CANARY,
  CANARY_UPDATED,
  expectError,
  setUp,
  storedRow,
  V1_CANARY,
  varsDocument,
} from "../support/api-tfe-variables.ts";

// ---------------------------------------------------------------------------------------------
const shared = suite("/api/v2 vars are /v1's variables");

testEachServer(
  shared,
  "a variable created through /api/v2 is /v1's, and one created through /v1 is listed by /api/v2",
  async (server) => {
    const { token, workspace, calls } = await setUp(server);
    const created = await calls.tfe<Tfe["VariableDocument"]>(
      "POST",
      `/workspaces/${workspace.id}/vars`,
      token,
      varsDocument({ key: "region", value: "eu-west-1", category: "terraform", description: "where", hcl: false }),
    );
    assert.is(created.status, 201, created.text);
    const variable = created.json.data;
    assert.is(variable.type, "vars");
    assert.equal(variable.attributes, {
      key: "region",
      value: "eu-west-1",
      description: "where",
      category: "terraform",
      hcl: false,
      sensitive: false,
      "created-at": variable.attributes["created-at"],
    });
    assert.equal(variable.relationships.configurable.data, { type: "workspaces", id: workspace.id });

    const v1List = await calls.v1<V1["VariableListDocument"]>("GET", `/workspaces/${workspace.id}/variables`, token);
    assert.is(v1List.status, 200);
    assert.equal(
      v1List.json.data.map((v) => [
        v.id,
        v.attributes.key,
        v.attributes.value,
        v.attributes.category,
        v.attributes.description,
      ]),
      [[variable.id, "region", "eu-west-1", "terraform", "where"]],
    );
    const audit = await server.db
      .knex("audit_events")
      .where({ target_id: variable.id })
      .select<{ action: string }[]>("action");
    assert.equal(
      audit.map((row) => row.action),
      ["variable.created"],
    );

    const fromV1 = await v1CreateVariable(server, token, workspace.id, {
      key: "TF_LOG",
      value: "info",
      category: "env",
      hcl: false,
    });
    const list = await calls.tfe<Tfe["VariableListDocument"]>("GET", `/workspaces/${workspace.id}/vars`, token);
    assert.is(list.status, 200);
    // By category then key, as /v1 lists them.
    assert.equal(
      list.json.data.map((v) => [v.id, v.attributes.key, v.attributes.category]),
      [
        [fromV1.id, "TF_LOG", "env"],
        [variable.id, "region", "terraform"],
      ],
    );
    assert.is(list.json.meta.pagination["total-count"], 2);
    const read = await calls.tfe<Tfe["VariableDocument"]>(
      "GET",
      `/workspaces/${workspace.id}/vars/${fromV1.id}`,
      token,
    );
    assert.is(read.status, 200);
    assert.is(read.json.data.attributes.value, "info");
  },
);

testEachServer(
  shared,
  "update and delete through /api/v2 change /v1's record, audited; /v1's changes show on /api/v2",
  async (server) => {
    const { token, workspace, calls } = await setUp(server);
    const variable = await v1CreateVariable(server, token, workspace.id, {
      key: "region",
      value: "eu",
      description: "old",
    });
    const patched = await calls.tfe<Tfe["VariableDocument"]>(
      "PATCH",
      `/workspaces/${workspace.id}/vars/${variable.id}`,
      token,
      varsDocument({ key: "region_name", value: "us", description: "new", category: "env", hcl: true }, variable.id),
    );
    assert.is(patched.status, 200, patched.text);
    assert.equal(
      [
        patched.json.data.attributes.key,
        patched.json.data.attributes.value,
        patched.json.data.attributes.description,
        patched.json.data.attributes.category,
        patched.json.data.attributes.hcl,
      ],
      ["region_name", "us", "new", "env", true],
    );
    const stored = await storedRow(server, variable.id);
    assert.equal(
      [stored?.key, stored?.value, stored?.description, stored?.category, stored?.hcl],
      ["region_name", "us", "new", "env", true],
    );

    // Only the attributes sent change.
    const valueOnly = await calls.tfe<Tfe["VariableDocument"]>(
      "PATCH",
      `/workspaces/${workspace.id}/vars/${variable.id}`,
      token,
      varsDocument({ value: "ap" }),
    );
    assert.is(valueOnly.status, 200);
    assert.equal(
      [
        valueOnly.json.data.attributes.key,
        valueOnly.json.data.attributes.value,
        valueOnly.json.data.attributes.description,
      ],
      ["region_name", "ap", "new"],
    );

    const v1Patch = await calls.v1("PATCH", `/workspaces/${workspace.id}/variables/${variable.id}`, token, {
      data: { type: "variables", attributes: { value: "sa" } },
    });
    assert.is(v1Patch.status, 200, v1Patch.text);
    const reread = await calls.tfe<Tfe["VariableDocument"]>(
      "GET",
      `/workspaces/${workspace.id}/vars/${variable.id}`,
      token,
    );
    assert.is(reread.json.data.attributes.value, "sa");

    const deleted = await calls.tfe("DELETE", `/workspaces/${workspace.id}/vars/${variable.id}`, token);
    assert.is(deleted.status, 204);
    assert.is(await storedRow(server, variable.id), undefined);
    const v1List = await calls.v1<V1["VariableListDocument"]>("GET", `/workspaces/${workspace.id}/variables`, token);
    assert.equal(v1List.json.data, []);
    const audit = await server.db
      .knex("audit_events")
      .where({ target_id: variable.id })
      .orderBy("created_at")
      .select<{ action: string }[]>("action");
    assert.equal(audit.map((row) => row.action).sort(), [
      "variable.created",
      "variable.deleted",
      "variable.updated",
      "variable.updated",
      "variable.updated",
    ]);
    expectError(await calls.tfe("DELETE", `/workspaces/${workspace.id}/vars/${variable.id}`, token), 404, "NOT_FOUND");
  },
);

testEachServer(
  shared,
  "pages are exact: page[size] splits the list and a page past the end is empty",
  async (server) => {
    const { token, workspace, calls } = await setUp(server);
    for (const key of ["a", "b", "c"]) await v1CreateVariable(server, token, workspace.id, { key, value: key });
    const first = await calls.tfe<Tfe["VariableListDocument"]>(
      "GET",
      `/workspaces/${workspace.id}/vars?page%5Bsize%5D=2`,
      token,
    );
    assert.equal(
      first.json.data.map((v) => v.attributes.key),
      ["a", "b"],
    );
    assert.is(first.json.meta.pagination["next-page"], 2);
    const second = await calls.tfe<Tfe["VariableListDocument"]>(
      "GET",
      `/workspaces/${workspace.id}/vars?page%5Bsize%5D=2&page%5Bnumber%5D=2`,
      token,
    );
    assert.equal(
      second.json.data.map((v) => v.attributes.key),
      ["c"],
    );
    assert.is(second.json.meta.pagination["next-page"], null);
    const past = await calls.tfe<Tfe["VariableListDocument"]>(
      "GET",
      `/workspaces/${workspace.id}/vars?page%5Bsize%5D=2&page%5Bnumber%5D=3`,
      token,
    );
    assert.equal(past.json.data, []);
  },
);

// ---------------------------------------------------------------------------------------------
const sensitive = suite("sensitive vars are write-only");

testEachServer(
  sensitive,
  "a sensitive value is stored sealed and never appears in any response of either API",
  async (server) => {
    const { token, workspace, calls } = await setUp(server);
    const viewer = (await createToken(server, token, "acme", "viewer")).token;
    const created = await calls.tfe<Tfe["VariableDocument"]>(
      "POST",
      `/workspaces/${workspace.id}/vars`,
      token,
      varsDocument({ key: "db_password", value: CANARY, category: "terraform", sensitive: true }),
    );
    assert.is(created.status, 201, created.text);
    const id = created.json.data.id;
    assert.is(created.json.data.attributes.value, null);
    assert.is(created.json.data.attributes.sensitive, true);
    const stored = await storedRow(server, id);
    assert.is(stored?.sensitive, true);
    assert.is(server.services.keys.secrets.openText(stored!.valueCiphertext!), CANARY, "the value was kept, sealed");

    // A sensitive variable created through /v1 is null on /api/v2 too.
    const fromV1 = await v1CreateVariable(server, token, workspace.id, {
      key: "api_key",
      value: V1_CANARY,
      sensitive: true,
      category: "env",
    });

    // Every read of both APIs, by an admin and a viewer.
    for (const caller of [token, viewer]) {
      const list = await calls.tfe<Tfe["VariableListDocument"]>("GET", `/workspaces/${workspace.id}/vars`, caller);
      assert.is(list.status, 200);
      for (const each of list.json.data) assert.is(each.attributes.value, null);
      assert.is(
        (await calls.tfe<Tfe["VariableDocument"]>("GET", `/workspaces/${workspace.id}/vars/${id}`, caller)).json.data
          .attributes.value,
        null,
      );
      assert.is(
        (await calls.tfe<Tfe["VariableDocument"]>("GET", `/workspaces/${workspace.id}/vars/${fromV1.id}`, caller)).json
          .data.attributes.value,
        null,
      );
      assert.is((await calls.v1("GET", `/workspaces/${workspace.id}/variables`, caller)).status, 200);
    }

    // A new value: sealed again, never shown; other attributes without a value keep it.
    const updated = await calls.tfe<Tfe["VariableDocument"]>(
      "PATCH",
      `/workspaces/${workspace.id}/vars/${id}`,
      token,
      varsDocument({ value: CANARY_UPDATED, sensitive: true }),
    );
    assert.is(updated.status, 200, updated.text);
    assert.is(updated.json.data.attributes.value, null);
    assert.is(server.services.keys.secrets.openText((await storedRow(server, id))!.valueCiphertext!), CANARY_UPDATED);
    const described = await calls.tfe<Tfe["VariableDocument"]>(
      "PATCH",
      `/workspaces/${workspace.id}/vars/${id}`,
      token,
      varsDocument({ description: "the database password" }),
    );
    assert.is(described.status, 200);
    assert.is(described.json.data.attributes.value, null);
    assert.is(server.services.keys.secrets.openText((await storedRow(server, id))!.valueCiphertext!), CANARY_UPDATED);

    // Making it non-sensitive would make it readable: refused, nothing written.
    const revealed = await calls.refused(
      "PATCH",
      `/workspaces/${workspace.id}/vars/${id}`,
      token,
      varsDocument({ sensitive: false }),
    );
    expectError(revealed, 422, "VARIABLE_SENSITIVITY_IRREVERSIBLE");
    assert.is((await storedRow(server, id))?.sensitive, true);
    const v1Revealed = await calls.v1("PATCH", `/workspaces/${workspace.id}/variables/${id}`, token, {
      data: { type: "variables", attributes: { sensitive: false } },
    });
    assert.is(v1Revealed.status, 422);

    calls.assertNoLeak(CANARY, CANARY_UPDATED, V1_CANARY);
    // Not in the database in the clear either (only sealed).
    const text = await databaseText(server);
    for (const secret of [CANARY, CANARY_UPDATED, V1_CANARY])
      for (const form of leakForms(secret)) assert.not.ok(text.includes(form), `the database holds ${form}`);
  },
);

shared.run();
sensitive.run();
