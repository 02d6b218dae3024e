import { createHash } from "node:crypto";
import { request as httpRequest } from "node:http";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { applicationTables, expectNothingWritten } from "../support/database.ts";
import { createOrganizationWithToken } from "../support/factories.ts";
import { seededRun, tokenWith } from "../support/seeded-runs.ts";
import { signedInMember, type TestSession } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { AuditEventRow } from "../../src/store/rows.ts";

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

const reasonBody = (reason: string) => ({ data: { type: "download-requests", attributes: { reason } } });

function post(
  server: TestServer,
  path: string,
  token: string,
  body: unknown = reasonBody("incident 42: verify the plan"),
) {
  return fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify(body),
  });
}

/** A signed-in session's POST (cookie and CSRF token); signing in counts as a fresh step-up. */
function postAs(
  member: { session: TestSession },
  path: string,
  body: unknown = reasonBody("incident 42: verify the plan"),
) {
  return member.session.request("POST", path, { body });
}

async function errorOf(response: Response, status: number, code: string) {
  const body = (await response.json()) as { errors: Array<{ code: string }> };
  assert.is(response.status, status, JSON.stringify(body));
  assert.is(body.errors[0].code, code, JSON.stringify(body));
}

async function downloadAudits(server: TestServer, runId: string) {
  return server.db
    .knex("audit_events")
    .where({ target_id: runId })
    .andWhere("action", "like", "run.download.%")
    .orderBy("created_at")
    .select<AuditEventRow[]>("*");
}

/** What a run.download.* audit event records. */
interface DownloadAuditData {
  reason?: string;
  sha256?: string;
  state_version_id?: string;
  refusal?: string;
  operation?: string;
}
const dataOf = (row: AuditEventRow) => JSON.parse(row.data) as DownloadAuditData;

// ---------------------------------------------------------------------------------------------
const sensitive = suite("sensitive downloads");

testEachServer(
  sensitive,
  "raw plan and emergency state: exact bytes, attachment headers, and an audit event with the reason",
  async (server) => {
    const { run, planJson, pending } = await seededRun(server);
    const admin = await signedInMember(server, "acme", "admin");
    const raw = await postAs(admin, `/v1/runs/${run.id}/downloads/raw-plan`);
    assert.is(raw.status, 200);
    assert.ok(Buffer.from(await raw.arrayBuffer()).equals(planJson));
    assert.match(raw.headers.get("content-type") ?? "", /^application\/json\b/);
    assert.is(raw.headers.get("cache-control"), "private, no-store");
    assert.is(raw.headers.get("content-disposition"), `attachment; filename="${run.id}-plan.json"`);

    const state = await postAs(
      admin,
      `/v1/runs/${run.id}/downloads/emergency-state`,
      reasonBody("  restore after the interrupted apply  "),
    );
    assert.is(state.status, 200);
    // The unconfirmed (pending) version is the emergency state, not the older published one.
    assert.ok(Buffer.from(await state.arrayBuffer()).equals(pending.body));

    const audits = await downloadAudits(server, run.id);
    assert.equal(
      audits.map((a) => a.action),
      ["run.download.raw_plan", "run.download.emergency_state"],
    );
    const data = audits.map(dataOf);
    assert.is(data[0].reason, "incident 42: verify the plan");
    assert.is(data[0].sha256, sha256(planJson));
    assert.is(data[1].reason, "restore after the interrupted apply");
    assert.is(data[1].state_version_id, pending.id);
  },
);

