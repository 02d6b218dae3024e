import { storedArtifactKeys } from "../support/artifacts.ts";
import { gzipSync } from "node:zlib";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import * as sdk from "../../../client/src/index.ts";
import { operations } from "../../../generated/v1/operations.gen.ts";
import {
  applicationTables,
  createOrganizationWithToken,
  createPendingConfiguration,
  createWorkspace as createWorkspaceFixture,
  expectNothingWritten,
  expectStatus,
  expectV1Error,
  makeConfigurationTarball,
  pinnedOpenTofuVersion,
  putUpload,
  sha256,
  type SdkResult,
} from "../support/factories.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { V1 } from "../support/documents.ts";

const UPLOAD_LIMIT = 64 * 1024 * 1024;

async function allTablesUnchanged<T>(server: TestServer, act: () => Promise<T>): Promise<T> {
  return expectNothingWritten(server, act, await applicationTables(server));
}

function labelled<T>(label: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    (error as Error).message = `${label}: ${(error as Error).message}`;
    throw error;
  }
}

async function setUp(server: TestServer) {
  const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
  const workspace = await createWorkspaceFixture(server, token, organizationName, { name: "networking" });
  return { organizationName, token, workspace };
}

type BodyCall = (client: sdk.Client, extra: Record<string, unknown>) => Promise<SdkResult>;

/** Every v1 operation with a JSON request body, with a valid body, so `extra` can replace or break it. */
function jsonBodyOperations(organizationName: string, workspaceId: string): Array<[string, BodyCall, unknown]> {
  const org = { organization_name: organizationName };
  const ws = { workspace_id: workspaceId };
  return [
    [
      "createOrganization",
      (client, extra) =>
        sdk.createOrganization({
          client,
          body: { data: { type: "organizations", attributes: { name: "other" } } },
          ...extra,
        }),
      { data: { type: "organizations", attributes: { name: "other" } } },
    ],
    [
      "createOrganizationToken",
      (client, extra) =>
        sdk.createOrganizationToken({
          client,
          path: org,
          body: { data: { type: "tokens", attributes: { role: "viewer" } } },
          ...extra,
        }),
      { data: { type: "tokens", attributes: { role: "viewer" } } },
    ],
    [
      "createProject",
      (client, extra) =>
        sdk.createProject({
          client,
          path: org,
          body: { data: { type: "projects", attributes: { name: "p" } } },
          ...extra,
        }),
      { data: { type: "projects", attributes: { name: "p" } } },
    ],
    [
      "createWorkspace",
      (client, extra) =>
        sdk.createWorkspace({
          client,
          path: org,
          body: { data: { type: "workspaces", attributes: { name: "w" } } },
          ...extra,
        }),
      { data: { type: "workspaces", attributes: { name: "w" } } },
    ],
    [
      "createVariable",
      (client, extra) =>
        sdk.createVariable({
          client,
          path: ws,
          body: { data: { type: "variables", attributes: { key: "k", value: "v" } } },
          ...extra,
        }),
      { data: { type: "variables", attributes: { key: "k", value: "v" } } },
    ],
    [
      "createConfigurationVersion",
      (client, extra) =>
        sdk.createConfigurationVersion({
          client,
          path: ws,
          body: { data: { type: "configuration-versions" } },
          ...extra,
        }),
      { data: { type: "configuration-versions" } },
    ],
    [
      "createRun",
      (client, extra) => sdk.createRun({ client, path: ws, body: { data: { type: "runs" } }, ...extra }),
      { data: { type: "runs" } },
    ],
  ];
}

/** The statuses the spec declares for an operation. */
function declaredStatuses(operationId: string): number[] {
  const operation = operations.find((op) => op.operationId === operationId);
  if (!operation) throw new Error(`no operation ${operationId}`);
  return Object.keys(operation.responses).map(Number);
}

