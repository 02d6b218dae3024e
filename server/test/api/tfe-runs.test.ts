// The run side of the compatibility surface at the HTTP level: configuration versions, run
// documents and actions, plans/applies and the log protocol (contract §6, §7, §10, §16). Run and
// workspace lists are tfe-lists.test.ts; PATCH of workspaces and projects is tfe-workspace-patch.test.ts.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { phaseId, presentApply, presentPlan, presentRun } from "../../src/api/tfe/presenters.ts";
import type { Run } from "../../src/domain/records.ts";
import { makeConfigurationTarball, putUpload } from "../support/factories.ts";
import { startRun } from "../support/runs.ts";
import { testEachServer } from "../support/test-server.ts";
import { answerAs, type Tfe } from "../support/documents.ts";
import { api, createRun, createVersion, setUp, uploadedVersion } from "../support/tfe-runs-fixtures.ts";

// ---------------------------------------------------------------------------------------------
const cv = suite("configuration versions (tfe)");

testEachServer(
  cv,
  "creates a speculative version with an absolute upload URL; uploaded synchronously; a run on it is speculative",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const created = answerAs<Tfe["ConfigurationVersionDocument"]>(
      await createVersion(server, token, workspace.id, {
        "auto-queue-runs": false,
        speculative: true,
        provisional: false,
      }),
    );
    assert.is(created.status, 201, JSON.stringify(created.json));
    const version = created.json.data;
    assert.is(version.type, "configuration-versions");
    assert.is(version.attributes.status, "pending");
    assert.is(version.attributes.speculative, true);
    assert.match(version.attributes["upload-url"]!, new RegExp(`^${server.baseUrl}/`));

    const put = await putUpload(version.attributes["upload-url"]!, makeConfigurationTarball());
    assert.ok(put.status >= 200 && put.status < 300);
    const shown = answerAs<Tfe["ConfigurationVersionDocument"]>(
      await api(server, token, "GET", `/configuration-versions/${version.id}`),
    );
    assert.is(shown.status, 200);
    assert.is(shown.json.data.attributes.status, "uploaded");
    assert.is(shown.json.data.attributes["upload-url"], null);

    // The CLI never sends plan-only: the speculative version decides.
    const run = answerAs<Tfe["RunDocument"]>(
      await createRun(server, token, workspace.id, version.id, {
        "auto-apply": false,
        refresh: true,
        "save-plan": false,
      }),
    );
    assert.is(run.status, 201, JSON.stringify(run.json));
    assert.is(run.json.data.attributes["plan-only"], true);
    assert.is((await server.services.stores.runs.getById(run.json.data.id))?.kind, "speculative");
  },
);

testEachServer(
  cv,
  "refuses -target, -refresh-only and malformed variables with 422 invalid_document instead of dropping them, and writes no run",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const versionId = await uploadedVersion(server, token, workspace.id);
    const invalidVariables = [
      { variables: [{ key: "a b", value: '"hi"' }] },
      {
        variables: [
          { key: "x", value: "1" },
          { key: "x", value: "2" },
        ],
      },
    ];
    for (const attributes of [
      ...invalidVariables,
      { "target-addrs": ["terraform_data.x"] },
      { "refresh-only": true },
    ]) {
      const run = answerAs<Tfe["ErrorDocument"]>(await createRun(server, token, workspace.id, versionId, attributes));
      assert.is(run.status, 422, JSON.stringify(run.json));
      assert.is(run.json.errors[0].title, "invalid_document");
      assert.is(run.json.errors[0].status, "422");
    }
    assert.equal((await server.services.stores.runs.listByWorkspace(workspace.id, { limit: 10 })).runs, []);
  },
);