testEachServer(
  sensitive,
  "each refusal of a session writes nothing: missing permission, other organization, blank reason, a query string",
  async (server) => {
    const { run } = await seededRun(server);
    const admin = await signedInMember(server, "acme", "admin");
    const viewerSession = await signedInMember(server, "acme", "viewer");
    const operatorSession = await signedInMember(server, "acme", "operator");
    const otherAdmin = await signedInMember(server, "other", "admin");
    const tables = await applicationTables(server);
    const raw = `/v1/runs/${run.id}/downloads/raw-plan`;
    const state = `/v1/runs/${run.id}/downloads/emergency-state`;
    const cases: Array<[string, () => Promise<Response>, number, string]> = [
      ["viewer session raw plan", () => postAs(viewerSession, raw), 403, "FORBIDDEN"],
      ["operator session emergency state", () => postAs(operatorSession, state), 403, "FORBIDDEN"],
      ["another organization's admin", () => postAs(otherAdmin, raw), 404, "NOT_FOUND"],
      ["blank reason", () => postAs(admin, raw, reasonBody("   ")), 422, "DOWNLOAD_REASON_REQUIRED"],
      // The schema says minLength 1: an empty reason never reaches the guard.
      ["empty reason", () => postAs(admin, state, reasonBody("")), 422, "DOCUMENT_INVALID"],
      [
        "no reason",
        () => postAs(admin, state, { data: { type: "download-requests", attributes: {} } }),
        422,
        "DOCUMENT_INVALID",
      ],
      // Unknown parameters are refused by the operation's parameter validation, anything else by the download guard.
      ["?x=1", () => postAs(admin, `${raw}?x=1`), 400, "REQUEST_INVALID"],
      ["?reason=…", () => postAs(admin, `${state}?reason=why`), 400, "REQUEST_INVALID"],
      ["?&", () => postAs(admin, `${raw}?&`), 400, "DOWNLOAD_QUERY_FORBIDDEN"],
      ["?x", () => postAs(admin, `${state}?x`), 400, "REQUEST_INVALID"],
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
    assert.is((await postAs(admin, `${raw}?`)).status, 200);
  },
);

testEachServer(
  sensitive,
  "tokens never download raw plans or emergency state: 403 STEP_UP_REQUIRED with the reason in a sentence, the refusal audited, no bytes",
  async (server) => {
    const { org, run, planJson } = await seededRun(server);
    const other = await createOrganizationWithToken(server, "third", "admin");
    const raw = `/v1/runs/${run.id}/downloads/raw-plan`;
    const state = `/v1/runs/${run.id}/downloads/emergency-state`;
    const callers: Array<[string, string, string | null]> = [
      ["the organization's admin token", org.token, org.organizationId],
      ["the bootstrap token", server.bootstrapToken, null],
      // Another organization's admin gets the same answer as for a run it could see: nothing about the run leaks.
      ["another organization's admin token", other.token, other.organizationId],
      // Whatever the token's grants: the session comes first.
      [
        "a viewer token",
        await tokenWith(server, org.organizationId, ["run:read", "artifact:read"]),
        org.organizationId,
      ],
      [
        "a token with run:recover but not state:recover",
        await tokenWith(server, org.organizationId, ["run:read", "run:recover"]),
        org.organizationId,
      ],
    ];
    for (const [label, token, organizationId] of callers) {
      for (const path of [raw, state]) {
        const before = await downloadAudits(server, run.id);
        const response = await post(server, path, token);
        const text = await response.text();
        assert.is(response.status, 403, `${label} ${path}: ${text}`);
        assert.not.ok(text.includes(planJson.toString().slice(0, 40)), label);
        const error = (JSON.parse(text) as { errors: Array<{ code: string; detail: string }> }).errors[0];
        assert.is(error.code, "STEP_UP_REQUIRED", label);
        assert.match(error.detail, /only by a person: sign in to the dashboard/);
        assert.match(error.detail, /confirm your password \(POST \/v1\/auth\/step-up\)/);
        const after = await downloadAudits(server, run.id);
        assert.is(after.length, before.length + 1, `${label}: one audit event for the refusal`);
        const event = after.at(-1)!;
        assert.is(event.action, "run.download.refused");
        assert.is(event.organization_id, organizationId);
        const data = dataOf(event);
        assert.is(data.refusal, "STEP_UP_REQUIRED");
        assert.is(data.operation, path === raw ? "downloadRawPlan" : "downloadEmergencyState");
      }
    }
    // Not a single byte went out: no download event besides the refusals.
    assert.equal([...new Set((await downloadAudits(server, run.id)).map((a) => a.action))], ["run.download.refused"]);
    // The plan JSON route of the compatibility surface keeps its own rule (artifact:read_sensitive, tokens welcome, no step-up).
    const json = await fetch(`${server.baseUrl}/api/v2/plans/${run.id.replace(/^run-/, "plan-")}/json-output`, {
      headers: { Authorization: `Bearer ${org.token}` },
    });
    assert.is(json.status, 200);
    assert.ok(Buffer.from(await json.arrayBuffer()).equals(planJson));
  },
);

testEachServer(
  sensitive,
  "a run that uploaded no state has no emergency state; a run without plan JSON has no raw plan",
  async (server) => {
    const { run } = await seededRun(server);
    const admin = await signedInMember(server, "acme", "admin");
    await server.db.knex("state_versions").where({ run_id: run.id }).delete();
    await server.db.knex("artifacts").where({ run_id: run.id, kind: "plan_json" }).delete();
    await errorOf(
      await postAs(admin, `/v1/runs/${run.id}/downloads/emergency-state`),
      404,
      "EMERGENCY_STATE_UNAVAILABLE",
    );
    await errorOf(await postAs(admin, `/v1/runs/${run.id}/downloads/raw-plan`), 404, "RAW_PLAN_UNAVAILABLE");
    assert.is((await downloadAudits(server, run.id)).length, 0);
  },
);

testEachServer(
  sensitive,
  "the audit row is committed even when the client disconnects right after the response headers",
  async (server) => {
    const { run } = await seededRun(server);
    const admin = await signedInMember(server, "acme", "admin");
    const url = new URL(`${server.baseUrl}/v1/runs/${run.id}/downloads/raw-plan`);
    const body = JSON.stringify(reasonBody("disconnect test"));
    const headers = {
      Cookie: admin.session.cookie,
      "X-CSRF-Token": admin.session.csrfToken,
      "Content-Type": "application/vnd.api+json",
      "Content-Length": Buffer.byteLength(body),
    };
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(url, { method: "POST", headers }, (res) => {
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
    assert.is(dataOf(audits[0]).reason, "disconnect test");
  },
);

{
  let now = new Date("2026-12-02T10:00:00.000Z");
  testEachServer(
    sensitive,
    "sessions need a step-up no older than 15 minutes: 14:59 and exactly 15:00 after sign-in work, 15:00.001 and 15:01 are 403 STEP_UP_REQUIRED until the next step-up",
    async (server) => {
      now = new Date("2026-12-02T10:00:00.000Z");
      const { run } = await seededRun(server);
      const admin = await signedInMember(server, "acme", "admin");
      const path = `/v1/runs/${run.id}/downloads/raw-plan`;
      now = new Date("2026-12-02T10:14:59.000Z");
      assert.is((await admin.session.request("POST", path, { body: reasonBody("fresh") })).status, 200);
      now = new Date("2026-12-02T10:15:00.000Z");
      assert.is((await admin.session.request("POST", path, { body: reasonBody("exactly 15 minutes") })).status, 200);
      now = new Date("2026-12-02T10:15:00.001Z");
      await errorOf(
        await admin.session.request("POST", path, { body: reasonBody("one millisecond late") }),
        403,
        "STEP_UP_REQUIRED",
      );
      now = new Date("2026-12-02T10:15:01.000Z");
      const tables = await applicationTables(server);
      const forbidden = async (call: () => Promise<Response>, code: string) =>
        errorOf(await expectNothingWritten(server, call, tables), 403, code);
      await forbidden(() => admin.session.request("POST", path, { body: reasonBody("stale") }), "STEP_UP_REQUIRED");
      await forbidden(
        () =>
          admin.session.request("POST", `/v1/runs/${run.id}/downloads/emergency-state`, { body: reasonBody("stale") }),
        "STEP_UP_REQUIRED",
      );
      await forbidden(
        () => admin.session.request("POST", path, { body: reasonBody("no csrf"), csrf: false }),
        "SESSION_CSRF_INVALID",
      );
      assert.is(
        (
          await admin.session.request("POST", "/v1/auth/step-up", {
            body: { data: { type: "step-ups", attributes: { password: admin.password } } },
          })
        ).status,
        200,
      );
      assert.is((await admin.session.request("POST", path, { body: reasonBody("after step-up") })).status, 200);
      const reasons = (await downloadAudits(server, run.id)).map((a) => dataOf(a).reason);
      assert.equal(reasons, ["fresh", "exactly 15 minutes", "after step-up"]);
      // An operator session is never a sensitive-access principal, fresh or not.
      const operator = await signedInMember(server, "acme", "operator");
      await errorOf(await operator.session.request("POST", path, { body: reasonBody("x") }), 403, "FORBIDDEN");
    },
    { clock: () => now },
  );
}

// ---------------------------------------------------------------------------------------------
const redacted = suite("redacted plan download");

testEachServer(
  redacted,
  "artifact:read (a viewer) downloads the plan-diff artifact as an audited attachment; not ready and unavailable are explicit",
  async (server) => {
    const { org, run, planDiff } = await seededRun(server);
    const viewer = await signedInMember(server, "acme", "viewer");
    const response = await viewer.session.request("GET", `/v1/runs/${run.id}/downloads/redacted-plan`);
    assert.is(response.status, 200);
    assert.equal(await response.json(), JSON.parse(planDiff.toString()));
    assert.is(response.headers.get("content-disposition"), `attachment; filename="${run.id}-plan-changes.json"`);
    assert.equal(
      (await downloadAudits(server, run.id)).map((a) => a.action),
      ["run.download.redacted_plan"],
    );

    const noArtifacts = await tokenWith(server, org.organizationId, ["run:read"]);
    await errorOf(
      await fetch(`${server.baseUrl}/v1/runs/${run.id}/downloads/redacted-plan`, {
        headers: { Authorization: `Bearer ${noArtifacts}` },
      }),
      403,
      "FORBIDDEN",
    );

    await server.db.knex("artifacts").where({ run_id: run.id, kind: "plan_diff" }).delete();
    await server.db.knex("runs").where({ id: run.id }).update({ plan_status: "running" });
    await errorOf(
      await viewer.session.request("GET", `/v1/runs/${run.id}/downloads/redacted-plan`),
      409,
      "RUN_PLAN_CHANGES_NOT_READY",
    );
    await server.db.knex("runs").where({ id: run.id }).update({ plan_status: "errored" });
    await errorOf(
      await viewer.session.request("GET", `/v1/runs/${run.id}/downloads/redacted-plan`),
      404,
      "RUN_PLAN_CHANGES_UNAVAILABLE",
    );
  },
);

sensitive.run();
redacted.run();
