import { suite } from "uvu";
import * as assert from "uvu/assert";
import * as sdk from "../../../client/src/index.ts";
import { operations } from "../../../generated/v1/operations.gen.ts";
import { expectV1Error, type SdkResult } from "../support/responses.ts";
import { allTablesUnchanged, labelled, setUpAcme, uploadBody } from "../support/api-requests.ts";
import { testEachServer } from "../support/test-server.ts";
import type { V1 } from "../support/documents.ts";

type BodyCall = (client: sdk.Client, extra: Record<string, unknown>) => Promise<SdkResult>;
type Operation = (options: Record<string, unknown>) => Promise<SdkResult>;

/** Every v1 operation with a JSON request body, with a valid body, so `extra` can replace or break it. */
function jsonBodyOperations(organizationName: string, workspaceId: string): Array<[string, BodyCall, unknown]> {
  const org = { organization_name: organizationName };
  const ws = { workspace_id: workspaceId };
  const operations: Array<[string, unknown, object | undefined, unknown]> = [
    [
      "createOrganization",
      sdk.createOrganization,
      undefined,
      { data: { type: "organizations", attributes: { name: "other" } } },
    ],
    [
      "createOrganizationToken",
      sdk.createOrganizationToken,
      org,
      { data: { type: "tokens", attributes: { role: "viewer" } } },
    ],
    ["createProject", sdk.createProject, org, { data: { type: "projects", attributes: { name: "p" } } }],
    ["createWorkspace", sdk.createWorkspace, org, { data: { type: "workspaces", attributes: { name: "w" } } }],
    ["createVariable", sdk.createVariable, ws, { data: { type: "variables", attributes: { key: "k", value: "v" } } }],
    ["createConfigurationVersion", sdk.createConfigurationVersion, ws, { data: { type: "configuration-versions" } }],
    ["createRun", sdk.createRun, ws, { data: { type: "runs" } }],
  ];
  return operations.map(([operationId, operation, path, body]) => [
    operationId,
    (client, extra) => (operation as Operation)({ client, ...(path && { path }), body, ...extra }),
    body,
  ]);
}

/** The statuses the spec declares for an operation. */
function declaredStatuses(operationId: string): number[] {
  const operation = operations.find((op) => op.operationId === operationId);
  if (!operation) throw new Error(`no operation ${operationId}`);
  return Object.keys(operation.responses).map(Number);
}

// ---------------------------------------------------------------------------------------------
const documents = suite("request documents");

testEachServer(
  documents,
  "fails 400 REQUEST_INVALID for a malformed JSON body on every operation that takes one, and writes nothing",
  async (server) => {
    const { organizationName, workspace } = await setUpAcme(server);
    for (const [operationId, call] of jsonBodyOperations(organizationName, workspace.id)) {
      for (const raw of ['{"data": {', "{'data': 1}", "not json", '{"data":{}} trailing']) {
        const result = await allTablesUnchanged(server, () => call(server.admin, { bodySerializer: () => raw }));
        labelled(`${operationId} with ${raw}`, () => expectV1Error(result, 400, "REQUEST_INVALID"));
      }
    }
  },
);

testEachServer(
  documents,
  "fails 422 DOCUMENT_INVALID for a missing body (and for null, an array or a string), and writes nothing",
  async (server) => {
    const { organizationName, workspace } = await setUpAcme(server);
    for (const [operationId, call] of jsonBodyOperations(organizationName, workspace.id)) {
      const missing = await allTablesUnchanged(server, () => call(server.admin, { body: undefined }));
      labelled(`${operationId} without a body`, () => expectV1Error(missing, 422, "DOCUMENT_INVALID", { pointer: "" }));
      for (const raw of ["null", "[]", '"runs"', "{}"]) {
        const result = await allTablesUnchanged(server, () => call(server.admin, { bodySerializer: () => raw }));
        labelled(`${operationId} with ${raw}`, () => expectV1Error(result, 422, "DOCUMENT_INVALID"));
      }
    }
  },
);

testEachServer(
  documents,
  "fails 422 DOCUMENT_INVALID at /data/type for a wrong data.type, and writes nothing",
  async (server) => {
    const { organizationName, workspace } = await setUpAcme(server);
    for (const [operationId, call, valid] of jsonBodyOperations(organizationName, workspace.id)) {
      const wrong = JSON.parse(JSON.stringify(valid)) as { data: { type: string } };
      wrong.data.type = wrong.data.type === "runs" ? "run" : "runs";
      const result = await allTablesUnchanged(server, () => call(server.admin, { body: wrong }));
      labelled(operationId, () => expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer: "/data/type" }));
    }
  },
);

testEachServer(
  documents,
  "fails 422 DOCUMENT_INVALID at the member for unknown top-level and data members, and writes nothing",
  async (server) => {
    const { workspace } = await setUpAcme(server);
    const topLevel = await allTablesUnchanged(server, () =>
      sdk.createRun({
        client: server.admin,
        path: { workspace_id: workspace.id },
        body: { data: { type: "runs" }, included: [] } as unknown as V1["RunCreateDocument"],
      }),
    );
    expectV1Error(topLevel, 422, "DOCUMENT_INVALID", { pointer: "/included" });
    const inData = await allTablesUnchanged(server, () =>
      sdk.createRun({
        client: server.admin,
        path: { workspace_id: workspace.id },
        body: { data: { type: "runs", id: "run-0123456789abcdef" } } as unknown as V1["RunCreateDocument"],
      }),
    );
    expectV1Error(inData, 422, "DOCUMENT_INVALID", { pointer: "/data/id" });
  },
);

