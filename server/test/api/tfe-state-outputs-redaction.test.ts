// State version outputs (issue 25, part 2): an output's value passes through the same value-based
// redaction as the logs (the workspace's sensitive variable values, the state's sensitive paths, a
// StackShip token's shape), and only a caller with state:read sees values at all; a viewer gets
// names and types. The attack: a sensitive workspace variable passed through a plain output, a
// value from a sensitive path copied out with nonsensitive(), a run token read into an output.
import { randomBytes } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { REDACTED } from "../../src/domain/redaction/index.ts";
import { stateVersionOutputId } from "../../src/api/tfe/presenters.ts";
import { createToken, createVariable } from "../support/factories.ts";
import { seededOrganization, storeState } from "../support/seeded-runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { Tfe } from "../support/documents.ts";

const VARIABLE_SECRET = "outputs-variable-secret-51720";
const STATE_SECRET = "outputs-state-secret-88342";
const RUN_TOKEN = `ssr.${randomBytes(32).toString("base64url")}`;

function stateWithOutputs(serial: number) {
  return {
    version: 4,
    serial,
    lineage: "l",
    outputs: {
      plain: { value: VARIABLE_SECRET, type: "string" },
      ns: { value: `copied ${STATE_SECRET}`, type: "string" },
      nested: {
        value: { list: [VARIABLE_SECRET, "kept"], n: 7 },
        type: ["object", { list: ["list", "string"], n: "number" }],
      },
      cfg: { value: `credentials "api" {\n  token = "${RUN_TOKEN}"\n}\n`, type: "string" },
      hello: { value: "hello", type: "string" },
      hidden: { value: "never-stored", type: "string", sensitive: true },
    },
    resources: [
      {
        mode: "managed",
        type: "terraform_data",
        name: "t",
        instances: [
          {
            attributes: { input: STATE_SECRET, output: STATE_SECRET },
            sensitive_attributes: [[{ type: "get_attr", value: "input" }]],
          },
        ],
      },
    ],
  };
}

async function setUp(server: TestServer) {
  const { org, workspace } = await seededOrganization(server);
  await createVariable(server, org.token, workspace.id, {
    key: "db_password",
    value: VARIABLE_SECRET,
    sensitive: true,
  });
  const state = stateWithOutputs(1);
  const version = await storeState(server, workspace.id, null, 1, "finalized", Buffer.from(JSON.stringify(state)));
  // The outputs as the upload records them (sensitive values dropped at once).
  const outputs = Object.entries(state.outputs).map(([name, o]) => ({
    name,
    sensitive: (o as { sensitive?: boolean }).sensitive === true,
    type: o.type,
    value: (o as { sensitive?: boolean }).sensitive === true ? null : o.value,
  }));
  await server.db
    .knex("state_versions")
    .where({ id: version.id })
    .update({ json_outputs: JSON.stringify(outputs) });
  const callers = {
    viewer: (await createToken(server, org.token, "acme", "viewer")).token,
    operator: (await createToken(server, org.token, "acme", "operator")).token,
    admin: org.token,
  };
  return { workspace, version, callers };
}

async function get<T>(
  server: TestServer,
  token: string,
  path: string,
): Promise<{ status: number; text: string; body: T }> {
  const response = await fetch(`${server.baseUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as T };
}

function assertNoSecret(where: string, text: string) {
  for (const secret of [VARIABLE_SECRET, STATE_SECRET, RUN_TOKEN])
    assert.not.ok(text.includes(secret), `${where} holds ${secret}`);
}

const test = suite("state version outputs: redacted by value, values only with state:read");

testEachServer(
  test,
  "a viewer and an operator never see a sensitive variable through a plain output, a nonsensitive() copy or a run token",
  async (server) => {
    const { workspace, version, callers } = await setUp(server);
    const list = `/api/v2/workspaces/${workspace.id}/current-state-version-outputs`;
    const one = (index: number) => `/api/v2/state-version-outputs/${stateVersionOutputId(version.id, index)}`;

    // The viewer (no state:read): names, types and sensitivity, never a value.
    const viewer = await get<Tfe["StateVersionOutputListDocument"]>(server, callers.viewer, list);
    assert.is(viewer.status, 200, viewer.text);
    assertNoSecret("the viewer's list", viewer.text);
    assert.equal(
      viewer.body.data.map((o) => [o.attributes.name, o.attributes.sensitive, o.attributes.value]),
      ["plain", "ns", "nested", "cfg", "hello", "hidden"].map((name) => [name, name === "hidden", null]),
    );
    assert.equal(viewer.body.data[2].attributes["detailed-type"], [
      "object",
      { list: ["list", "string"], n: "number" },
    ]);
    for (let index = 0; index < 6; index++) {
      const single = await get<Tfe["StateVersionOutputDocument"]>(server, callers.viewer, one(index));
      assert.is(single.status, 200, single.text);
      assert.is(single.body.data.attributes.value, null);
    }

    // The operator and the admin (state:read): the values, redacted by value like the logs.
    for (const caller of ["operator", "admin"] as const) {
      const read = await get<Tfe["StateVersionOutputListDocument"]>(server, callers[caller], list);
      assert.is(read.status, 200, read.text);
      assertNoSecret(`the ${caller}'s list`, read.text);
      const values = Object.fromEntries(read.body.data.map((o) => [o.attributes.name, o.attributes.value]));
      assert.equal(values, {
        plain: REDACTED,
        ns: `copied ${REDACTED}`,
        nested: { list: [REDACTED, "kept"], n: 7 },
        cfg: `credentials "api" {\n  token = "${REDACTED}"\n}\n`,
        hello: "hello",
        hidden: null,
      });
      for (let index = 0; index < 6; index++) {
        const single = await get<Tfe["StateVersionOutputDocument"]>(server, callers[caller], one(index));
        assert.is(single.status, 200, single.text);
        assertNoSecret(`the ${caller}'s output ${index}`, single.text);
        assert.equal(single.body.data.attributes.value, read.body.data[index].attributes.value);
      }
    }
  },
);

test.run();