testEachServer(
  cv,
  "-var values become run variables in the input snapshot, replacing workspace terraform variables of the same key only",
  async (server) => {
    const { token, workspace } = await setUp(server);
    for (const [key, value, category] of [
      ["greeting", "from-workspace", "terraform"],
      ["greeting", "env-kept", "env"],
      ["other", "kept", "terraform"],
    ]) {
      await server.services.stores.variables.create({
        workspaceId: workspace.id,
        key,
        value,
        category: category as "terraform" | "env",
        hcl: false,
        sensitive: false,
        description: null,
        createdAt: new Date(),
      });
    }
    const versionId = await uploadedVersion(server, token, workspace.id);
    const run = await createRun(server, token, workspace.id, versionId, {
      variables: [
        { key: "greeting", value: '"from-cli"' },
        { key: "count", value: "3" },
      ],
    });
    assert.is(run.status, 201, JSON.stringify(run.json));
    const stored = await server.services.stores.runs.getById((run.json as Tfe["RunDocument"]).data.id);
    const snapshot = await server.services.stores.snapshots.getById(stored!.inputSnapshotId);
    const variables = snapshot!.document.variables.map((v) => ({
      key: v.key,
      category: v.category,
      hcl: v.hcl,
      value: "value" in v ? v.value : null,
    }));
    assert.equal(variables, [
      { key: "greeting", category: "env", hcl: false, value: "env-kept" },
      { key: "count", category: "terraform", hcl: true, value: "3" },
      { key: "greeting", category: "terraform", hcl: true, value: '"from-cli"' },
      { key: "other", category: "terraform", hcl: false, value: "kept" },
    ]);
  },
);

// ---------------------------------------------------------------------------------------------
const runs = suite("runs, plans, applies and actions (tfe)");

testEachServer(
  runs,
  "shows a pending run with plan and apply relationships, includes workspace and plan, accepts unknown includes; run-events is an empty list",
  async (server) => {
    const { token, workspace, organizationName } = await setUp(server);
    const run = await startRun(server, token, workspace.id, { "main.tf": 'resource "terraform_data" "x" {}\n' });
    const shown = answerAs<Tfe["RunDocument"]>(await api(server, token, "GET", `/runs/${run.id}?include=task_stages`));
    assert.is(shown.status, 200);
    const a = shown.json.data.attributes;
    assert.is(a.status, "pending");
    assert.equal(a.actions, {
      "is-cancelable": true,
      "is-confirmable": false,
      "is-discardable": false,
      "is-force-cancelable": false,
    });
    assert.equal(shown.json.data.relationships.plan.data, { type: "plans", id: phaseId(run.id, "plan") });
    assert.equal(shown.json.data.relationships.apply.data, { type: "applies", id: phaseId(run.id, "apply") });
    assert.is(shown.json.included, undefined);

    const included = answerAs<Tfe["RunDocument"]>(
      await api(server, token, "GET", `/runs/${run.id}?include=${encodeURIComponent("workspace,plan")}`),
    );
    assert.is(included.status, 200);
    assert.equal(
      included.json.included!.map((r) => r.type),
      ["workspaces", "plans"],
    );
    assert.is((included.json.included![0] as Tfe["Workspace"]).relationships.organization.data!.id, organizationName);

    const events = await api(server, token, "GET", `/runs/${run.id}/run-events`);
    assert.is(events.status, 200);
    assert.equal(events.json, { data: [] });

    const queue = answerAs<Tfe["RunListDocument"]>(
      await api(server, token, "GET", `/organizations/${organizationName}/runs/queue`),
    );
    assert.is(queue.status, 200);
    assert.equal(
      queue.json.data.map((r) => [r.id, r.attributes["position-in-queue"]]),
      [[run.id, 0]],
    );
    assert.is(queue.json.meta.pagination["total-pages"], 1);
    const listed = answerAs<Tfe["RunListDocument"]>(
      await api(server, token, "GET", `/workspaces/${workspace.id}/runs?page%5Bnumber%5D=1&page%5Bsize%5D=20`),
    );
    assert.is(listed.status, 200);
    assert.equal(
      listed.json.data.map((r) => r.id),
      [run.id],
    );
    assert.is(listed.json.meta.pagination["next-page"], null);
  },
);

