// The lists of the TFE HTTP surface: a workspace's runs (status timestamps, users, filters and
// searches) and an organization's workspaces (pages, wildcard names, the current run), and the
// 431 on an over-long query string.
import { readFileSync } from "node:fs";
import { suite, test } from "uvu";
import * as assert from "uvu/assert";
import { phaseId } from "../../src/api/tfe/presenters.ts";
import { matchesWildcard } from "../../src/api/tfe/workspaces.ts";
import { createWorkspace } from "../support/factories.ts";
import { startRun } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { Tfe } from "../support/documents.ts";
import { api, createRun, setUp, uploadedVersion } from "../support/tfe-runs-fixtures.ts";

type ReviewRecord = Parameters<TestServer["services"]["stores"]["reviews"]["record"]>[0];

/** A review decision recorded without plan or state digests (the lists do not read them). */
function recordUndigested(
  server: TestServer,
  review: Pick<ReviewRecord, "runId" | "decision" | "actorId" | "reason" | "decidedAt">,
) {
  return server.services.stores.reviews.record({
    ...review,
    planDigest: null,
    planJsonDigest: null,
    planDiffDigest: null,
    policyResultDigest: null,
    predecessorStateDigest: null,
    dependencyBundleDigest: null,
  });
}

// ---------------------------------------------------------------------------------------------
const runList = suite("GET workspace runs (tfe)");

testEachServer(
  runList,
  "fills the status timestamps of runs, plans and applies from the recorded attempts and review decision",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute)).toISOString();
    const stores = server.services.stores;
    const live = async (runId: string, phase: "plan" | "apply", start: number, end: number) => {
      const attempt = await stores.attempts.start({
        runId,
        phase,
        runnerId: "runner-test",
        region: "local",
        baseProfile: "default",
        now: at(start),
      });
      await stores.attempts.finish(attempt.id, "succeeded", "exit_zero", at(end));
    };
    const decide = (runId: string, decision: "approved" | "discarded", minute: number) =>
      recordUndigested(server, { runId, decision, actorId: null, reason: "test", decidedAt: at(minute) });

    const applied = await startRun(server, token, workspace.id, { "main.tf": "\n" });
    await live(applied.id, "plan", 1, 2);
    await decide(applied.id, "approved", 3);
    await live(applied.id, "apply", 4, 5);
    await server.db
      .knex("runs")
      .where({ id: applied.id })
      .update({
        status: "applied",
        plan_status: "finished",
        apply_status: "finished",
        has_changes: true,
        finished_at: at(5),
      });

    const run = (await api(server, token, "GET", `/runs/${applied.id}?include=plan`)).json as Tfe["RunDocument"];
    const created = run.data.attributes["created-at"];
    assert.equal(run.data.attributes["status-timestamps"], {
      "plan-queueable-at": created,
      "plan-queued-at": created,
      "planning-at": at(1),
      "planned-at": at(2),
      "confirmed-at": at(3),
      "apply-queued-at": at(3),
      "applying-at": at(4),
      "applied-at": at(5),
    });
    // The run attributes go-tfe reads: what StackShip always does, and no cancellation.
    const a = run.data.attributes;
    assert.equal(
      [a.refresh, a["refresh-only"], a["allow-empty-apply"], a["target-addrs"], a["replace-addrs"], a["canceled-at"]],
      [true, false, false, [], [], null],
    );
    const planTimestamps = { "queued-at": created, "started-at": at(1), "finished-at": at(2) };
    assert.equal((run.included![0] as Tfe["Plan"]).attributes["status-timestamps"], planTimestamps);
    assert.equal(
      ((await api(server, token, "GET", `/plans/${phaseId(applied.id, "plan")}`)).json as Tfe["PlanDocument"]).data
        .attributes["status-timestamps"],
      planTimestamps,
    );
    assert.equal(
      ((await api(server, token, "GET", `/applies/${phaseId(applied.id, "apply")}`)).json as Tfe["ApplyDocument"]).data
        .attributes["status-timestamps"],
      {
        "queued-at": at(3),
        "started-at": at(4),
        "finished-at": at(5),
      },
    );
    const listed = (
      (await api(server, token, "GET", `/workspaces/${workspace.id}/runs`)).json as Tfe["RunListDocument"]
    ).data.find((r) => r.id === applied.id);
    assert.equal(listed!.attributes["status-timestamps"], run.data.attributes["status-timestamps"]);

    const discarded = await startRun(server, token, workspace.id, { "main.tf": "\n" });
    await live(discarded.id, "plan", 11, 12);
    await decide(discarded.id, "discarded", 13);
    await server.db
      .knex("runs")
      .where({ id: discarded.id })
      .update({ status: "discarded", plan_status: "finished", has_changes: true, finished_at: at(13) });
    const shown = ((await api(server, token, "GET", `/runs/${discarded.id}`)).json as Tfe["RunDocument"]).data
      .attributes["status-timestamps"];
    assert.is(shown["planned-at"], at(12));
    assert.is(shown["discarded-at"], at(13));
    assert.is(shown["confirmed-at"], undefined);
    assert.equal(
      ((await api(server, token, "GET", `/applies/${phaseId(discarded.id, "apply")}`)).json as Tfe["ApplyDocument"])
        .data.attributes["status-timestamps"],
      {},
    );

    const canceled = await startRun(server, token, workspace.id, { "main.tf": "\n" });
    assert.is((await api(server, token, "POST", `/runs/${canceled.id}/actions/cancel`, "{}")).status, 202);
    const canceledAt = ((await api(server, token, "GET", `/runs/${canceled.id}`)).json as Tfe["RunDocument"]).data
      .attributes["status-timestamps"];
    assert.ok(canceledAt["canceled-at"], JSON.stringify(canceledAt));
    assert.is(
      ((await api(server, token, "GET", `/runs/${canceled.id}`)).json as Tfe["RunDocument"]).data.attributes[
        "canceled-at"
      ],
      canceledAt["canceled-at"],
    );
    assert.is(canceledAt["planning-at"], undefined);
    assert.ok(
      ((await api(server, token, "GET", `/plans/${phaseId(canceled.id, "plan")}`)).json as Tfe["PlanDocument"]).data
        .attributes["status-timestamps"]["canceled-at"],
    );
  },
);

