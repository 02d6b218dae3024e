import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createRun, getRunReview } from "../../../client/src/index.ts";
import {
  createOrganizationWithToken,
  createToken,
  createVariable,
  createWorkspace,
  randomId,
  uploadConfiguration,
} from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { assertNoLeaks, review, sessionReview } from "../support/review.ts";
import { signedInMember } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { ApiTokenRow } from "../../src/store/rows.ts";

/** The review's redacted-plan download item of a run whose plan is not stored yet. */
function redactedPlanItem(runId: string) {
  return {
    kind: "redacted_plan",
    method: "GET",
    href: `/v1/runs/${runId}/downloads/redacted-plan`,
    requires_reason: false,
    requires_step_up: false,
    available: false,
  };
}
const SECRET = "s3cr3t-review-value-0xdeadbeef";

/** An organization with an admin token, a workspace holding a sensitive variable, and a pending run on it (no runner). */
async function pendingRun(server: TestServer, message?: string) {
  const org = await createOrganizationWithToken(server, "acme");
  const workspace = await createWorkspace(server, org.token, org.organizationName, {
    name: "app",
    working_directory: "infra",
  });
  await createVariable(server, org.token, workspace.id, { key: "db_password", value: SECRET, sensitive: true });
  const { configurationVersion } = await uploadConfiguration(server, org.token, workspace.id);
  const created = await createRun({
    client: server.v1(org.token),
    path: { workspace_id: workspace.id },
    body: {
      data: {
        type: "runs",
        attributes: { kind: "plan_and_apply", ...(message === undefined ? {} : { message }) },
        relationships: {
          configuration_version: { data: { type: "configuration-versions", id: configurationVersion.id } },
        },
      },
    },
  });
  const run = expectStatus(created, 201).data;
  return { ...org, workspace, run };
}

/** A token of `role` whose grants then lose `permission` (a grant set no built-in role has). */
async function tokenWithout(
  server: TestServer,
  adminToken: string,
  organizationName: string,
  role: "viewer" | "operator" | "admin",
  permission: string,
) {
  const { token, tokenId } = await createToken(server, adminToken, organizationName, role);
  const row = await server.db.knex("api_tokens").where({ id: tokenId }).first<ApiTokenRow>();
  await server.db.knex("permission_grants").where({ principal_id: row.principal_id, permission }).del();
  return { token, principalId: row.principal_id };
}

const getRunReviewSuite = suite("getRunReview");

testEachServer(
  getRunReviewSuite,
  "a pending run: header facts from records, unrecorded facts explicit, every later stage pending, no terminal reason",
  async (server) => {
    const { token, workspace, run } = await pendingRun(server, "Add the bucket");
    const data = await review(server.v1(token), run.id);
    assert.is(data.type, "run-reviews");
    assert.is(data.id, run.id);
    assert.is(data.links.self, `/v1/runs/${run.id}/review`);
    const h = data.attributes.header;
    assert.is(h.title, "Add the bucket");
    assert.is(h.title_generated, false);
    assert.is(h.status, "pending");
    assert.is(h.kind, "plan_and_apply");
    assert.is(h.source, "api");
    assert.is(h.run_id, run.id);
    assert.is(h.created_at, run.attributes.created_at);
    assert.is(h.started_at, null);
    assert.is(h.finished_at, null);
    assert.equal(h.workspace, { id: workspace.id, name: "app", href: `/v1/workspaces/${workspace.id}` });
    assert.equal(h.working_directory, { state: "recorded", value: "infra" });
    for (const fact of [h.commit_sha, h.commit_message, h.source_ref, h.commit_author])
      assert.equal(fact, { state: "not_recorded", value: null });
    const s = data.attributes.stages;
    assert.equal(
      [s.plan.status, s.policy.status, s.approval.status, s.apply.status],
      ["pending", "pending", "pending", "pending"],
    );
    assert.equal(s.plan.summary, { state: "not_finished" });
    assert.is(s.approval.state, "not_reached");
    assert.equal(s.apply.state_version, { state: "not_recorded" });
    assert.is(data.attributes.terminal_reason, null);
    assert.is(data.attributes.recovery, null);
    const e = data.attributes.evidence;
    assert.equal(e.attempts, []);
    assert.equal(
      e.jobs.map((j) => j.phase),
      ["plan"],
    );
    assert.match(e.jobs[0].id, /^job-/);
    assert.equal(e.opentofu_version, { state: "recorded", value: run.attributes.opentofu_version });
    for (const fact of [
      e.definition_sha,
      e.build_sha,
      e.runner_release,
      e.protocol,
      e.job_engine_build,
      e.sandbox_base_profile,
      e.opa_version,
      e.opa_build_commit,
    ]) {
      assert.equal(fact, { state: "not_recorded", value: null });
    }
    await assertNoLeaks(server, data, run.id, [SECRET]);
  },
);

testEachServer(getRunReviewSuite, "a run created without a message gets a server-generated title", async (server) => {
  const { token, run } = await pendingRun(server);
  const h = (await review(server.v1(token), run.id)).attributes.header;
  assert.is(h.title, "API run");
  assert.is(h.title_generated, true);
});

testEachServer(getRunReviewSuite, "available_actions differ for viewer, operator and admin", async (server) => {
  const { token, organizationName, run } = await pendingRun(server, "actions");
  const viewer = await createToken(server, token, organizationName, "viewer");
  const operator = await createToken(server, token, organizationName, "operator");
  assert.equal((await review(server.v1(viewer.token), run.id)).attributes.available_actions, []);
  assert.equal((await review(server.v1(operator.token), run.id)).attributes.available_actions, ["cancel"]);
  assert.equal((await review(server.v1(token), run.id)).attributes.available_actions, ["cancel"]);
  // Minus run:cancel, the same operator has nothing left to do here.
  const noCancel = await tokenWithout(server, token, organizationName, "operator", "run:cancel");
  assert.equal((await review(server.v1(noCancel.token), run.id)).attributes.available_actions, []);
});