testEachServer(
  runs,
  "run actions take {} or a comment with any content type, or no body; refusals are 409 with title and detail",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const run = await startRun(server, token, workspace.id, { "main.tf": 'resource "terraform_data" "x" {}\n' });
    const apply = answerAs<Tfe["ErrorDocument"]>(
      await api(server, token, "POST", `/runs/${run.id}/actions/apply`, "{}"),
    );
    assert.is(apply.status, 409, JSON.stringify(apply.json));
    assert.is(apply.json.errors[0].status, "409");
    assert.match(apply.json.errors[0].detail!, "awaits approval");
    const discard = await api(
      server,
      token,
      "POST",
      `/runs/${run.id}/actions/discard`,
      JSON.stringify({ comment: "no" }),
      "text/plain",
    );
    assert.is(discard.status, 409, JSON.stringify(discard.json));
    const cancel = await api(server, token, "POST", `/runs/${run.id}/actions/cancel`);
    assert.is(cancel.status, 202, JSON.stringify(cancel.json));
    const shown = answerAs<Tfe["RunDocument"]>(await api(server, token, "GET", `/runs/${run.id}`));
    assert.is(shown.json.data.attributes.status, "canceled");
    assert.is(shown.json.data.attributes.actions["is-cancelable"], false);
    const plan = answerAs<Tfe["PlanDocument"]>(await api(server, token, "GET", `/plans/${phaseId(run.id, "plan")}`));
    assert.is(plan.json.data.attributes.status, "canceled");
    const applyPhase = answerAs<Tfe["ApplyDocument"]>(
      await api(server, token, "GET", `/applies/${phaseId(run.id, "apply")}`),
    );
    assert.is(applyPhase.json.data.attributes.status, "unreachable");
  },
);

