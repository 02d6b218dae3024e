// GET /api/v2/plans/{plan_id}/json-output: the plan JSON stored framed and encrypted by the
// runner, streamed with backpressure and verified on the way out (issue 4). Artifacts are written
// through the same writer the runner uses; one case runs a real plan.
import { createHash, randomBytes } from "node:crypto";
import { appendFile, stat, truncate } from "node:fs/promises";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { flipByte } from "../support/files.ts";
import { openDescriptors } from "../support/processes.ts";
import { phaseId } from "../../src/api/tfe/presenters.ts";
import { PLAN_JSON_LIMIT_BYTES } from "../../src/api/tfe/plan-json.ts";
import type { FramedArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { HEADER_SIZE } from "../../src/artifacts/framed.ts";
import { hashTokenSecret } from "../../src/domain/token-secrets.ts";
import { storePlanJson } from "../../src/runner/plan-json.ts";
import { createOrganizationWithToken, createToken, createWorkspace, sha256 } from "../support/factories.ts";
import { fixture, readLog, startRun, waitForStatus } from "../support/runs.ts";
import {
  testEachServer as testEachServerOn,
  withTestServer,
  type TestServer,
  type TestServerOptions,
} from "../support/test-server.ts";
import { describeViolations, startContractProxy } from "../e2e/contract-proxy.ts";
import type { Tfe } from "../support/documents.ts";

const FRAME = 64 * 1024 + 16;

// These cases tamper with the objects' files and watch the read worker, so artifacts stay in a
// local directory on both databases (the PostgreSQL backend is covered by backends.test.ts).
const testEachServer = (
  test: Parameters<typeof testEachServerOn>[0],
  title: string,
  fn: (server: TestServer) => Promise<void>,
  options: TestServerOptions = {},
) => testEachServerOn(test, title, fn, { ...options, localArtifacts: true });

/** A plan-JSON-shaped document of about `bytes` bytes. */
function planJsonOf(bytes: number): Buffer {
  const changes: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const change = JSON.stringify({
      address: `terraform_data.r${i}`,
      mode: "managed",
      type: "terraform_data",
      name: `r${i}`,
      change: { actions: ["create"], before: null, after: { input: randomBytes(48).toString("hex"), n: i } },
    });
    changes.push(change);
    size += change.length + 1;
  }
  return Buffer.from(
    `{"format_version":"1.2","terraform_version":"1.9.0","resource_changes":[${changes.join(",")}],"errored":false}`,
  );
}

/**
 * `token` reads the plan JSON: it holds artifact:read_sensitive (an admin token; the plan JSON is
 * the raw plan in another encoding). `viewer` and `operator` hold run:read without it.
 */
async function setUp(server: TestServer) {
  const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
  const { token: admin } = await createToken(server, server.bootstrapToken, organizationName, "admin");
  const { token: viewer } = await createToken(server, server.bootstrapToken, organizationName, "viewer");
  const { token: operator } = await createToken(server, server.bootstrapToken, organizationName, "operator");
  const workspace = await createWorkspace(server, admin, organizationName, { name: "app" });
  return { organizationName, token, admin, viewer, operator, workspace };
}

/** A run (left pending: no runner) whose plan JSON is stored exactly as the runner stores it. */
async function runWithPlanJson(
  server: TestServer,
  admin: string,
  workspaceId: string,
  planJson: Uint8Array | AsyncIterable<Uint8Array>,
) {
  const created = await startRun(server, admin, workspaceId, { "main.tf": "\n" }, "speculative");
  const run = (await server.services.stores.runs.getById(created.id))!;
  const stored = await storePlanJson(server.services, run, planJson);
  // Published once the plan finished (commands/run-artifacts.ts).
  await server.services.stores.runs.update(run.id, run.status, { planStatus: "finished", updatedAt: new Date() });
  return {
    runId: run.id,
    planId: phaseId(run.id, "plan"),
    stored,
    file: join(server.dataDir, "artifacts", stored.key),
  };
}