const downloads = suite("getRunReview downloads");

testEachServer(
  downloads,
  "an admin token gets all three downloads, guarded by a reason; nothing recorded yet, so none available",
  async (server) => {
    const { token, run } = await pendingRun(server, "downloads");
    const d = (await review(server.v1(token), run.id)).attributes.downloads;
    assert.ok(d && d.state === "permitted");
    assert.equal(d.items, [
      redactedPlanItem(run.id),
      {
        kind: "raw_plan",
        method: "POST",
        href: `/v1/runs/${run.id}/downloads/raw-plan`,
        requires_reason: true,
        requires_step_up: true,
        available: false,
      },
      {
        kind: "emergency_state",
        method: "POST",
        href: `/v1/runs/${run.id}/downloads/emergency-state`,
        requires_reason: true,
        requires_step_up: true,
        available: false,
      },
    ]);
  },
);

testEachServer(
  downloads,
  "an admin session must step up for the sensitive downloads; a viewer session sees only the redacted plan",
  async (server) => {
    const { organizationName, run } = await pendingRun(server, "sessions");
    const admin = await signedInMember(server, organizationName, "admin");
    const adminDownloads = (await sessionReview(admin.session, run.id)).attributes.downloads;
    assert.ok(adminDownloads && adminDownloads.state === "permitted");
    assert.equal(
      adminDownloads.items.map((i) => [i.kind, i.requires_reason, i.requires_step_up]),
      [
        ["redacted_plan", false, false],
        ["raw_plan", true, true],
        ["emergency_state", true, true],
      ],
    );
    const viewer = await signedInMember(server, organizationName, "viewer");
    const viewerReview = await sessionReview(viewer.session, run.id);
    assert.equal(viewerReview.attributes.downloads, {
      state: "permitted",
      items: [redactedPlanItem(run.id)],
    });
    assert.equal(viewerReview.attributes.available_actions, []);
  },
);

testEachServer(
  downloads,
  "no artifact permission at all: no downloads section; a download permission elsewhere only: one note",
  async (server) => {
    const { token, organizationName, run } = await pendingRun(server, "no downloads");
    const blind = await tokenWithout(server, token, organizationName, "viewer", "artifact:read");
    assert.is((await review(server.v1(blind.token), run.id)).attributes.downloads, null);

    // The same grants plus artifact:read on another workspace: some download permission, none here.
    const other = await createWorkspace(server, token, organizationName, { name: "other" });
    await server.services.stores.grants.grant({
      principalId: blind.principalId,
      scopeKind: "workspace",
      scopeId: other.id,
      permission: "artifact:read",
      createdAt: new Date(),
    });
    assert.equal((await review(server.v1(blind.token), run.id)).attributes.downloads, {
      state: "not_permitted",
      note: "You don't have permission to download this run's plan or state.",
    });

    // run:recover is not state:recover: an operator with run:recover but without artifact:read still gets nothing.
    const recoverer = await tokenWithout(server, token, organizationName, "operator", "artifact:read");
    await server.services.stores.grants.grant({
      principalId: recoverer.principalId,
      scopeKind: "organization",
      scopeId: run.relationships.organization.data.id,
      permission: "run:recover",
      createdAt: new Date(),
    });
    assert.is((await review(server.v1(recoverer.token), run.id)).attributes.downloads, null);
  },
);

const refusals = suite("getRunReview refusals");

testEachServer(
  refusals,
  "404 for another organization's run and for an unknown run; 401 without credentials",
  async (server) => {
    const { run } = await pendingRun(server, "private");
    const stranger = await createOrganizationWithToken(server, "globex");
    expectV1Error(
      await getRunReview({ client: server.v1(stranger.token), path: { run_id: run.id } }),
      404,
      "NOT_FOUND",
    );
    const outsider = await signedInMember(server, "globex", "admin");
    const response = await outsider.session.request("GET", `/v1/runs/${run.id}/review`);
    assert.is(response.status, 404);
    expectV1Error(
      await getRunReview({ client: server.v1(stranger.token), path: { run_id: randomId("run") } }),
      404,
      "NOT_FOUND",
    );
    expectV1Error(await getRunReview({ client: server.v1(), path: { run_id: run.id } }), 401, "UNAUTHENTICATED");
  },
);

testEachServer(
  refusals,
  "a store that fails gives an error response, never a review of an empty run",
  async (server) => {
    const { token, run } = await pendingRun(server, "fragile");
    const attempts = server.services.stores.attempts;
    // eslint-disable-next-line @typescript-eslint/unbound-method -- kept only to be put back on the same object
    const original = attempts.listByRun;
    attempts.listByRun = async () => {
      throw new Error("the attempts table is unreadable");
    };
    try {
      const result = await getRunReview({ client: server.v1(token), path: { run_id: run.id } });
      assert.ok(result.response.status >= 500, `status ${result.response.status}`);
      assert.is(result.data, undefined);
      const error = expectV1Error(
        result,
        result.response.status,
        (result.error as { errors: Array<{ code: string }> }).errors[0].code,
      );
      assert.not.match(error.detail ?? "", /unreadable/, "the internal message does not reach the client");
    } finally {
      attempts.listByRun = original;
    }
    await review(server.v1(token), run.id);
  },
);

getRunReviewSuite.run();
downloads.run();
refusals.run();
