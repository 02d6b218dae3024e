// GET /api/v2/plans/{plan_id}/json-output: the plan JSON stored framed and encrypted by the
// runner, streamed with backpressure and verified on the way out (issue 4). Artifacts are written
// through the same writer the runner uses. Concurrent and abandoned streams, descriptor checks, a
// real plan and the prism pass are tfe-json-output-streams.test.ts.
import { randomBytes } from "node:crypto";
import { appendFile, stat, truncate } from "node:fs/promises";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { flipByte } from "../support/files.ts";
import { openDescriptors } from "../support/processes.ts";
import { phaseId } from "../../src/api/tfe/presenters.ts";
import { PLAN_JSON_LIMIT_BYTES } from "../../src/api/tfe/plan-json.ts";
import { HEADER_SIZE } from "../../src/artifacts/framed.ts";
import { hashTokenSecret } from "../../src/domain/token-secrets.ts";
import { createOrganizationWithToken, createWorkspace, sha256 } from "../support/factories.ts";
import { startRun } from "../support/runs.ts";
import {
  drain,
  expectUnavailable,
  FRAME,
  get,
  planJsonOf,
  runWithPlanJson,
  setUp,
  testEachServer,
  withStoredPlan,
} from "../support/api-plan-json.ts";
import { until } from "../support/poll.ts";

const test = suite("plan json-output (tfe)");

testEachServer(
  test,
  "byte-exact round trip of a large plan JSON: application/json, private no-store, the declared length, audited",
  async (server) => {
    const { token, planId, runId, stored, planJson } = await withStoredPlan(server, 24 * 1024 * 1024 + 12345);
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
    const { token, planId, file, planJson } = await withStoredPlan(server, 32 * 1024 * 1024);
    const abort = new AbortController();
    const response = await get(server, token, planId, abort.signal);
    assert.is(response.status, 200);
    const reader = response.body!.getReader();
    await reader.read();
    assert.is(openDescriptors(file), 1, "the object is open while streaming");
    abort.abort();
    await reader.read().catch(() => undefined);
    await until(() => openDescriptors(file) === 0, "the object to be closed after the client went away");
    // The server still answers.
    const again = await get(server, token, planId);
    assert.is(again.status, 200);
    assert.ok((await drain(again)).bytes.equals(planJson));
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

test.run();