function get(server: TestServer, token: string | null, planId: string): Promise<Response> {
  return fetch(`${server.baseUrl}/api/v2/plans/${planId}/json-output`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
}

/** The body as far as it came, and whether it ended cleanly. */
async function drain(response: Response): Promise<{ bytes: Buffer; failed: boolean }> {
  const chunks: Buffer[] = [];
  const reader = response.body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks), failed: false };
      chunks.push(Buffer.from(value));
    }
  } catch {
    return { bytes: Buffer.concat(chunks), failed: true };
  }
}

/** The single unavailable answer, with the plan id taken out so answers for different plans compare equal. */
async function expectUnavailable(response: Response, planId: string): Promise<unknown> {
  assert.is(response.status, 404);
  assert.match(response.headers.get("content-type") ?? "", /^application\/vnd\.api\+json/);
  const document = (await response.json()) as Tfe["ErrorDocument"];
  assert.is(document.errors.length, 1);
  assert.is(document.errors[0].status, "404");
  assert.is(document.errors[0].code, "PLAN_JSON_UNAVAILABLE");
  return JSON.parse(JSON.stringify(document).split(planId).join("<plan>"));
}

const test = suite("plan json-output (tfe)");

testEachServer(
  test,
  "byte-exact round trip of a large plan JSON: application/json, private no-store, the declared length, audited",
  async (server) => {
    const { token, admin, workspace } = await setUp(server);
    const planJson = planJsonOf(24 * 1024 * 1024 + 12345);
    const { planId, runId, stored } = await runWithPlanJson(server, admin, workspace.id, planJson);
    assert.is(stored.sizeBytes, planJson.length);
    assert.is(stored.sha256, sha256(planJson));
    const response = await get(server, token, planId);
    assert.is(response.status, 200);
    assert.is(response.headers.get("content-type"), "application/json; charset=utf-8");
    assert.is(response.headers.get("cache-control"), "private, no-store");
    assert.is(response.headers.get("content-length"), String(planJson.length));
    const { bytes, failed } = await drain(response);
    assert.not.ok(failed);
    assert.ok(bytes.equals(planJson), "the served bytes differ from the stored plan JSON");
    const head = await fetch(`${server.baseUrl}/api/v2/plans/${planId}/json-output`, {
      method: "HEAD",
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.is(head.status, 200);
    assert.is(head.headers.get("content-length"), String(planJson.length));
    assert.is((await head.arrayBuffer()).byteLength, 0);
    const events = await server.services.stores.audit.listByOrganization(
      (await server.services.stores.runs.getById(runId))!.organizationId,
    );
    assert.ok(events.some((event) => event.action === "plan.json_output_read" && event.targetId === runId));
  },
);

testEachServer(
  test,
  "viewers and operators never read the plan JSON (sensitive variables, prior state): the missing-plan answer, nothing audited; an admin token reads it audited before the first byte",
  async (server) => {
    const { token, admin, viewer, operator, workspace } = await setUp(server);
    // What the plan JSON of a workspace with a sensitive variable holds: the value in clear.
    const secret = "JSONOUTPUT-SECRET-7f3a9c";
    const planJson = Buffer.from(
      JSON.stringify({
        format_version: "1.2",
        variables: { db_password: { value: secret } },
        prior_state: { values: { outputs: { leaked: { sensitive: true, value: secret } } } },
        resource_changes: [],
      }),
    );
    const { planId, runId } = await runWithPlanJson(server, admin, workspace.id, planJson);
    const organizationId = (await server.services.stores.runs.getById(runId))!.organizationId;
    const reads = async () =>
      (await server.services.stores.audit.listByOrganization(organizationId)).filter(
        (event) => event.action === "plan.json_output_read" && event.targetId === runId,
      );
    const missing = await expectUnavailable(await get(server, token, "plan-0000000000000000"), "plan-0000000000000000");
    // A token holding run:read and artifact:read (the viewer's grants) on the workspace itself.
    const principal = await server.services.stores.principals.createPrincipal({
      kind: "api_token",
      organizationId,
      name: "ws-viewer",
      createdAt: new Date(),
    });
    const scoped = `ss1.${randomBytes(32).toString("base64url")}`;
    await server.services.stores.tokens.createToken({
      principalId: principal.id,
      organizationId,
      role: null,
      description: null,
      tokenHash: hashTokenSecret(scoped),
      createdAt: new Date(),
    });
    for (const permission of ["workspace:read", "run:read", "artifact:read"] as const) {
      await server.services.stores.grants.grant({
        principalId: principal.id,
        scopeKind: "workspace",
        scopeId: workspace.id,
        permission,
        createdAt: new Date(),
      });
    }
    for (const [label, caller] of [
      ["viewer", viewer],
      ["operator", operator],
      ["workspace viewer", scoped],
    ] as const) {
      const response = await get(server, caller, planId);
      const text = await response.clone().text();
      assert.not.ok(text.includes(secret), `${label} read the secret`);
      assert.equal(await expectUnavailable(response, planId), missing, `${label}: the same answer as a missing plan`);
    }
    assert.is((await reads()).length, 0, "a refused read is not a read");

    const response = await get(server, token, planId);
    assert.is(response.status, 200);
    // The headers are here, the body not yet read: the audit event is already committed.
    assert.is((await reads()).length, 1, "audited before the first byte");
    const { bytes } = await drain(response);
    assert.ok(bytes.equals(planJson));
  },
);

testEachServer(
  test,
  "a tampered frame cancels the stream: the response never completes, the tampered frame never comes out",
  async (server) => {
    const { token, admin, workspace } = await setUp(server);
    // Frame 300 lies beyond the read-ahead (a few MiB), so it fails after the answer started.
    const planJson = planJsonOf(24 * 1024 * 1024);
    for (const frame of [0, 300]) {
      const { planId, file } = await runWithPlanJson(server, admin, workspace.id, planJson);
      await flipByte(file, HEADER_SIZE + frame * FRAME + 100);
      // The first batch may fail before the answer starts (the one unavailable answer, or the
      // connection closed with nothing sent); a later frame always fails a 200 response's body.
      const response = await get(server, token, planId).catch(() => null);
      if (frame === 300) assert.is(response?.status, 200);
      if (response?.status === 404) {
        await expectUnavailable(response, planId);
        continue;
      }
      if (response) assert.is(response.status, 200);
      const { bytes, failed } = response ? await drain(response) : { bytes: Buffer.alloc(0), failed: true };
      assert.ok(failed, `tampering frame ${frame} did not fail the response`);
      assert.ok(bytes.length <= frame * (FRAME - 16), `bytes of or after the tampered frame ${frame} came out`);
      assert.ok(bytes.equals(planJson.subarray(0, bytes.length)));
    }
  },
);

testEachServer(
  test,
  "a truncated object and a trailing byte are refused before the first byte; truncation while streaming cancels it",
  async (server) => {
    const { token, admin, workspace } = await setUp(server);
    const planJson = planJsonOf(3 * 1024 * 1024);
    const truncated = await runWithPlanJson(server, admin, workspace.id, planJson);
    await truncate(truncated.file, (await stat(truncated.file)).size - FRAME);
    const a = await expectUnavailable(await get(server, token, truncated.planId), truncated.planId);

    const trailing = await runWithPlanJson(server, admin, workspace.id, planJson);
    await appendFile(trailing.file, "}");
    const b = await expectUnavailable(await get(server, token, trailing.planId), trailing.planId);
    assert.equal(a, b);

    // The object shrinks after the checks: the stream ends early and the response with it.
    const big = planJsonOf(32 * 1024 * 1024);
    const racing = await runWithPlanJson(server, admin, workspace.id, big);
    const response = await get(server, token, racing.planId);
    assert.is(response.status, 200);
    await truncate(racing.file, HEADER_SIZE + 10 * FRAME);
    const { bytes, failed } = await drain(response);
    assert.ok(failed, "a truncated object produced a complete-looking response");
    assert.ok(bytes.length < big.length);
  },
);

testEachServer(
  test,
  "a client that goes away mid-stream: the server stops reading and closes the object",
  async (server) => {
    const { token, admin, workspace } = await setUp(server);
    const planJson = planJsonOf(32 * 1024 * 1024);
    const { planId, file } = await runWithPlanJson(server, admin, workspace.id, planJson);
    const abort = new AbortController();
    const response = await fetch(`${server.baseUrl}/api/v2/plans/${planId}/json-output`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    assert.is(response.status, 200);
    const reader = response.body!.getReader();
    await reader.read();
    assert.is(openDescriptors(file), 1, "the object is open while streaming");
    abort.abort();
    await reader.read().catch(() => undefined);
    for (let i = 0; i < 100 && openDescriptors(file) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.is(openDescriptors(file), 0, "the object stayed open after the client went away");
    // The server still answers.
    const again = await get(server, token, planId);
    assert.is(again.status, 200);
    assert.ok((await drain(again)).bytes.equals(planJson));
  },
);

/** Streams under way in the server's read worker. */
function workerStreams(server: TestServer): number {
  return (server.services.artifacts as FramedArtifactStore).reader.active;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(condition(), what);
}

testEachServer(
  test,
  "concurrent downloads are each byte-exact; a tampered one among them fails alone",
  async (server) => {
    const { token, admin, workspace } = await setUp(server);
    const plans = [
      planJsonOf(8 * 1024 * 1024),
      planJsonOf(12 * 1024 * 1024 + 3),
      planJsonOf(2 * 1024 * 1024),
      planJsonOf(300 * 1024),
    ];
    const runs = [];
    for (const planJson of plans) runs.push(await runWithPlanJson(server, admin, workspace.id, planJson));
    const tamperedPlan = planJsonOf(10 * 1024 * 1024);
    const tampered = await runWithPlanJson(server, admin, workspace.id, tamperedPlan);
    // Frame 100 is in the seventh batch: the answer has started when it fails.
    await flipByte(tampered.file, HEADER_SIZE + 100 * FRAME + 5);
    const requests = [...runs, tampered, ...runs].map((run) => get(server, token, run.planId));
    const results = await Promise.all(
      requests.map(async (request) => {
        const response = await request;
        assert.is(response.status, 200);
        return drain(response);
      }),
    );
    results.forEach(({ bytes, failed }, i) => {
      if (i === runs.length) {
        assert.ok(failed, "the tampered download completed");
        assert.ok(bytes.length <= 100 * (FRAME - 16), `bytes of or after the tampered frame came out`);
        assert.ok(bytes.equals(tamperedPlan.subarray(0, bytes.length)));
        return;
      }
      const planJson = plans[i < runs.length ? i : i - runs.length - 1];
      assert.not.ok(failed, `download ${i} failed`);
      assert.ok(bytes.equals(planJson), `download ${i} differs from its plan JSON`);
    });
    await until(() => workerStreams(server) === 0, "a stream stayed open in the read worker");
  },
);

testEachServer(
  test,
  "clients that disconnect mid-stream release the read worker: no stream stays open, the next downloads succeed",
  async (server) => {
    const { token, admin, workspace } = await setUp(server);
    const planJson = planJsonOf(32 * 1024 * 1024);
    const { planId, file } = await runWithPlanJson(server, admin, workspace.id, planJson);
    const aborts = [new AbortController(), new AbortController(), new AbortController()];
    const readers = await Promise.all(
      aborts.map(async (abort) => {
        const response = await fetch(`${server.baseUrl}/api/v2/plans/${planId}/json-output`, {
          headers: { Authorization: `Bearer ${token}` },
          signal: abort.signal,
        });
        assert.is(response.status, 200);
        const reader = response.body!.getReader();
        await reader.read();
        return reader;
      }),
    );
    assert.is(workerStreams(server), 3);
    for (const abort of aborts) abort.abort();
    await Promise.all(readers.map((reader) => reader.read().catch(() => undefined)));
    await until(
      () => workerStreams(server) === 0,
      "a stream stayed open in the read worker after its client went away",
    );
    await until(() => openDescriptors(file) === 0, "the object stayed open after its clients went away");
    const again = await Promise.all([get(server, token, planId), get(server, token, planId)]);
    for (const response of again) {
      assert.is(response.status, 200);
      const { bytes, failed } = await drain(response);
      assert.not.ok(failed);
      assert.ok(bytes.equals(planJson));
    }
    assert.is(workerStreams(server), 0);
  },
);

testEachServer(
  test,
  "a descriptor size mismatch is refused before the first byte; a digest mismatch cancels the stream at the end",
  async (server) => {
    const { token, admin, workspace } = await setUp(server);
    // Larger than the read-ahead (a few MiB), so the digest is checked after the answer started.
    const planJson = planJsonOf(16 * 1024 * 1024 + 7);
    const sized = await runWithPlanJson(server, admin, workspace.id, planJson);
    for (const delta of [-1, 1]) {
      await server.db
        .knex("artifacts")
        .where({ artifact_key: sized.stored.key })
        .update({ size_bytes: planJson.length + delta });
      await expectUnavailable(await get(server, token, sized.planId), sized.planId);
    }

    const digested = await runWithPlanJson(server, admin, workspace.id, planJson);
    await server.db
      .knex("artifacts")
      .where({ artifact_key: digested.stored.key })
      .update({ sha256: sha256("something else") });
    const response = await get(server, token, digested.planId);
    assert.is(response.status, 200);
    const { bytes, failed } = await drain(response);
    assert.ok(failed, "a digest mismatch produced a complete-looking response");
    assert.ok(bytes.length < planJson.length);

    // Another workspace's or kind's descriptor does not open this object (its identity is bound).
    const moved = await runWithPlanJson(server, admin, workspace.id, planJson);
    const other = await createWorkspace(server, admin, "acme", { name: "other" });
    await server.db.knex("artifacts").where({ artifact_key: moved.stored.key }).update({ workspace_id: other.id });
    await expectUnavailable(await get(server, token, moved.planId), moved.planId);
  },
);

testEachServer(
  test,
  "missing, another workspace's token, another organization's token and an oversized plan all get the same answer",
  async (server) => {
    const { admin, workspace, organizationName } = await setUp(server);
    const other = await createWorkspace(server, admin, organizationName, { name: "other" });
    const planJson = planJsonOf(256 * 1024);
    const mine = await runWithPlanJson(server, admin, workspace.id, planJson);
    const theirs = await runWithPlanJson(server, admin, other.id, planJson);

    // A token with run:read and artifact:read_sensitive on the other workspace only.
    const principal = await server.services.stores.principals.createPrincipal({
      kind: "api_token",
      organizationId: (await server.services.stores.organizations.getByName(organizationName))!.id,
      name: "other-ws",
      createdAt: new Date(),
    });
    const secret = `ss1.${randomBytes(32).toString("base64url")}`;
    await server.services.stores.tokens.createToken({
      principalId: principal.id,
      organizationId: principal.organizationId,
      role: null,
      description: null,
      tokenHash: hashTokenSecret(secret),
      createdAt: new Date(),
    });
    for (const permission of ["run:read", "artifact:read_sensitive"] as const) {
      await server.services.stores.grants.grant({
        principalId: principal.id,
        scopeKind: "workspace",
        scopeId: other.id,
        permission,
        createdAt: new Date(),
      });
    }
    const theirsResponse = await get(server, secret, theirs.planId);
    assert.is(theirsResponse.status, 200, "the workspace token reads its own workspace's plan JSON");
    assert.ok((await drain(theirsResponse)).bytes.equals(planJson));

    const answers = [await expectUnavailable(await get(server, secret, mine.planId), mine.planId)];
    const stranger = await createOrganizationWithToken(server, "globex", "admin");
    answers.push(await expectUnavailable(await get(server, stranger.token, mine.planId), mine.planId));
    answers.push(await expectUnavailable(await get(server, admin, "plan-0000000000000000"), "plan-0000000000000000"));
    answers.push(await expectUnavailable(await get(server, admin, "nonsense"), "nonsense"));
    // A run without a plan JSON.
    const bare = await startRun(server, admin, workspace.id, { "main.tf": "\n" }, "speculative");
    answers.push(await expectUnavailable(await get(server, admin, phaseId(bare.id, "plan")), phaseId(bare.id, "plan")));

    // Over the limit: stored whole and consistent, still never served.
    async function* oversized() {
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      for (let sent = 0; sent < PLAN_JSON_LIMIT_BYTES; sent += chunk.length) yield chunk;
      yield Buffer.from("1");
    }
    const huge = await runWithPlanJson(server, admin, workspace.id, oversized());
    assert.is(huge.stored.sizeBytes, PLAN_JSON_LIMIT_BYTES + 1);
    answers.push(await expectUnavailable(await get(server, admin, huge.planId), huge.planId));
    for (const answer of answers) assert.equal(answer, answers[0]);

    const anonymous = await get(server, null, mine.planId);
    assert.is(anonymous.status, 401);
  },
);

testEachServer(
  test,
  "a real plan: the runner stores its JSON framed; json-output serves exactly the bytes the policy stage read",
  async (server) => {
    const { token, admin, workspace } = await setUp(server);
    const run = await startRun(server, admin, workspace.id, fixture("random"));
    const planned = await waitForStatus(server, admin, run.id, [
      "awaiting_approval",
      "planned_and_finished",
      "errored",
    ]);
    assert.is(planned.attributes.status, "awaiting_approval", await readLog(server, admin, run.id, "plan"));
    const record = (await server.services.stores.runs.getById(run.id))!;
    const response = await get(server, token, phaseId(run.id, "plan"));
    assert.is(response.status, 200);
    const { bytes, failed } = await drain(response);
    assert.not.ok(failed);
    const ref = (await server.services.stores.artifacts.forRun(record.id, "plan_json"))!.ref;
    assert.is(bytes.length, ref.sizeBytes);
    assert.is(createHash("sha256").update(bytes).digest("hex"), ref.sha256);
    const document = JSON.parse(bytes.toString("utf8")) as { resource_changes?: unknown[] };
    assert.ok(Array.isArray(document.resource_changes) && document.resource_changes.length > 0);
  },
  { runner: true },
);

// The contract pass (issue 4: every scenario also through `prism proxy --errors` on spec/tfe),
// SQLite only like the CLI scenarios'. Only the answers themselves are checked here: prism buffers
// and re-serializes JSON bodies and turns a cut-off upstream body into its own error, so the
// byte-exact, backpressure and cancellation cases above cannot run through it.
test("through prism: a plan JSON and the unavailable answer conform to spec/tfe [sqlite, through prism]", () =>
  withTestServer("sqlite", async (server) => {
    const { token, admin, workspace } = await setUp(server);
    const planJson = planJsonOf(256 * 1024);
    const { planId } = await runWithPlanJson(server, admin, workspace.id, planJson);
    const proxy = await startContractProxy({ upstream: server.baseUrl });
    let failure: unknown = null;
    try {
      const via = { ...server, baseUrl: `http://127.0.0.1:${proxy.port}` };
      const response = await get(via, token, planId);
      const body = await response.text();
      assert.is(response.status, 200, body);
      assert.is(response.headers.get("cache-control"), "private, no-store");
      assert.equal(JSON.parse(body), JSON.parse(planJson.toString("utf8")));
      await expectUnavailable(await get(via, admin, "plan-0000000000000000"), "plan-0000000000000000");
      assert.equal(proxy.validated, [
        `GET /api/v2/plans/${planId}/json-output 200`,
        "GET /api/v2/plans/plan-0000000000000000/json-output 404",
      ]);
    } catch (error) {
      failure = error;
    } finally {
      await proxy.close();
    }
    if (proxy.violations.length > 0)
      throw new Error(
        `${describeViolations(proxy)}${failure instanceof Error ? `\n--- the case's own failure ---\n${failure.message}` : ""}`,
      );
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what was caught, as it was
    if (failure) throw failure;
  }));

test.run();
