import { createHash } from "node:crypto";
import { request as httpRequest } from "node:http";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { applicationTables, createOrganizationWithToken, expectNothingWritten } from "../support/factories.ts";
import { seededRun, tokenWith } from "../support/seeded-runs.ts";
import { signedInMember } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

const reasonBody = (reason: string) => ({ data: { type: "download-requests", attributes: { reason } } });

function post(server: TestServer, path: string, token: string, body: unknown = reasonBody("incident 42: verify the plan")) {
  return fetch(`${server.baseUrl}${path}`, { method: "POST", headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" }, body: JSON.stringify(body) });
}

async function errorOf(response: Response, status: number, code: string) {
  const body = (await response.json()) as { errors: Array<{ code: string }> };
  assert.is(response.status, status, JSON.stringify(body));
  assert.is(body.errors[0].code, code, JSON.stringify(body));
}

async function downloadAudits(server: TestServer, runId: string) {
  return server.db.knex("audit_events").where({ target_id: runId }).andWhere("action", "like", "run.download.%").orderBy("created_at");
}

// ---------------------------------------------------------------------------------------------
const sensitive = suite("sensitive downloads");

testEachServer(sensitive, "raw plan and emergency state: exact bytes, attachment headers, and an audit event with the reason", async (server) => {
  const { org, run, planJson, pending } = await seededRun(server);
  const raw = await post(server, `/v1/runs/${run.id}/downloads/raw-plan`, org.token);
  assert.is(raw.status, 200);
  assert.ok(Buffer.from(await raw.arrayBuffer()).equals(planJson));
  assert.match(raw.headers.get("content-type") ?? "", /^application\/json\b/);
  assert.is(raw.headers.get("cache-control"), "private, no-store");
  assert.is(raw.headers.get("content-disposition"), `attachment; filename="${run.id}-plan.json"`);

  const state = await post(server, `/v1/runs/${run.id}/downloads/emergency-state`, org.token, reasonBody("  restore after the interrupted apply  "));
  assert.is(state.status, 200);
  // The unconfirmed (pending) version is the emergency state, not the older published one.
  assert.ok(Buffer.from(await state.arrayBuffer()).equals(pending.body));

  const audits = await downloadAudits(server, run.id);
  assert.equal(audits.map((a: any) => a.action), ["run.download.raw_plan", "run.download.emergency_state"]);
  const data = audits.map((a: any) => JSON.parse(a.data));
  assert.is(data[0].reason, "incident 42: verify the plan");
  assert.is(data[0].sha256, sha256(planJson));
  assert.is(data[1].reason, "restore after the interrupted apply");
  assert.is(data[1].state_version_id, pending.id);
});

testEachServer(sensitive, "each refusal writes nothing: missing permission, run:recover without state:recover, other organization, blank reason, a query string", async (server) => {
  const { org, run } = await seededRun(server);
  const tables = await applicationTables(server);
  const viewer = await tokenWith(server, org.organizationId, ["run:read", "artifact:read"]);
  const recoverer = await tokenWith(server, org.organizationId, ["run:read", "run:recover"]);
  const otherOrg = await createOrganizationWithToken(server, "third", "admin");
  const raw = `/v1/runs/${run.id}/downloads/raw-plan`;
  const state = `/v1/runs/${run.id}/downloads/emergency-state`;
  const cases: Array<[string, () => Promise<Response>, number, string]> = [
    ["viewer raw plan", () => post(server, raw, viewer), 403, "FORBIDDEN"],
    ["viewer emergency state", () => post(server, state, viewer), 403, "FORBIDDEN"],
    ["run:recover alone", () => post(server, state, recoverer), 403, "FORBIDDEN"],
    ["another organization", () => post(server, raw, otherOrg.token), 404, "NOT_FOUND"],
    ["blank reason", () => post(server, raw, org.token, reasonBody("   ")), 422, "DOWNLOAD_REASON_REQUIRED"],
    ["no reason", () => post(server, state, org.token, { data: { type: "download-requests", attributes: {} } }), 422, "DOCUMENT_INVALID"],
    // Unknown parameters are refused by the operation's parameter validation, anything else by the download guard.
    ["?x=1", () => post(server, `${raw}?x=1`, org.token), 400, "REQUEST_INVALID"],
    ["?reason=…", () => post(server, `${state}?reason=why`, org.token), 400, "REQUEST_INVALID"],
    ["?&", () => post(server, `${raw}?&`, org.token), 400, "DOWNLOAD_QUERY_FORBIDDEN"],
    ["?x", () => post(server, `${state}?x`, org.token), 400, "REQUEST_INVALID"],
  ];
  for (const [label, call, status, code] of cases) {
    try {
      await errorOf(await expectNothingWritten(server, call, tables), status, code);
    } catch (error) {
      (error as Error).message = `${label}: ${(error as Error).message}`;
      throw error;
    }
  }
  // An empty query string ("?" alone) is not a query.
  assert.is((await post(server, `${raw}?`, org.token)).status, 200);
});

testEachServer(sensitive, "a run that uploaded no state has no emergency state; a run without plan JSON has no raw plan", async (server) => {
  const { org, run } = await seededRun(server);
  await server.db.knex("state_versions").where({ run_id: run.id }).delete();
  await server.db.knex("runs").where({ id: run.id }).update({ plan_json_artifact_key: null, plan_json_digest: null, plan_json_size_bytes: null });
  await errorOf(await post(server, `/v1/runs/${run.id}/downloads/emergency-state`, org.token), 404, "EMERGENCY_STATE_UNAVAILABLE");
  await errorOf(await post(server, `/v1/runs/${run.id}/downloads/raw-plan`, org.token), 404, "RAW_PLAN_UNAVAILABLE");
  assert.is((await downloadAudits(server, run.id)).length, 0);
});

testEachServer(sensitive, "the audit row is committed even when the client disconnects right after the response headers", async (server) => {
  const { org, run } = await seededRun(server);
  const url = new URL(`${server.baseUrl}/v1/runs/${run.id}/downloads/raw-plan`);
  const body = JSON.stringify(reasonBody("disconnect test"));
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { Authorization: `Bearer ${org.token}`, "Content-Type": "application/vnd.api+json", "Content-Length": Buffer.byteLength(body) } }, (res) => {
      resolve(res.statusCode ?? 0);
      res.destroy();
      req.destroy();
    });
    req.on("error", reject);
    req.end(body);
  });
  assert.is(status, 200);
  const audits = await downloadAudits(server, run.id);
  assert.is(audits.length, 1);
  assert.is(JSON.parse(audits[0].data).reason, "disconnect test");
});