/** Bytes as an upload body: the SDK types it a Blob, and fetch sends a Buffer as it is. */
function uploadBody(bytes: Buffer): Blob {
  return bytes as unknown as Blob;
}

function tokenOf(uploadUrl: string): string {
  const prefix = "/uploads/configuration-versions/";
  const url = new URL(uploadUrl);
  assert.ok(url.pathname.startsWith(prefix), uploadUrl);
  return url.pathname.slice(prefix.length);
}

// ---------------------------------------------------------------------------------------------
const documents = suite("request documents");

testEachServer(
  documents,
  "fails 400 REQUEST_INVALID for a malformed JSON body on every operation that takes one, and writes nothing",
  async (server) => {
    const { organizationName, workspace } = await setUp(server);
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
    const { organizationName, workspace } = await setUp(server);
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
    const { organizationName, workspace } = await setUp(server);
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
    const { workspace } = await setUp(server);
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
    const { workspace } = await setUp(server);
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
    const { organizationName, workspace } = await setUp(server);
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
  await setUp(server);
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
    const { organizationName, workspace } = await setUp(server);
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
  await setUp(server);
  const result = (await server.admin.request({ method: "DELETE", url: "/v1/runs/run-0123456789abcdef" })) as SdkResult;
  expectV1Error(result, 405, "METHOD_NOT_ALLOWED");
  assert.is(result.response.headers.get("allow"), "GET");
});

testEachServer(
  routing,
  "keeps a well-formed incoming X-Request-Id and replaces a malformed one; meta.request_id always equals the header",
  async (server) => {
    const { workspace } = await setUp(server);
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
const upload = suite("uploadConfiguration");

testEachServer(
  upload,
  "stores the upload: status uploaded, config_digest is the SHA-256 of the bytes, size recorded, upload_url gone",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const url = new URL(pending.attributes.upload_url!);
    assert.is(url.origin, server.baseUrl, "upload_url is not absolute on this server");
    const bytes = makeConfigurationTarball({
      "main.tf": 'resource "terraform_data" "x" {}\n',
      "modules/a/main.tf": "# a\n",
    });
    const response = await putUpload(pending.attributes.upload_url!, bytes);
    assert.is(response.status, 200);
    const shown = expectStatus(
      await sdk.getConfigurationVersion({ client: server.v1(token), path: { configuration_version_id: pending.id } }),
      200,
    ).data;
    assert.is(shown.attributes.status, "uploaded");
    assert.is(shown.attributes.config_digest, sha256(bytes));
    assert.is(shown.attributes.size_bytes, bytes.length);
    assert.is(shown.attributes.upload_url, null);
    assert.type(shown.attributes.uploaded_at, "string");
    // Stored encrypted: no artifact file holds the plaintext archive.
    const files = await storedArtifactKeys(server);
    assert.is(files.length, 1);
  },
);

testEachServer(
  upload,
  "fails 409 CONFIGURATION_VERSION_ALREADY_UPLOADED on a second PUT, keeping the first digest",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const first = makeConfigurationTarball();
    assert.is((await putUpload(pending.attributes.upload_url!, first)).status, 200);
    const artifactsBefore = await storedArtifactKeys(server);
    const second = makeConfigurationTarball({ "main.tf": 'resource "terraform_data" "other" {}\n' });
    for (const bytes of [second, first]) {
      const result = await allTablesUnchanged(server, () =>
        sdk.uploadConfiguration({
          client: server.v1(),
          path: { upload_token: tokenOf(pending.attributes.upload_url!) },
          body: uploadBody(bytes),
        }),
      );
      expectV1Error(result, 409, "CONFIGURATION_VERSION_ALREADY_UPLOADED");
    }
    const shown = expectStatus(
      await sdk.getConfigurationVersion({ client: server.v1(token), path: { configuration_version_id: pending.id } }),
      200,
    ).data;
    assert.is(shown.attributes.config_digest, sha256(first));
    assert.equal(await storedArtifactKeys(server), artifactsBefore);
  },
);