testEachServer(
  runList,
  "shows created-by, confirmed-by and the workspace's locked-by, and includes users and the workspace on request",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const approved = await startRun(server, token, workspace.id, { "main.tf": "\n" });
    const creator = (await server.services.stores.runs.getById(approved.id))!.createdBy!;
    assert.ok(creator);
    await recordUndigested(server, {
      runId: approved.id,
      decision: "approved",
      actorId: creator,
      reason: "ok",
      decidedAt: new Date(),
    });
    const other = await startRun(server, token, workspace.id, { "main.tf": "\n" });

    const shown = (await api(server, token, "GET", `/runs/${approved.id}?include=created_by,confirmed_by`))
      .json as Tfe["RunDocument"];
    assert.equal(shown.data.relationships["created-by"]!.data, { type: "users", id: creator });
    assert.equal(shown.data.relationships["confirmed-by"]!.data, { type: "users", id: creator });
    const included = shown.included!;
    assert.is(included.length, 1);
    assert.is(included[0].type, "users");
    assert.is(included[0].id, creator);
    assert.is(typeof (included[0] as Tfe["User"]).attributes.username, "string");
    assert.equal(
      ((await api(server, token, "GET", `/runs/${other.id}`)).json as Tfe["RunDocument"]).data.relationships[
        "confirmed-by"
      ]!.data,
      null,
    );

    const listed = (
      await api(server, token, "GET", `/workspaces/${workspace.id}/runs?include=created_by,confirmed_by,workspace`)
    ).json as Tfe["RunListDocument"];
    assert.equal(
      listed.data.map((run) => run.id),
      [other.id, approved.id],
    );
    assert.equal(
      listed.included!.map((resource) => `${resource.type}/${resource.id}`),
      [`users/${creator}`, `workspaces/${workspace.id}`],
    );
    assert.is(
      ((await api(server, token, "GET", `/workspaces/${workspace.id}/runs`)).json as Tfe["RunListDocument"]).included,
      undefined,
    );

    assert.equal(
      ((await api(server, token, "GET", `/workspaces/${workspace.id}`)).json as Tfe["WorkspaceDocument"]).data
        .relationships["locked-by"]!.data,
      null,
    );
    assert.is(
      (
        await api(
          server,
          token,
          "POST",
          `/workspaces/${workspace.id}/actions/lock`,
          JSON.stringify({ reason: "maintenance" }),
        )
      ).status,
      200,
    );
    const locked = ((await api(server, token, "GET", `/workspaces/${workspace.id}`)).json as Tfe["WorkspaceDocument"])
      .data;
    assert.is(locked.attributes.locked, true);
    assert.is(locked.relationships["locked-by"]!.data!.type, "users");
    assert.ok(locked.relationships["locked-by"]!.data!.id);
  },
);