testEachServer(
  documents,
  "refuses a JSON body over 1 MiB with a 4xx JSON:API error, and writes nothing",
  async (server) => {
    const { workspace } = await setUpAcme(server);
    const huge = JSON.stringify({ data: { type: "runs", attributes: { message: "x".repeat(1024 * 1024) } } });
    const result = await allTablesUnchanged(server, () =>
      sdk.createRun({
        client: server.admin,
        path: { workspace_id: workspace.id },
        body: {} as V1["RunCreateDocument"],
        bodySerializer: () => huge,
      }),
    );
    assert.ok([400, 413].includes(result.response.status), String(result.response.status));
    expectV1Error(result, result.response.status, "REQUEST_INVALID");
  },
);

testEachServer(
  documents,
  "answers every error status with one the spec declares for that operation",
  async (server) => {
    const { organizationName, workspace } = await setUpAcme(server);
    const undeclared: string[] = [];
    for (const [operationId, call] of jsonBodyOperations(organizationName, workspace.id)) {
      for (const [label, extra] of [
        ["malformed JSON", { bodySerializer: () => "{" }],
        ["missing body", { body: undefined }],
        ["no token", { client: server.v1() }],
      ] as const) {
        const result = await allTablesUnchanged(server, () =>
          call((extra as { client?: sdk.Client }).client ?? server.admin, extra),
        );
        if (!declaredStatuses(operationId).includes(result.response.status))
          undeclared.push(`${operationId} answers ${result.response.status} to ${label}`);
      }
    }
    const badToken = await sdk.uploadConfiguration({
      client: server.v1(),
      path: { upload_token: "not-a-token" },
      body: uploadBody(Buffer.from("x")),
    });
    if (!declaredStatuses("uploadConfiguration").includes(badToken.response.status))
      undeclared.push(`uploadConfiguration answers ${badToken.response.status} to a malformed upload token`);
    assert.equal(undeclared, []);
  },
);

// ---------------------------------------------------------------------------------------------
const routing = suite("routing");

testEachServer(routing, "fails 404 NOT_FOUND with a JSON:API error document for an unknown route", async (server) => {
  await setUpAcme(server);
  for (const url of [
    "/v1/nothing-here",
    "/nothing",
    "/v1/runs",
    "/v1/organizations/acme/nothing",
    "/v2/organizations",
  ]) {
    const result = await allTablesUnchanged(server, () => server.admin.get({ url }));
    labelled(url, () => expectV1Error(result as SdkResult, 404, "NOT_FOUND"));
  }
});

testEachServer(
  routing,
  "fails 405 METHOD_NOT_ALLOWED for a wrong method on a known path, and writes nothing",
  async (server) => {
    const { organizationName, workspace } = await setUpAcme(server);
    const cases: Array<["DELETE" | "PUT" | "GET" | "POST", string]> = [
      ["DELETE", "/v1/runs/run-0123456789abcdef"],
      ["PUT", "/v1/organizations"],
      ["DELETE", "/v1/organizations"],
      ["DELETE", `/v1/organizations/${organizationName}`],
      ["PUT", `/v1/workspaces/${workspace.id}`],
      ["GET", `/v1/workspaces/${workspace.id}/runs`],
      ["POST", "/healthz"],
      ["GET", "/uploads/configuration-versions/abc.def"],
    ];
    for (const [method, url] of cases) {
      const result = await allTablesUnchanged(server, () => server.admin.request({ method, url }));
      labelled(`${method} ${url}`, () => expectV1Error(result as SdkResult, 405, "METHOD_NOT_ALLOWED"));
    }
  },
);

testEachServer(routing, "names the allowed methods in an Allow header on 405 (RFC 9110 §15.5.6)", async (server) => {
  await setUpAcme(server);
  const result = (await server.admin.request({ method: "DELETE", url: "/v1/runs/run-0123456789abcdef" })) as SdkResult;
  expectV1Error(result, 405, "METHOD_NOT_ALLOWED");
  assert.is(result.response.headers.get("allow"), "GET");
});

testEachServer(
  routing,
  "keeps a well-formed incoming X-Request-Id and replaces a malformed one; meta.request_id always equals the header",
  async (server) => {
    const { workspace } = await setUpAcme(server);
    const kept = await sdk.getRun({
      client: server.admin,
      path: { run_id: "run-0000000000000000" },
      headers: { "X-Request-Id": "trace-0123456789" },
    });
    expectV1Error(kept, 404, "NOT_FOUND");
    assert.is(kept.response.headers.get("x-request-id"), "trace-0123456789");
    const replaced = await sdk.createRun({
      client: server.admin,
      path: { workspace_id: workspace.id },
      body: { data: { type: "runs", attributes: { auto_apply: true } } },
      headers: { "X-Request-Id": "bad id with spaces" },
    });
    const error = expectV1Error(replaced, 422, "RUN_AUTO_APPLY_FORBIDDEN");
    assert.is.not(error.meta?.request_id, "bad id with spaces");
    assert.match(String(error.meta?.request_id), /^[A-Za-z0-9._-]{8,64}$/);
    // Two requests never share an id.
    const one = await sdk.getRun({ client: server.admin, path: { run_id: "run-0000000000000000" } });
    const two = await sdk.getRun({ client: server.admin, path: { run_id: "run-0000000000000000" } });
    assert.is.not(one.response.headers.get("x-request-id"), two.response.headers.get("x-request-id"));
  },
);

// ---------------------------------------------------------------------------------------------
documents.run();
routing.run();