testEachServer(upload, "fails 404 NOT_FOUND for a tampered upload token, and writes nothing", async (server) => {
  const { token, workspace } = await setUp(server);
  const pending = await createPendingConfiguration(server, token, workspace.id);
  const good = tokenOf(pending.attributes.upload_url!);
  const [payload, mac] = good.split(".");
  const other = await createPendingConfiguration(server, token, workspace.id);
  const flip = (text: string, i: number) => text.slice(0, i) + (text[i] === "A" ? "B" : "A") + text.slice(i + 1);
  const tampered = [
    flip(good, 0),
    flip(good, payload.length - 2),
    flip(good, payload.length + 1),
    flip(good, good.length - 1),
    `${payload}.${tokenOf(other.attributes.upload_url!).split(".")[1]}`,
    `${Buffer.from(JSON.stringify({ cv: other.id, exp: 4102444800 })).toString("base64url")}.${mac}`,
    `${Buffer.from(JSON.stringify({ cv: pending.id, exp: 4102444800 })).toString("base64url")}.${mac}`,
  ];
  for (const t of tampered) {
    const result = await allTablesUnchanged(server, () =>
      sdk.uploadConfiguration({
        client: server.v1(),
        path: { upload_token: t },
        body: uploadBody(makeConfigurationTarball()),
      }),
    );
    labelled(t, () => expectV1Error(result, 404, "NOT_FOUND"));
  }
  const still = expectStatus(
    await sdk.getConfigurationVersion({ client: server.v1(token), path: { configuration_version_id: pending.id } }),
    200,
  ).data;
  assert.is(still.attributes.status, "pending");
  assert.equal(await storedArtifactKeys(server), []);
});

testEachServer(
  upload,
  "fails 422 CONFIGURATION_UPLOAD_INVALID for data that is not a gzip tar archive, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const real = makeConfigurationTarball();
    const bodies: Array<[string, Buffer]> = [
      ["plain text", Buffer.from('resource "terraform_data" "x" {}\n')],
      ["an empty body", Buffer.alloc(0)],
      ["gzip of text (not a tar)", gzipSync(Buffer.from("hello, this is not a tar archive\n"))],
      ["gzip of 512 non-tar bytes", gzipSync(Buffer.alloc(1024, 0x41))],
      ["a truncated .tar.gz", real.subarray(0, Math.floor(real.length / 2))],
      ["gzip magic only", Buffer.from([0x1f, 0x8b])],
      ["a zip archive header", Buffer.from("PK\u0003\u0004not really a zip")],
    ];
    for (const [label, bytes] of bodies) {
      const result = await allTablesUnchanged(server, () =>
        sdk.uploadConfiguration({
          client: server.v1(),
          path: { upload_token: tokenOf(pending.attributes.upload_url!) },
          body: uploadBody(bytes),
        }),
      );
      labelled(label, () => expectV1Error(result, 422, "CONFIGURATION_UPLOAD_INVALID"));
    }
    const still = expectStatus(
      await sdk.getConfigurationVersion({ client: server.v1(token), path: { configuration_version_id: pending.id } }),
      200,
    ).data;
    assert.is(still.attributes.status, "pending");
    assert.is(still.attributes.config_digest, null);
    assert.equal(await storedArtifactKeys(server), []);
    // The same URL still takes a good upload afterwards.
    assert.is((await putUpload(pending.attributes.upload_url!, real)).status, 200);
  },
);