testEachServer(
  runList,
  "filters by status, operation and source (comma-separated) and searches user, commit and basic text; refuses unknown filters with 400",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const fromGitHub = await startRun(server, token, workspace.id, { "main.tf": "\n" });
    const sha = "abc123def4567890abc123def4567890abc12345";
    await server.db.knex("runs").where({ id: fromGitHub.id }).update({
      status: "awaiting_approval",
      plan_status: "finished",
      has_changes: true,
      commit_sha: sha,
      commit_message: "m",
      commit_author: "octocat",
      commit_ref: "refs/heads/main",
      commit_repository: "acme/app",
      commit_fork: false,
    });
    const fromCli = await createRun(server, token, workspace.id, await uploadedVersion(server, token, workspace.id), {
      message: "Queued from the CLI",
    });
    assert.is(fromCli.status, 201, JSON.stringify(fromCli.json));
    const canceled = await startRun(server, token, workspace.id, { "main.tf": "\n" });
    assert.is((await api(server, token, "POST", `/runs/${canceled.id}/actions/cancel`, "{}")).status, 202);

    const list = async (parameters: string) => {
      const listed = await api(server, token, "GET", `/workspaces/${workspace.id}/runs?${parameters}`);
      assert.is(listed.status, 200, `${parameters}: ${JSON.stringify(listed.json)}`);
      const document = listed.json as Tfe["RunListDocument"];
      assert.is(document.meta.pagination["total-count"], document.data.length, parameters);
      return document.data.map((run) => run.id);
    };
    const cli = (fromCli.json as Tfe["RunDocument"]).data.id;
    assert.equal(await list(""), [canceled.id, cli, fromGitHub.id]);
    assert.equal(await list("filter[status]=planned"), [fromGitHub.id]);
    assert.equal(await list("filter[status]=planned,canceled"), [canceled.id, fromGitHub.id]);
    assert.equal(await list("filter[status]=applied"), []);
    assert.equal(await list("filter[operation]=plan_only"), [cli]);
    assert.equal(await list("filter[operation]=plan_and_apply,destroy"), [canceled.id, fromGitHub.id]);
    assert.equal(await list("filter[source]=cli"), [cli]);
    assert.equal(await list("filter[source]=tfe-ui"), []);
    assert.equal(await list("filter[status]=pending,canceled&filter[operation]=plan_and_apply"), [canceled.id]);
    assert.equal(await list("search[commit]=ABC123"), [fromGitHub.id]);
    assert.equal(await list("search[commit]=123"), []);
    assert.equal(await list("search[user]=OCTO"), [fromGitHub.id]);
    assert.equal(await list("search[basic]=queued%20from"), [cli]);
    assert.equal(await list(`search[basic]=${canceled.id}`), [canceled.id]);
    assert.equal(await list("search[basic]=abc123"), [fromGitHub.id]);
    // search[user] and search[commit] take priority over search[basic], as in TFE.
    assert.equal(await list("search[user]=octocat&search[basic]=nothing-matches"), [fromGitHub.id]);

    for (const unknown of ["filter[status_group]=final", "search[name]=x", "filter[agent_pool_names]=a"]) {
      const refused = await api(server, token, "GET", `/workspaces/${workspace.id}/runs?${unknown}`);
      assert.is(refused.status, 400, unknown);
      const error = (refused.json as Tfe["ErrorDocument"]).errors[0];
      assert.is(error.code, "REQUEST_INVALID", unknown);
      assert.is(error.source!.parameter, unknown.split("=")[0], unknown);
    }
  },
);

// ---------------------------------------------------------------------------------------------
const workspaceList = suite("GET organization workspaces (tfe)");