testEachServer(
  runs,
  "log-read-url: absolute, signed in the path, no Authorization; byte windows of STX log ETX; 200 empty past the end; a forged token is 404",
  async (server) => {
    const { token, workspace } = await setUp(server);
    // The human log form, whatever the default (with structured output the URL serves plan_json: structured-logs.test.ts).
    assert.is(
      (
        await api(
          server,
          token,
          "PATCH",
          `/workspaces/${workspace.id}`,
          JSON.stringify({ data: { type: "workspaces", attributes: { "structured-run-output-enabled": false } } }),
        )
      ).status,
      200,
    );
    const run = await startRun(server, token, workspace.id, { "main.tf": 'resource "terraform_data" "x" {}\n' });
    const plan = answerAs<Tfe["PlanDocument"]>(await api(server, token, "GET", `/plans/${phaseId(run.id, "plan")}`));
    assert.is(plan.status, 200);
    const url = plan.json.data.attributes["log-read-url"];
    assert.match(url, new RegExp(`^${server.baseUrl}/api/v2/logs/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
    const read = async (offset: number, limit = 65536) => {
      const response = await fetch(`${url}?limit=${limit}&offset=${offset}`);
      return {
        status: response.status,
        bytes: Buffer.from(await response.arrayBuffer()),
        type: response.headers.get("content-type"),
      };
    };
    // Nothing written yet: STX only, never 404.
    let window = await read(0);
    assert.is(window.status, 200);
    assert.match(window.type ?? "", /^text\/plain/);
    assert.equal([...window.bytes], [0x02]);

    await server.services.stores.logs.append(run.id, "plan", "héllo\n", false, new Date());
    window = await read(1, 3);
    assert.equal(window.bytes, Buffer.from("héllo\n", "utf8").subarray(0, 3));
    await server.services.stores.logs.append(run.id, "plan", "done\n", true, new Date());
    // The plan log is complete, but the run has not left the policy stage: no ETX yet.
    window = await read(0);
    assert.equal(window.bytes, Buffer.concat([Buffer.from([0x02]), Buffer.from("héllo\ndone\n", "utf8")]));
    // The policy stage's log follows the plan's in the same stream; ETX once it is complete.
    await server.services.stores.logs.append(run.id, "policy", "policy ok\n", true, new Date());
    window = await read(0);
    assert.equal(
      window.bytes,
      Buffer.concat([Buffer.from([0x02]), Buffer.from("héllo\ndone\n\npolicy ok\n", "utf8"), Buffer.from([0x03])]),
    );
    const end = await read(window.bytes.length);
    assert.is(end.status, 200);
    assert.is(end.bytes.length, 0);

    const forged = await fetch(url.replace(/\.[A-Za-z0-9_-]+$/, ".AAAAAAAAAAAAAAAAAAAAAA"));
    assert.is(forged.status, 404);

    // The apply log starts with three header lines the CLI skips.
    const apply = answerAs<Tfe["ApplyDocument"]>(
      await api(server, token, "GET", `/applies/${phaseId(run.id, "apply")}`),
    );
    const applyLog = Buffer.from(
      await (await fetch(`${apply.json.data.attributes["log-read-url"]}?limit=65536&offset=0`)).arrayBuffer(),
    ).toString("utf8");
    assert.is(applyLog.slice(1).split("\n").length - 1, 3);
  },
);

testEachServer(runs, "maps the native lifecycle to the TFE statuses and actions the CLI needs", async (server) => {
  const { token, workspace } = await setUp(server);
  const base = (await server.services.stores.runs.getById(
    (await startRun(server, token, workspace.id, { "main.tf": "\n" })).id,
  ))!;
  const withStatus = (status: Run["status"], execution: Partial<Run["execution"]> = {}): Run => ({
    ...base,
    status,
    execution: { ...base.execution, ...execution },
  });
  const cases: Array<[Run, string, string, string, boolean, boolean, boolean]> = [
    // run, run status, plan status, apply status, confirmable, discardable, cancelable
    [withStatus("pending"), "pending", "pending", "pending", false, false, true],
    [withStatus("planning", { planStatus: "running" }), "planning", "running", "pending", false, false, true],
    [
      withStatus("policy_checking", { planStatus: "finished", hasChanges: true }),
      "policy_checking",
      "running",
      "pending",
      false,
      false,
      true,
    ],
    [
      withStatus("awaiting_approval", { planStatus: "finished", hasChanges: true }),
      "planned",
      "finished",
      "pending",
      true,
      true,
      false,
    ],
    [
      withStatus("planned_and_finished", { planStatus: "finished", hasChanges: true }),
      "planned_and_finished",
      "finished",
      "unreachable",
      false,
      false,
      false,
    ],
    [
      withStatus("applying", { planStatus: "finished", hasChanges: true }),
      "apply_queued",
      "finished",
      "queued",
      false,
      false,
      true,
    ],
    [
      withStatus("applying", { planStatus: "finished", hasChanges: true, applyStatus: "running" }),
      "applying",
      "finished",
      "running",
      false,
      false,
      true,
    ],
    [
      withStatus("applied", { planStatus: "finished", hasChanges: true, applyStatus: "finished" }),
      "applied",
      "finished",
      "finished",
      false,
      false,
      false,
    ],
    [
      withStatus("discarded", { planStatus: "finished", hasChanges: true }),
      "discarded",
      "finished",
      "unreachable",
      false,
      false,
      false,
    ],
    [withStatus("errored", { planStatus: "errored" }), "errored", "errored", "unreachable", false, false, false],
    [
      withStatus("needs_recovery", { planStatus: "finished", applyStatus: "interrupted" }),
      "errored",
      "finished",
      "errored",
      false,
      false,
      false,
    ],
  ];
  for (const [run, status, planStatus, applyStatus, confirmable, discardable, cancelable] of cases) {
    const document = presentRun(run);
    const label = `${run.status}/${run.execution.planStatus}/${run.execution.applyStatus}`;
    assert.is(document.attributes.status, status, label);
    assert.is(presentPlan(run, "http://x/").attributes.status, planStatus, label);
    assert.is(presentApply(run, "http://x/").attributes.status, applyStatus, label);
    assert.is(document.attributes.actions["is-confirmable"], confirmable, label);
    assert.is(document.attributes.actions["is-discardable"], discardable, label);
    assert.is(document.attributes.actions["is-cancelable"], cancelable, label);
    assert.is(document.attributes["has-changes"], run.execution.hasChanges ?? false, label);
  }
});

cv.run();
runs.run();
