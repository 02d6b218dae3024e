// Workspace variables on /api/v2 (issue 26, part 2), the refused writes: invalid documents, taken
// keys and permissions, each writing nothing. What vars share with /v1 is tfe-variables.test.ts.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  createOrganizationWithToken,
  createToken,
  createVariable as v1CreateVariable,
  createWorkspace,
} from "../support/factories.ts";
import type { Tfe } from "../support/documents.ts";
import { testEachServer } from "../support/test-server.ts";
import { expectError, setUp, storedRow, varsDocument } from "../support/api-tfe-variables.ts";

// ---------------------------------------------------------------------------------------------
const refusals = suite("refused vars writes");

testEachServer(
  refusals,
  "an unknown category, a bad key or a value over 64 KiB is 422 DOCUMENT_INVALID; nothing is written",
  async (server) => {
    const { token, workspace, calls } = await setUp(server);
    const cases: [Record<string, unknown>, string][] = [
      [{ key: "region", value: "eu", category: "policy-set" }, "/data/attributes/category"],
      // Required, as in TFE (go-tfe always sends it).
      [{ key: "region", value: "eu" }, "/data/attributes/category"],
      [{ key: "1region", value: "eu", category: "terraform" }, "/data/attributes/key"],
      [{ key: "re-gion", value: "eu", category: "terraform" }, "/data/attributes/key"],
      [{ key: "k".repeat(129), value: "eu", category: "terraform" }, "/data/attributes/key"],
      [{ key: "region", value: "v".repeat(65537), category: "terraform" }, "/data/attributes/value"],
      [{ key: "region", value: "eu", category: "env", description: "d".repeat(501) }, "/data/attributes/description"],
    ];
    for (const [attributes, pointer] of cases) {
      const answer = await calls.refused("POST", `/workspaces/${workspace.id}/vars`, token, varsDocument(attributes));
      const error = expectError(answer, 422, "DOCUMENT_INVALID");
      assert.is(error.source?.pointer, pointer, JSON.stringify(attributes).slice(0, 80));
    }
    // The limits themselves are accepted: a 128-character key, a 64 KiB value.
    const longest = await calls.tfe<Tfe["VariableDocument"]>(
      "POST",
      `/workspaces/${workspace.id}/vars`,
      token,
      varsDocument({ key: "k".repeat(128), value: "v".repeat(65536), category: "terraform" }),
    );
    assert.is(longest.status, 201, longest.text);
    const variable = longest.json.data.id;
    const badPatch = await calls.refused(
      "PATCH",
      `/workspaces/${workspace.id}/vars/${variable}`,
      token,
      varsDocument({ category: "secret" }),
    );
    expectError(badPatch, 422, "DOCUMENT_INVALID");
    assert.is((await storedRow(server, variable))?.category, "terraform");
  },
);

testEachServer(
  refusals,
  "a key taken in the same category is 409 VARIABLE_KEY_TAKEN, as on /v1; the other category may reuse it",
  async (server) => {
    const { token, workspace, calls } = await setUp(server);
    await v1CreateVariable(server, token, workspace.id, { key: "region", value: "eu" });
    const taken = await calls.refused(
      "POST",
      `/workspaces/${workspace.id}/vars`,
      token,
      varsDocument({ key: "region", value: "us", category: "terraform" }),
    );
    expectError(taken, 409, "VARIABLE_KEY_TAKEN");
    const v1Taken = await calls.v1("POST", `/workspaces/${workspace.id}/variables`, token, {
      data: { type: "variables", attributes: { key: "region", value: "us" } },
    });
    assert.is(v1Taken.status, 409);
    const env = await calls.tfe(
      "POST",
      `/workspaces/${workspace.id}/vars`,
      token,
      varsDocument({ key: "region", value: "us", category: "env" }),
    );
    assert.is(env.status, 201);
    // Renaming onto a taken key is refused the same way.
    const other = await calls.tfe<Tfe["VariableDocument"]>(
      "POST",
      `/workspaces/${workspace.id}/vars`,
      token,
      varsDocument({ key: "zone", value: "a", category: "terraform" }),
    );
    const renamed = await calls.refused(
      "PATCH",
      `/workspaces/${workspace.id}/vars/${other.json.data.id}`,
      token,
      varsDocument({ key: "region" }),
    );
    expectError(renamed, 409, "VARIABLE_KEY_TAKEN");
    assert.is((await storedRow(server, other.json.data.id))?.key, "zone");
  },
);

testEachServer(
  refusals,
  "permissions are /v1's: a viewer may read but not write; another workspace's variable and another organization are 404",
  async (server) => {
    const { token, workspace, calls } = await setUp(server);
    const viewer = (await createToken(server, token, "acme", "viewer")).token;
    const globex = await createOrganizationWithToken(server, "globex", "admin");
    const otherWorkspace = await createWorkspace(server, token, "acme", { name: "storage" });
    const variable = await v1CreateVariable(server, token, workspace.id, { key: "region", value: "eu" });
    const write = varsDocument({ key: "zone", value: "a", category: "terraform" });

    expectError(await calls.refused("POST", `/workspaces/${workspace.id}/vars`, viewer, write), 403, "FORBIDDEN");
    expectError(
      await calls.refused(
        "PATCH",
        `/workspaces/${workspace.id}/vars/${variable.id}`,
        viewer,
        varsDocument({ value: "x" }),
      ),
      403,
      "FORBIDDEN",
    );
    expectError(
      await calls.refused("DELETE", `/workspaces/${workspace.id}/vars/${variable.id}`, viewer),
      403,
      "FORBIDDEN",
    );
    assert.is((await calls.tfe("GET", `/workspaces/${workspace.id}/vars`, viewer)).status, 200);

    expectError(
      await calls.tfe("GET", `/workspaces/${otherWorkspace.id}/vars/${variable.id}`, token),
      404,
      "NOT_FOUND",
    );
    expectError(
      await calls.refused("DELETE", `/workspaces/${otherWorkspace.id}/vars/${variable.id}`, token),
      404,
      "NOT_FOUND",
    );
    expectError(await calls.tfe("GET", `/workspaces/${workspace.id}/vars`, globex.token), 404, "NOT_FOUND");
    expectError(await calls.refused("POST", `/workspaces/${workspace.id}/vars`, globex.token, write), 404, "NOT_FOUND");
    assert.is((await storedRow(server, variable.id))?.value, "eu");
  },
);

refusals.run();