testEachServer(
  workspaceList,
  "pages until an empty page with its own number, matches search[wildcard-name] and search[exclude-tags], refuses unknown filters",
  async (server) => {
    const { organizationName, token, workspace } = await setUp(server);
    for (const name of ["w1-a", "w1-b", "prod", "staging-prod", "a-mid-b", "w2"])
      await createWorkspace(server, token, organizationName, { name });
    const tagged = await api(server, token, "GET", `/organizations/${organizationName}/workspaces/w1-b`);
    assert.is(
      (
        await api(
          server,
          token,
          "POST",
          `/workspaces/${(tagged.json as Tfe["WorkspaceDocument"]).data.id}/relationships/tags`,
          JSON.stringify({ data: [{ type: "tags", attributes: { name: "legacy" } }] }),
        )
      ).status,
      204,
    );
    const list = async (parameters: string) => {
      const listed = await api(server, token, "GET", `/organizations/${organizationName}/workspaces?${parameters}`);
      assert.is(listed.status, 200, `${parameters}: ${JSON.stringify(listed.json)}`);
      const document = listed.json as Tfe["WorkspaceListDocument"];
      assert.ok(document.meta.pagination, parameters);
      return document;
    };

    // A client paging until it gets an empty page stops, having seen every workspace once.
    const seen: string[] = [];
    for (let page = 1; ; page += 1) {
      const listed = await list(`page[size]=2&page[number]=${page}`);
      const p = listed.meta.pagination;
      assert.is(p["current-page"], page);
      assert.is(p["total-count"], 7);
      assert.is(p["total-pages"], 4);
      assert.is(p["next-page"], page < 4 ? page + 1 : null);
      if (listed.data.length === 0) {
        assert.is(page, 5);
        break;
      }
      seen.push(...listed.data.map((w) => w.attributes.name));
    }
    assert.equal([...seen].sort(), ["a-mid-b", "app", "prod", "staging-prod", "w1-a", "w1-b", "w2"]);
    const far = await list("page[number]=999");
    assert.equal(far.data, []);
    assert.is(far.meta.pagination["current-page"], 999);
    assert.is(far.meta.pagination["next-page"], null);

    const names = async (parameters: string) => (await list(parameters)).data.map((w) => w.attributes.name).sort();
    assert.equal(await names("search[wildcard-name]=w1*"), ["w1-a", "w1-b"]);
    assert.equal(await names("search[wildcard-name]=*prod"), ["prod", "staging-prod"]);
    assert.equal(await names("search[wildcard-name]=*mid*"), ["a-mid-b"]);
    assert.equal(await names("search[wildcard-name]=w2"), ["w2"]);
    assert.equal(await names("search[wildcard-name]=w*"), ["w1-a", "w1-b", "w2"]);
    assert.equal(await names("search[wildcard-name]=w1*&search[exclude-tags]=legacy"), ["w1-a"]);
    assert.equal(await names(`search[wildcard-name]=${encodeURIComponent("a*p*")}`), ["app"]);
    assert.equal(await names("search[wildcard-name]=*-*"), ["a-mid-b", "staging-prod", "w1-a", "w1-b"]);
    assert.equal(await names("search[wildcard-name]=%5E.*"), []);
    assert.is((await list(`search[wildcard-name]=${workspace.attributes.name}`)).data[0].id, workspace.id);

    for (const unknown of [
      "filter[current-run][status]=applied",
      "search[unknown]=x",
      "filter[tagged][0][key]=legacy",
    ]) {
      const refused = await api(server, token, "GET", `/organizations/${organizationName}/workspaces?${unknown}`);
      assert.is(refused.status, 400, unknown);
      assert.is((refused.json as Tfe["ErrorDocument"]).errors[0].code, "REQUEST_INVALID", unknown);
    }
  },
);