testEachServer(
  upload,
  "accepts exactly 64 MiB past the size check (422 CONFIGURATION_UPLOAD_INVALID) and fails 413 CONFIGURATION_UPLOAD_TOO_LARGE at 64 MiB + 1 byte",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const uploadToken = tokenOf(pending.attributes.upload_url!);
    const atLimit = Buffer.alloc(UPLOAD_LIMIT, 0x61);
    const fits = await allTablesUnchanged(server, () =>
      sdk.uploadConfiguration({ client: server.v1(), path: { upload_token: uploadToken }, body: uploadBody(atLimit) }),
    );
    expectV1Error(fits, 422, "CONFIGURATION_UPLOAD_INVALID");
    const overLimit = Buffer.alloc(UPLOAD_LIMIT + 1, 0x61);
    const tooLarge = await allTablesUnchanged(server, () =>
      sdk.uploadConfiguration({
        client: server.v1(),
        path: { upload_token: uploadToken },
        body: uploadBody(overLimit),
      }),
    );
    expectV1Error(tooLarge, 413, "CONFIGURATION_UPLOAD_TOO_LARGE");
    assert.equal(await storedArtifactKeys(server), []);
  },
);

const uploadClock = { now: Date.parse("2026-12-02T10:00:00.000Z") };
testEachServer(
  upload,
  "fails 404 NOT_FOUND for an upload URL used after its hour, and writes nothing",
  async (server) => {
    uploadClock.now = Date.parse("2026-12-02T10:00:00.000Z");
    const { token, workspace } = await setUp(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    uploadClock.now += 3600 * 1000 + 1000;
    const result = await allTablesUnchanged(server, () =>
      sdk.uploadConfiguration({
        client: server.v1(),
        path: { upload_token: tokenOf(pending.attributes.upload_url!) },
        body: uploadBody(makeConfigurationTarball()),
      }),
    );
    expectV1Error(result, 404, "NOT_FOUND");
    // Within the hour it works.
    const fresh = await createPendingConfiguration(server, token, workspace.id);
    uploadClock.now += 3599 * 1000;
    assert.is((await putUpload(fresh.attributes.upload_url!, makeConfigurationTarball())).status, 200);
  },
  { clock: () => new Date(uploadClock.now) },
);

// ---------------------------------------------------------------------------------------------
const workspaces = suite("createWorkspace");

testEachServer(
  workspaces,
  "resolves opentofu_version latest, the major.minor prefix and the exact version to the pinned version",
  async (server) => {
    const { organizationName, token } = await setUp(server);
    const pinned = pinnedOpenTofuVersion();
    const prefix = pinned.split(".").slice(0, 2).join(".");
    for (const [name, requested] of [
      ["latest", "latest"],
      ["prefix", prefix],
      ["exact", pinned],
      ["default", undefined],
    ] as const) {
      const workspace = await createWorkspaceFixture(
        server,
        token,
        organizationName,
        requested === undefined ? { name } : { name, opentofu_version: requested },
      );
      labelled(String(requested), () => assert.is(workspace.attributes.opentofu_version, pinned));
      const row = await server.db
        .knex("workspaces")
        .where({ id: workspace.id })
        .first<{ opentofu_version: string }>("opentofu_version");
      assert.is(row.opentofu_version, pinned);
    }
  },
);

testEachServer(
  workspaces,
  "fails 422 OPENTOFU_VERSION_UNAVAILABLE for a version this deployment does not provide, and writes nothing",
  async (server) => {
    const { organizationName, token } = await setUp(server);
    const pinned = pinnedOpenTofuVersion();
    const [major, minor] = pinned.split(".");
    // NOTE: "1.1" must not match 1.12.x: a prefix is whole components.
    for (const requested of [
      "9.9.9",
      `${major}.${minor}.999`,
      `${major}.${Number(minor) + 1}`,
      `${major}.${minor.slice(0, 1)}`,
      "oldest",
    ]) {
      const result = await allTablesUnchanged(server, () =>
        sdk.createWorkspace({
          client: server.v1(token),
          path: { organization_name: organizationName },
          body: { data: { type: "workspaces", attributes: { name: "w", opentofu_version: requested } } },
        }),
      );
      labelled(JSON.stringify(requested), () =>
        expectV1Error(result, 422, "OPENTOFU_VERSION_UNAVAILABLE", { pointer: "/data/attributes/opentofu_version" }),
      );
    }
  },
);

testEachServer(
  workspaces,
  "fails 422 for an empty opentofu_version (it is none of exact, major.minor or latest), and writes nothing",
  async (server) => {
    const { organizationName, token } = await setUp(server);
    const result = await allTablesUnchanged(server, () =>
      sdk.createWorkspace({
        client: server.v1(token),
        path: { organization_name: organizationName },
        body: { data: { type: "workspaces", attributes: { name: "w", opentofu_version: "" } } },
      }),
    );
    assert.is(
      result.response.status,
      422,
      `got ${result.response.status}: ${JSON.stringify(result.data ?? result.error).slice(0, 300)}`,
    );
    const code = (result.error as { errors: Array<{ code: string }> }).errors[0].code;
    assert.ok(code === "OPENTOFU_VERSION_UNAVAILABLE" || code === "DOCUMENT_INVALID", code);
  },
);

testEachServer(
  workspaces,
  "fails 422 EXECUTION_REGION_UNAVAILABLE for execution_region mars, and writes nothing; local is accepted",
  async (server) => {
    const { organizationName, token } = await setUp(server);
    const result = await allTablesUnchanged(server, () =>
      sdk.createWorkspace({
        client: server.v1(token),
        path: { organization_name: organizationName },
        body: { data: { type: "workspaces", attributes: { name: "w", execution_region: "mars" } } },
      }),
    );
    expectV1Error(result, 422, "EXECUTION_REGION_UNAVAILABLE", { pointer: "/data/attributes/execution_region" });
    const local = await createWorkspaceFixture(server, token, organizationName, {
      name: "here",
      execution_region: "local",
    });
    assert.is(local.attributes.execution_region, "local");
  },
);

testEachServer(
  workspaces,
  "fails 409 WORKSPACE_NAME_TAKEN for a duplicate name in the organization, and writes nothing; another organization may reuse it",
  async (server) => {
    const { organizationName, token } = await setUp(server);
    const result = await allTablesUnchanged(server, () =>
      sdk.createWorkspace({
        client: server.v1(token),
        path: { organization_name: organizationName },
        body: { data: { type: "workspaces", attributes: { name: "networking" } } },
      }),
    );
    expectV1Error(result, 409, "WORKSPACE_NAME_TAKEN");
    const other = await createOrganizationWithToken(server, "other-org", "admin");
    const reused = await createWorkspaceFixture(server, other.token, other.organizationName, { name: "networking" });
    assert.is(reused.attributes.name, "networking");
  },
);

// ---------------------------------------------------------------------------------------------
const organizations = suite("createOrganization");

testEachServer(
  organizations,
  "fails 409 ORGANIZATION_NAME_TAKEN for a duplicate organization, and writes nothing",
  async (server) => {
    await setUp(server);
    const result = await allTablesUnchanged(server, () =>
      sdk.createOrganization({
        client: server.admin,
        body: { data: { type: "organizations", attributes: { name: "acme" } } },
      }),
    );
    expectV1Error(result, 409, "ORGANIZATION_NAME_TAKEN");
  },
);

testEachServer(
  organizations,
  "fails 422 DOCUMENT_INVALID at /data/attributes/name for a name outside the pattern, and writes nothing",
  async (server) => {
    await setUp(server);
    for (const name of ["", "-acme", "a".repeat(41), "acme corp", "acme/x"]) {
      const result = await allTablesUnchanged(server, () =>
        sdk.createOrganization({
          client: server.admin,
          body: { data: { type: "organizations", attributes: { name } } },
        }),
      );
      labelled(JSON.stringify(name), () =>
        expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer: "/data/attributes/name" }),
      );
    }
  },
);

documents.run();
routing.run();
upload.run();
workspaces.run();
organizations.run();