{
  let now = new Date("2026-12-02T10:00:00.000Z");
  testEachServer(
    sensitive,
    "sessions need a step-up no older than 15 minutes: 14:59 after sign-in works, 15:01 is 403 STEP_UP_REQUIRED until the next step-up",
    async (server) => {
      now = new Date("2026-12-02T10:00:00.000Z");
      const { run } = await seededRun(server);
      const admin = await signedInMember(server, "acme", "admin");
      const path = `/v1/runs/${run.id}/downloads/raw-plan`;
      now = new Date("2026-12-02T10:14:59.000Z");
      assert.is((await admin.session.request("POST", path, { body: reasonBody("fresh") })).status, 200);
      now = new Date("2026-12-02T10:15:01.000Z");
      const tables = await applicationTables(server);
      await errorOf(await expectNothingWritten(server, () => admin.session.request("POST", path, { body: reasonBody("stale") }), tables), 403, "STEP_UP_REQUIRED");
      await errorOf(await expectNothingWritten(server, () => admin.session.request("POST", `/v1/runs/${run.id}/downloads/emergency-state`, { body: reasonBody("stale") }), tables), 403, "STEP_UP_REQUIRED");
      await errorOf(await expectNothingWritten(server, () => admin.session.request("POST", path, { body: reasonBody("no csrf"), csrf: false }), tables), 403, "SESSION_CSRF_INVALID");
      assert.is((await admin.session.request("POST", "/v1/auth/step-up", { body: { data: { type: "step-ups", attributes: { password: admin.password } } } })).status, 200);
      assert.is((await admin.session.request("POST", path, { body: reasonBody("after step-up") })).status, 200);
      const reasons = (await downloadAudits(server, run.id)).map((a: any) => JSON.parse(a.data).reason);
      assert.equal(reasons, ["fresh", "after step-up"]);
      // An operator session is never a sensitive-access principal, fresh or not.
      const operator = await signedInMember(server, "acme", "operator");
      await errorOf(await operator.session.request("POST", path, { body: reasonBody("x") }), 403, "FORBIDDEN");
    },
    { clock: () => now },
  );
}

// ---------------------------------------------------------------------------------------------
const redacted = suite("redacted plan download");

testEachServer(redacted, "artifact:read (a viewer) downloads the plan-diff artifact as an audited attachment; not ready and unavailable are explicit", async (server) => {
  const { org, run, planDiff } = await seededRun(server);
  const viewer = await signedInMember(server, "acme", "viewer");
  const response = await viewer.session.request("GET", `/v1/runs/${run.id}/downloads/redacted-plan`);
  assert.is(response.status, 200);
  assert.equal(await response.json(), JSON.parse(planDiff.toString()));
  assert.is(response.headers.get("content-disposition"), `attachment; filename="${run.id}-plan-changes.json"`);
  assert.equal((await downloadAudits(server, run.id)).map((a: any) => a.action), ["run.download.redacted_plan"]);

  const noArtifacts = await tokenWith(server, org.organizationId, ["run:read"]);
  await errorOf(await fetch(`${server.baseUrl}/v1/runs/${run.id}/downloads/redacted-plan`, { headers: { Authorization: `Bearer ${noArtifacts}` } }), 403, "FORBIDDEN");

  await server.db.knex("runs").where({ id: run.id }).update({ plan_status: "running", plan_diff_artifact_key: null, plan_diff_digest: null, plan_diff_size_bytes: null });
  await errorOf(await viewer.session.request("GET", `/v1/runs/${run.id}/downloads/redacted-plan`), 409, "RUN_PLAN_CHANGES_NOT_READY");
  await server.db.knex("runs").where({ id: run.id }).update({ plan_status: "errored" });
  await errorOf(await viewer.session.request("GET", `/v1/runs/${run.id}/downloads/redacted-plan`), 404, "RUN_PLAN_CHANGES_UNAVAILABLE");
});

sensitive.run();
redacted.run();