testEachServer(
  workspaceList,
  "shows the current run (the oldest in progress, never a speculative one) and includes it with include=current_run",
  async (server) => {
    const { organizationName, token, workspace } = await setUp(server);
    const show = async (include = "") => {
      const shown = await api(
        server,
        token,
        "GET",
        `/workspaces/${workspace.id}${include ? `?include=${include}` : ""}`,
      );
      return { status: shown.status, json: shown.json as Tfe["WorkspaceDocument"] };
    };
    assert.is((await show()).json.data.relationships["current-run"].data, null);
    const speculative = await createRun(
      server,
      token,
      workspace.id,
      await uploadedVersion(server, token, workspace.id),
      {},
    );
    assert.is(speculative.status, 201);
    assert.is((await show("current_run")).json.data.relationships["current-run"].data, null);
    assert.equal((await show("current_run")).json.included, []);

    const first = await startRun(server, token, workspace.id, { "main.tf": "\n" });
    const second = await startRun(server, token, workspace.id, { "main.tf": "\n" });
    const shown = await show("current_run,task_stages");
    assert.is(shown.status, 200, JSON.stringify(shown.json));
    assert.equal(shown.json.data.relationships["current-run"].data, { type: "runs", id: first.id });
    const included = shown.json.included!;
    assert.is(included.length, 1);
    assert.is(included[0].id, first.id);
    assert.is(included[0].type, "runs");
    assert.is(included[0].attributes.status, "pending");
    assert.is((await show()).json.included, undefined);

    const byName = await api(
      server,
      token,
      "GET",
      `/organizations/${organizationName}/workspaces/${workspace.attributes.name}?include=current_run`,
    );
    assert.is((byName.json as Tfe["WorkspaceDocument"]).included![0].id, first.id);
    const listed = await api(server, token, "GET", `/organizations/${organizationName}/workspaces?include=current_run`);
    const listedDocument = listed.json as Tfe["WorkspaceListDocument"];
    assert.equal(listedDocument.data[0].relationships["current-run"].data, { type: "runs", id: first.id });
    assert.equal(
      listedDocument.included!.map((run) => run.id),
      [first.id],
    );

    // Once the first run ends, the one waiting behind it is current; after all end, the newest.
    assert.is((await api(server, token, "POST", `/runs/${first.id}/actions/cancel`, "{}")).status, 202);
    assert.equal((await show()).json.data.relationships["current-run"].data, { type: "runs", id: second.id });
    assert.is((await api(server, token, "POST", `/runs/${second.id}/actions/cancel`, "{}")).status, 202);
    assert.equal((await show()).json.data.relationships["current-run"].data, { type: "runs", id: second.id });
  },
);

test("the spec declares 431 on every operation that takes a query string", () => {
  const spec = JSON.parse(readFileSync(new URL("../../../generated/tfe/openapi.json", import.meta.url), "utf8")) as {
    paths: Record<
      string,
      Record<
        string,
        { operationId?: string; parameters?: { $ref?: string; in?: string }[]; responses?: Record<string, unknown> }
      >
    >;
    components: { parameters: Record<string, { in: string }> };
  };
  const isQuery = (parameter: { $ref?: string; in?: string }) =>
    (parameter.$ref ? spec.components.parameters[parameter.$ref.split("/").pop()!]?.in : parameter.in) === "query";
  const withQuery: string[] = [];
  for (const item of Object.values(spec.paths)) {
    const common = ((item.parameters ?? []) as unknown as { $ref?: string; in?: string }[]).filter(isQuery);
    for (const method of ["get", "post", "put", "patch", "delete"]) {
      const operation = item[method];
      if (!operation) continue;
      if (common.length === 0 && !(operation.parameters ?? []).some(isQuery)) continue;
      withQuery.push(operation.operationId!);
      assert.ok(operation.responses?.["431"], `${operation.operationId} takes a query string but does not declare 431`);
    }
  }
  assert.ok(withQuery.includes("listWorkspaces") && withQuery.includes("listWorkspaceRuns"), withQuery.join(", "));
});

testEachServer(
  workspaceList,
  "answers a request head over 16 KiB (a long query string) with 431, as declared",
  async (server) => {
    const { organizationName, token } = await setUp(server);
    const listed = await fetch(
      `${server.baseUrl}/api/v2/organizations/${organizationName}/workspaces?search[name]=${"a".repeat(17 * 1024)}`,
      {
        headers: { Authorization: `Bearer ${token}` },
      },
    );
    assert.is(listed.status, 431);
  },
);

test("matchesWildcard: literal text, `*` for any text, whole names only", () => {
  const cases: [string, string, boolean][] = [
    ["prod", "prod", true],
    ["prod", "pro", false],
    ["a", "a*a", false],
    ["aa", "a*a", true],
    ["abcabc", "*b*b*", true],
    ["abc", "*b*b*", false],
    ["a.c", "a.c", true],
    ["abc", "a.c", false],
    ["anything", "*", true],
    ["", "*", true],
  ];
  for (const [name, pattern, expected] of cases)
    assert.is(matchesWildcard(name, pattern), expected, `${name} ~ ${pattern}`);
});
runList.run();
workspaceList.run();
test.run();
