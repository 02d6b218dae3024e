// The run side of the compatibility surface at the HTTP level: configuration versions, run
// documents and actions, plans/applies and the log protocol (contract §6, §7, §10, §16).
import { readFileSync } from "node:fs";
import { suite, test } from "uvu";
import * as assert from "uvu/assert";
import { phaseId, presentApply, presentPlan, presentRun } from "../../src/api/tfe/presenters.ts";
import { matchesWildcard } from "../../src/api/tfe/workspaces.ts";
import type { Run } from "../../src/domain/records.ts";
import { createOrganizationWithToken, createWorkspace, makeConfigurationTarball, pinnedOpenTofuVersion, putUpload } from "../support/factories.ts";
import { startRun } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const JSON_API = "application/vnd.api+json";

/** The clock of the tests that pass it to their server. */
let clock = new Date("2026-03-01T10:00:00.000Z");

async function api(server: TestServer, token: string | null, method: string, path: string, body?: string, contentType = JSON_API) {
  const headers: Record<string, string> = { Accept: JSON_API };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined || method !== "GET") headers["Content-Type"] = contentType;
  const response = await fetch(`${server.baseUrl}/api/v2${path}`, { method, headers, body });
  const text = await response.text();
  const json = /json/.test(response.headers.get("content-type") ?? "") && text ? (JSON.parse(text) as any) : undefined;
  return { status: response.status, json, headers: response.headers };
}

async function setUp(server: TestServer) {
  const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
  const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
  return { organizationName, token, workspace };
}

function createVersion(server: TestServer, token: string, workspaceId: string, attributes: Record<string, unknown>) {
  return api(server, token, "POST", `/workspaces/${workspaceId}/configuration-versions`, JSON.stringify({ data: { type: "configuration-versions", attributes } }));
}

/** A speculative configuration version with the default tarball uploaded; its id. */
async function uploadedVersion(server: TestServer, token: string, workspaceId: string): Promise<string> {
  const created = await createVersion(server, token, workspaceId, { speculative: true });
  await putUpload(created.json.data.attributes["upload-url"], makeConfigurationTarball());
  return created.json.data.id;
}

function createRun(server: TestServer, token: string, workspaceId: string, versionId: string, attributes: Record<string, unknown>) {
  return api(
    server,
    token,
    "POST",
    "/runs",
    JSON.stringify({
      data: {
        type: "runs",
        attributes,
        relationships: {
          workspace: { data: { type: "workspaces", id: workspaceId } },
          "configuration-version": { data: { type: "configuration-versions", id: versionId } },
        },
      },
    }),
  );
}

// ---------------------------------------------------------------------------------------------
const cv = suite("configuration versions (tfe)");

testEachServer(cv, "creates a speculative version with an absolute upload URL; uploaded synchronously; a run on it is speculative", async (server) => {
  const { token, workspace } = await setUp(server);
  const created = await createVersion(server, token, workspace.id, { "auto-queue-runs": false, speculative: true, provisional: false });
  assert.is(created.status, 201, JSON.stringify(created.json));
  const version = created.json.data;
  assert.is(version.type, "configuration-versions");
  assert.is(version.attributes.status, "pending");
  assert.is(version.attributes.speculative, true);
  assert.match(version.attributes["upload-url"], new RegExp(`^${server.baseUrl}/`));

  const put = await putUpload(version.attributes["upload-url"], makeConfigurationTarball());
  assert.ok(put.status >= 200 && put.status < 300);
  const shown = await api(server, token, "GET", `/configuration-versions/${version.id}`);
  assert.is(shown.status, 200);
  assert.is(shown.json.data.attributes.status, "uploaded");
  assert.is(shown.json.data.attributes["upload-url"], null);

  // The CLI never sends plan-only: the speculative version decides.
  const run = await createRun(server, token, workspace.id, version.id, { "auto-apply": false, refresh: true, "save-plan": false });
  assert.is(run.status, 201, JSON.stringify(run.json));
  assert.is(run.json.data.attributes["plan-only"], true);
  assert.is((await server.services.stores.runs.getById(run.json.data.id))?.kind, "speculative");
});

testEachServer(cv, "refuses -target, -refresh-only and malformed variables with 422 invalid_document instead of dropping them, and writes no run", async (server) => {
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
  for (const attributes of [...invalidVariables, { "target-addrs": ["terraform_data.x"] }, { "refresh-only": true }]) {
    const run = await createRun(server, token, workspace.id, versionId, attributes);
    assert.is(run.status, 422, JSON.stringify(run.json));
    assert.is(run.json.errors[0].title, "invalid_document");
    assert.is(run.json.errors[0].status, "422");
  }
  assert.equal((await server.services.stores.runs.listByWorkspace(workspace.id, { limit: 10 })).runs, []);
});

testEachServer(cv, "-var values become run variables in the input snapshot, replacing workspace terraform variables of the same key only", async (server) => {
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
  const stored = await server.services.stores.runs.getById(run.json.data.id);
  const snapshot = await server.services.stores.snapshots.getById(stored!.inputSnapshotId);
  const variables = snapshot!.document.variables.map((v) => ({ key: v.key, category: v.category, hcl: v.hcl, value: "value" in v ? v.value : null }));
  assert.equal(variables, [
    { key: "greeting", category: "env", hcl: false, value: "env-kept" },
    { key: "count", category: "terraform", hcl: true, value: "3" },
    { key: "greeting", category: "terraform", hcl: true, value: '"from-cli"' },
    { key: "other", category: "terraform", hcl: false, value: "kept" },
  ]);
});

// ---------------------------------------------------------------------------------------------
const runs = suite("runs, plans, applies and actions (tfe)");

testEachServer(
  runs,
  "shows a pending run with plan and apply relationships, includes workspace and plan, accepts unknown includes; run-events is an empty list",
  async (server) => {
    const { token, workspace, organizationName } = await setUp(server);
    const run = await startRun(server, token, workspace.id, { "main.tf": 'resource "terraform_data" "x" {}\n' });
    const shown = await api(server, token, "GET", `/runs/${run.id}?include=task_stages`);
    assert.is(shown.status, 200);
    const a = shown.json.data.attributes;
    assert.is(a.status, "pending");
    assert.equal(a.actions, { "is-cancelable": true, "is-confirmable": false, "is-discardable": false, "is-force-cancelable": false });
    assert.equal(shown.json.data.relationships.plan.data, { type: "plans", id: phaseId(run.id, "plan") });
    assert.equal(shown.json.data.relationships.apply.data, { type: "applies", id: phaseId(run.id, "apply") });
    assert.is(shown.json.included, undefined);

    const included = await api(server, token, "GET", `/runs/${run.id}?include=${encodeURIComponent("workspace,plan")}`);
    assert.is(included.status, 200);
    assert.equal(
      included.json.included.map((r: any) => r.type),
      ["workspaces", "plans"],
    );
    assert.is(included.json.included[0].relationships.organization.data.id, organizationName);

    const events = await api(server, token, "GET", `/runs/${run.id}/run-events`);
    assert.is(events.status, 200);
    assert.equal(events.json, { data: [] });

    const queue = await api(server, token, "GET", `/organizations/${organizationName}/runs/queue`);
    assert.is(queue.status, 200);
    assert.equal(
      queue.json.data.map((r: any) => [r.id, r.attributes["position-in-queue"]]),
      [[run.id, 0]],
    );
    assert.is(queue.json.meta.pagination["total-pages"], 1);
    const listed = await api(server, token, "GET", `/workspaces/${workspace.id}/runs?page%5Bnumber%5D=1&page%5Bsize%5D=20`);
    assert.is(listed.status, 200);
    assert.equal(
      listed.json.data.map((r: any) => r.id),
      [run.id],
    );
    assert.is(listed.json.meta.pagination["next-page"], null);
  },
);

testEachServer(runs, "run actions take {} or a comment with any content type, or no body; refusals are 409 with title and detail", async (server) => {
  const { token, workspace } = await setUp(server);
  const run = await startRun(server, token, workspace.id, { "main.tf": 'resource "terraform_data" "x" {}\n' });
  const apply = await api(server, token, "POST", `/runs/${run.id}/actions/apply`, "{}");
  assert.is(apply.status, 409, JSON.stringify(apply.json));
  assert.is(apply.json.errors[0].status, "409");
  assert.match(apply.json.errors[0].detail, "awaits approval");
  const discard = await api(server, token, "POST", `/runs/${run.id}/actions/discard`, JSON.stringify({ comment: "no" }), "text/plain");
  assert.is(discard.status, 409, JSON.stringify(discard.json));
  const cancel = await api(server, token, "POST", `/runs/${run.id}/actions/cancel`);
  assert.is(cancel.status, 202, JSON.stringify(cancel.json));
  const shown = await api(server, token, "GET", `/runs/${run.id}`);
  assert.is(shown.json.data.attributes.status, "canceled");
  assert.is(shown.json.data.attributes.actions["is-cancelable"], false);
  const plan = await api(server, token, "GET", `/plans/${phaseId(run.id, "plan")}`);
  assert.is(plan.json.data.attributes.status, "canceled");
  const applyPhase = await api(server, token, "GET", `/applies/${phaseId(run.id, "apply")}`);
  assert.is(applyPhase.json.data.attributes.status, "unreachable");
});

testEachServer(runs, "log-read-url: absolute, signed in the path, no Authorization; byte windows of STX log ETX; 200 empty past the end; a forged token is 404", async (server) => {
  const { token, workspace } = await setUp(server);
  const run = await startRun(server, token, workspace.id, { "main.tf": 'resource "terraform_data" "x" {}\n' });
  const plan = await api(server, token, "GET", `/plans/${phaseId(run.id, "plan")}`);
  assert.is(plan.status, 200);
  const url: string = plan.json.data.attributes["log-read-url"];
  assert.match(url, new RegExp(`^${server.baseUrl}/api/v2/logs/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
  const read = async (offset: number, limit = 65536) => {
    const response = await fetch(`${url}?limit=${limit}&offset=${offset}`);
    return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()), type: response.headers.get("content-type") };
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
  assert.equal(window.bytes, Buffer.concat([Buffer.from([0x02]), Buffer.from("héllo\ndone\n\npolicy ok\n", "utf8"), Buffer.from([0x03])]));
  const end = await read(window.bytes.length);
  assert.is(end.status, 200);
  assert.is(end.bytes.length, 0);

  const forged = await fetch(url.replace(/\.[A-Za-z0-9_-]+$/, ".AAAAAAAAAAAAAAAAAAAAAA"));
  assert.is(forged.status, 404);

  // The apply log starts with three header lines the CLI skips.
  const apply = await api(server, token, "GET", `/applies/${phaseId(run.id, "apply")}`);
  const applyLog = Buffer.from(await (await fetch(`${apply.json.data.attributes["log-read-url"]}?limit=65536&offset=0`)).arrayBuffer()).toString("utf8");
  assert.is(applyLog.slice(1).split("\n").length - 1, 3);
});

testEachServer(runs, "maps the native lifecycle to the TFE statuses and actions the CLI needs", async (server) => {
  const { token, workspace } = await setUp(server);
  const base = (await server.services.stores.runs.getById((await startRun(server, token, workspace.id, { "main.tf": "\n" })).id))!;
  const withStatus = (status: Run["status"], execution: Partial<Run["execution"]> = {}): Run => ({ ...base, status, execution: { ...base.execution, ...execution } });
  const cases: Array<[Run, string, string, string, boolean, boolean, boolean]> = [
    // run, run status, plan status, apply status, confirmable, discardable, cancelable
    [withStatus("pending"), "pending", "pending", "pending", false, false, true],
    [withStatus("planning", { planStatus: "running" }), "planning", "running", "pending", false, false, true],
    [withStatus("policy_checking", { planStatus: "finished", hasChanges: true }), "policy_checking", "running", "pending", false, false, true],
    [withStatus("awaiting_approval", { planStatus: "finished", hasChanges: true }), "planned", "finished", "pending", true, true, false],
    [withStatus("planned_and_finished", { planStatus: "finished", hasChanges: true }), "planned_and_finished", "finished", "unreachable", false, false, false],
    [withStatus("applying", { planStatus: "finished", hasChanges: true }), "apply_queued", "finished", "queued", false, false, true],
    [withStatus("applying", { planStatus: "finished", hasChanges: true, applyStatus: "running" }), "applying", "finished", "running", false, false, true],
    [withStatus("applied", { planStatus: "finished", hasChanges: true, applyStatus: "finished" }), "applied", "finished", "finished", false, false, false],
    [withStatus("discarded", { planStatus: "finished", hasChanges: true }), "discarded", "finished", "unreachable", false, false, false],
    [withStatus("errored", { planStatus: "errored" }), "errored", "errored", "unreachable", false, false, false],
    [withStatus("needs_recovery", { planStatus: "finished", applyStatus: "interrupted" }), "errored", "finished", "errored", false, false, false],
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

// ---------------------------------------------------------------------------------------------
const patch = suite("PATCH workspace (tfe)");

testEachServer(patch, "accepts terraform-version: a provided version pins it, anything else keeps the workspace's; never fails", async (server) => {
  const { token, workspace } = await setUp(server);
  for (const [body, contentType] of [
    [JSON.stringify({ data: { type: "workspaces", attributes: { "terraform-version": pinnedOpenTofuVersion() } } }), JSON_API],
    [JSON.stringify({ data: { type: "workspaces", attributes: { "terraform-version": "0.0.1" } } }), JSON_API],
    [JSON.stringify({ data: { type: "workspaces", attributes: { "terraform-version": "latest" } } }), "application/json"],
    [undefined, JSON_API],
  ] as const) {
    const patched = await api(server, token, "PATCH", `/workspaces/${workspace.id}`, body, contentType);
    assert.is(patched.status, 200, JSON.stringify(patched.json));
    assert.is(patched.json.data.type, "workspaces");
    assert.is(patched.json.data.attributes["terraform-version"], pinnedOpenTofuVersion());
  }
});

testEachServer(
  patch,
  "applies name, description and working-directory (audited, updated-at moves, found by the new name) and refuses a taken name with 409, writing nothing",
  async (server) => {
    const { organizationName, token, workspace } = await setUp(server);
    await createWorkspace(server, token, organizationName, { name: "taken" });
    const before = await api(server, token, "GET", `/workspaces/${workspace.id}`);
    clock = new Date(clock.getTime() + 60_000);
    const attributes = {
      name: "renamed",
      description: "The app",
      "working-directory": "stacks/app",
      "auto-apply": false,
      "allow-destroy-plan": false,
      "queue-all-runs": true,
      "execution-mode": "remote",
    };
    const patched = await api(server, token, "PATCH", `/workspaces/${workspace.id}`, JSON.stringify({ data: { type: "workspaces", attributes } }));
    assert.is(patched.status, 200, JSON.stringify(patched.json));
    const a = patched.json.data.attributes;
    assert.is(a.name, "renamed");
    assert.is(a.description, "The app");
    assert.is(a["working-directory"], "stacks/app");
    assert.is(a["auto-apply"], false);
    assert.is(a["queue-all-runs"], true);
    assert.is(a["execution-mode"], "remote");
    assert.is(a["created-at"], before.json.data.attributes["created-at"]);
    assert.is(a["updated-at"], clock.toISOString());
    assert.ok(a["updated-at"] > before.json.data.attributes["updated-at"]);

    const byNewName = await api(server, token, "GET", `/organizations/${organizationName}/workspaces/renamed`);
    assert.is(byNewName.status, 200);
    assert.is(byNewName.json.data.id, workspace.id);
    assert.is((await api(server, token, "GET", `/organizations/${organizationName}/workspaces/app`)).status, 404);
    const audited = (await server.db.knex("audit_events").where({ action: "workspace.updated", target_id: workspace.id })) as { data: unknown }[];
    assert.is(audited.length, 1);

    // The same document again changes nothing and moves nothing.
    clock = new Date(clock.getTime() + 60_000);
    const again = await api(server, token, "PATCH", `/workspaces/${workspace.id}`, JSON.stringify({ data: { type: "workspaces", attributes } }));
    assert.is(again.json.data.attributes["updated-at"], a["updated-at"]);

    const taken = await api(
      server,
      token,
      "PATCH",
      `/workspaces/${workspace.id}`,
      JSON.stringify({ data: { type: "workspaces", attributes: { name: "taken", description: "lost" } } }),
    );
    assert.is(taken.status, 409, JSON.stringify(taken.json));
    assert.is(taken.json.errors[0].code, "WORKSPACE_NAME_TAKEN");
    const shown = await api(server, token, "GET", `/workspaces/${workspace.id}`);
    assert.is(shown.json.data.attributes.name, "renamed");
    assert.is(shown.json.data.attributes.description, "The app");
  },
  { clock: () => clock },
);

testEachServer(patch, "refuses auto-apply, destroy plans and every fixed setting's other value with 422 on update and create, writing nothing", async (server) => {
  const { organizationName, token, workspace } = await setUp(server);
  const refusals: [Record<string, unknown>, string, RegExp][] = [
    [{ "auto-apply": true, name: "other" }, "RUN_AUTO_APPLY_FORBIDDEN", /without -auto-approve/],
    [{ "auto-apply-run-trigger": true }, "RUN_AUTO_APPLY_FORBIDDEN", /auto-apply-run-trigger/],
    [{ "allow-destroy-plan": true, description: "x" }, "RUN_DESTROY_FORBIDDEN", /allow_destroy_plan = false/],
    [{ "auto-destroy-at": "2030-01-01T00:00:00Z" }, "RUN_DESTROY_FORBIDDEN", /auto-destroy-at/],
    [{ "auto-destroy-activity-duration": "3d" }, "RUN_DESTROY_FORBIDDEN", /auto-destroy-activity-duration/],
    [{ "queue-all-runs": false }, "DOCUMENT_INVALID", /queue-all-runs/],
    [{ "execution-mode": "local" }, "DOCUMENT_INVALID", /execution-mode/],
    [{ "execution-mode": "agent" }, "DOCUMENT_INVALID", /execution-mode/],
    [{ operations: false }, "DOCUMENT_INVALID", /operations/],
    [{ "file-triggers-enabled": false }, "DOCUMENT_INVALID", /file-triggers-enabled/],
    [{ "speculative-enabled": false }, "DOCUMENT_INVALID", /speculative-enabled/],
    [{ "trigger-prefixes": ["modules/"] }, "DOCUMENT_INVALID", /trigger-prefixes/],
    [{ "trigger-patterns": ["**/*.tf"] }, "DOCUMENT_INVALID", /trigger-patterns/],
    [{ "global-remote-state": true }, "DOCUMENT_INVALID", /global-remote-state/],
    [{ "project-remote-state": true }, "DOCUMENT_INVALID", /project-remote-state/],
    [{ "assessments-enabled": true }, "DOCUMENT_INVALID", /assessments-enabled/],
    [{ "working-directory": "../outside" }, "DOCUMENT_INVALID", /working-directory/],
  ];
  const before = await api(server, token, "GET", `/workspaces/${workspace.id}`);
  for (const [attributes, code, detail] of refusals) {
    const label = JSON.stringify(attributes);
    const patched = await api(server, token, "PATCH", `/workspaces/${workspace.id}`, JSON.stringify({ data: { type: "workspaces", attributes } }));
    assert.is(patched.status, 422, label);
    assert.is(patched.json.errors[0].code, code, label);
    assert.match(patched.json.errors[0].detail, detail, label);
    const created = await api(
      server,
      token,
      "POST",
      `/organizations/${organizationName}/workspaces`,
      JSON.stringify({ data: { type: "workspaces", attributes: { ...attributes, name: "fresh" } } }),
    );
    assert.is(created.status, 422, label);
    assert.is(created.json.errors[0].code, code, label);
  }
  assert.equal((await api(server, token, "GET", `/workspaces/${workspace.id}`)).json.data, before.json.data);
  assert.is((await api(server, token, "GET", `/organizations/${organizationName}/workspaces/fresh`)).status, 404);
  assert.equal(await server.db.knex("audit_events").where({ action: "workspace.updated" }), []);
});

testEachServer(patch, "accepts the settings the tfe provider sends by default as what StackShip does, and shows them so (no drift)", async (server) => {
  const { organizationName, token } = await setUp(server);
  // What tfe_workspace (provider 0.79) sends on create with only name, description and working_directory set.
  const providerDefaults = {
    "auto-apply-run-trigger": false,
    "file-triggers-enabled": true,
    "queue-all-runs": true,
    "speculative-enabled": true,
    "structured-run-output-enabled": true,
    "setting-overwrites": { "execution-mode": false, "agent-pool": false },
  };
  const created = await api(
    server,
    token,
    "POST",
    `/organizations/${organizationName}/workspaces`,
    JSON.stringify({
      data: { type: "workspaces", attributes: { name: "by-provider", description: "d", "working-directory": "", "allow-destroy-plan": false, ...providerDefaults } },
    }),
  );
  assert.is(created.status, 201, JSON.stringify(created.json));
  const id = created.json.data.id as string;
  // What it sends on update (every setting, from its state), and the empty trigger lists.
  const updated = await api(
    server,
    token,
    "PATCH",
    `/workspaces/${id}`,
    JSON.stringify({
      data: {
        type: "workspaces",
        attributes: {
          name: "by-provider",
          "allow-destroy-plan": false,
          "global-remote-state": false,
          "working-directory": "",
          ...providerDefaults,
          "trigger-prefixes": [],
          "trigger-patterns": null,
        },
      },
    }),
  );
  assert.is(updated.status, 200, JSON.stringify(updated.json));
  const a = (await api(server, token, "GET", `/workspaces/${id}`)).json.data.attributes;
  for (const [name, value] of Object.entries(providerDefaults)) if (name !== "setting-overwrites") assert.equal(a[name], value, name);
  assert.is(a["allow-destroy-plan"], false);
  assert.equal(a["trigger-prefixes"], []);
  assert.equal(a["trigger-patterns"], []);
  assert.is(a["global-remote-state"], false);
  assert.is(a["assessments-enabled"], false);
  assert.is(a["working-directory"], "");
  const consumers = await api(server, token, "GET", `/workspaces/${id}/relationships/remote-state-consumers`);
  assert.is(consumers.status, 200);
  assert.equal(consumers.json.data, []);
  assert.is(consumers.json.meta.pagination["total-count"], 0);
});

testEachServer(patch, "lists a workspace's tags by name and removes tags (absent ones are no error), audited", async (server) => {
  const { token, workspace } = await setUp(server);
  const tags = (names: string[]) => JSON.stringify({ data: names.map((name) => ({ type: "tags", attributes: { name } })) });
  assert.is((await api(server, token, "POST", `/workspaces/${workspace.id}/relationships/tags`, tags(["tag2", "tag1", "tag3"]))).status, 204);
  const listed = await api(server, token, "GET", `/workspaces/${workspace.id}/relationships/tags`);
  assert.is(listed.status, 200, JSON.stringify(listed.json));
  assert.equal(
    listed.json.data,
    ["tag1", "tag2", "tag3"].map((name) => ({ type: "tags", id: name, attributes: { name } })),
  );
  assert.is(listed.json.meta.pagination["total-count"], 3);
  const paged = await api(server, token, "GET", `/workspaces/${workspace.id}/relationships/tags?page[size]=2&page[number]=2`);
  assert.equal(
    paged.json.data.map((tag: { id: string }) => tag.id),
    ["tag3"],
  );

  assert.is((await api(server, token, "DELETE", `/workspaces/${workspace.id}/relationships/tags`, tags(["tag1", "tag2", "never-there"]))).status, 204);
  const after = await api(server, token, "GET", `/workspaces/${workspace.id}`);
  assert.equal(after.json.data.attributes["tag-names"], ["tag3"]);
  const removed = (await server.db.knex("audit_events").where({ action: "workspace.tags_removed", target_id: workspace.id })) as unknown[];
  assert.is(removed.length, 1);
  const invalid = await api(server, token, "DELETE", `/workspaces/${workspace.id}/relationships/tags`, JSON.stringify({ data: [{ type: "tags", id: "tag3" }] }));
  assert.ok(invalid.status === 400 || invalid.status === 422, String(invalid.status));
  assert.equal((await api(server, token, "GET", `/workspaces/${workspace.id}`)).json.data.attributes["tag-names"], ["tag3"]);
});

testEachServer(patch, "PATCH projects/{id} renames a project (audited), refuses a taken name with 409, a description and renaming the Default Project with 422", async (server) => {
  const { organizationName, token, workspace } = await setUp(server);
  const defaultProjectId = (await api(server, token, "GET", `/workspaces/${workspace.id}`)).json.data.relationships.project.data.id as string;
  const keeps = await api(server, token, "PATCH", `/projects/${defaultProjectId}`, JSON.stringify({ data: { type: "projects", attributes: { name: "elsewhere" } } }));
  assert.is(keeps.status, 422, JSON.stringify(keeps.json));
  assert.match(keeps.json.errors[0].detail, "keeps its name");
  const created = await api(server, token, "POST", `/organizations/${organizationName}/projects`, JSON.stringify({ data: { type: "projects", attributes: { name: "apps" } } }));
  const projectId = created.json.data.id as string;
  const other = await api(server, token, "POST", `/organizations/${organizationName}/projects`, JSON.stringify({ data: { type: "projects", attributes: { name: "other" } } }));
  assert.is(other.status, 201, JSON.stringify(other.json));
  const update = (attributes: Record<string, unknown>) => api(server, token, "PATCH", `/projects/${projectId}`, JSON.stringify({ data: { type: "projects", attributes } }));

  const renamed = await update({ name: "platform", description: "" });
  assert.is(renamed.status, 200, JSON.stringify(renamed.json));
  assert.is(renamed.json.data.attributes.name, "platform");
  assert.is((await api(server, token, "GET", `/projects/${projectId}`)).json.data.attributes.name, "platform");
  assert.is(((await server.db.knex("audit_events").where({ action: "project.renamed", target_id: projectId })) as unknown[]).length, 1);

  const taken = await update({ name: "other" });
  assert.is(taken.status, 409, JSON.stringify(taken.json));
  assert.is(taken.json.errors[0].code, "PROJECT_NAME_TAKEN");
  const described = await update({ name: "again", description: "The platform team" });
  assert.is(described.status, 422, JSON.stringify(described.json));
  assert.is(described.json.errors[0].source.pointer, "/data/attributes/description");
  assert.is((await api(server, token, "GET", `/projects/${projectId}`)).json.data.attributes.name, "platform");

  // Create likewise refuses a description rather than dropping it, and creates nothing.
  const before = ((await server.db.knex("projects").count({ n: "*" }))[0] as { n: number | string }).n;
  const describedNew = await api(
    server,
    token,
    "POST",
    `/organizations/${organizationName}/projects`,
    JSON.stringify({ data: { type: "projects", attributes: { name: "docs", description: "Docs team" } } }),
  );
  assert.is(describedNew.status, 422, JSON.stringify(describedNew.json));
  assert.is(describedNew.json.errors[0].code, "DOCUMENT_INVALID");
  assert.is(describedNew.json.errors[0].source.pointer, "/data/attributes/description");
  assert.is(String(((await server.db.knex("projects").count({ n: "*" }))[0] as { n: number | string }).n), String(before));
  const plainNew = await api(
    server,
    token,
    "POST",
    `/organizations/${organizationName}/projects`,
    JSON.stringify({ data: { type: "projects", attributes: { name: "docs", description: "" } } }),
  );
  assert.is(plainNew.status, 201, JSON.stringify(plainNew.json));
});

// ---------------------------------------------------------------------------------------------
const runList = suite("GET workspace runs (tfe)");

testEachServer(runList, "fills the status timestamps of runs, plans and applies from the recorded attempts and review decision", async (server) => {
  const { token, workspace } = await setUp(server);
  const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute)).toISOString();
  const stores = server.services.stores;
  const live = async (runId: string, phase: "plan" | "apply", start: number, end: number) => {
    const attempt = await stores.attempts.start({ runId, phase, runnerId: "runner-test", region: "local", baseProfile: "default", now: at(start) });
    await stores.attempts.finish(attempt.id, "succeeded", "exit_zero", at(end));
  };
  const decide = (runId: string, decision: "approved" | "discarded", minute: number) =>
    stores.reviews.record({
      runId,
      decision,
      actorId: null,
      reason: "test",
      planDigest: null,
      planJsonDigest: null,
      planDiffDigest: null,
      policyResultDigest: null,
      predecessorStateDigest: null,
      dependencyBundleDigest: null,
      decidedAt: at(minute),
    });

  const applied = await startRun(server, token, workspace.id, { "main.tf": "\n" });
  await live(applied.id, "plan", 1, 2);
  await decide(applied.id, "approved", 3);
  await live(applied.id, "apply", 4, 5);
  await server.db
    .knex("runs")
    .where({ id: applied.id })
    .update({ status: "applied", plan_status: "finished", apply_status: "finished", has_changes: true, finished_at: at(5) });

  const run = (await api(server, token, "GET", `/runs/${applied.id}?include=plan`)).json;
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
  assert.equal([a.refresh, a["refresh-only"], a["allow-empty-apply"], a["target-addrs"], a["replace-addrs"], a["canceled-at"]], [true, false, false, [], [], null]);
  const planTimestamps = { "queued-at": created, "started-at": at(1), "finished-at": at(2) };
  assert.equal(run.included[0].attributes["status-timestamps"], planTimestamps);
  assert.equal((await api(server, token, "GET", `/plans/${phaseId(applied.id, "plan")}`)).json.data.attributes["status-timestamps"], planTimestamps);
  assert.equal((await api(server, token, "GET", `/applies/${phaseId(applied.id, "apply")}`)).json.data.attributes["status-timestamps"], {
    "queued-at": at(3),
    "started-at": at(4),
    "finished-at": at(5),
  });
  const listed = (await api(server, token, "GET", `/workspaces/${workspace.id}/runs`)).json.data.find((r: { id: string }) => r.id === applied.id);
  assert.equal(listed.attributes["status-timestamps"], run.data.attributes["status-timestamps"]);

  const discarded = await startRun(server, token, workspace.id, { "main.tf": "\n" });
  await live(discarded.id, "plan", 11, 12);
  await decide(discarded.id, "discarded", 13);
  await server.db
    .knex("runs")
    .where({ id: discarded.id })
    .update({ status: "discarded", plan_status: "finished", has_changes: true, finished_at: at(13) });
  const shown = (await api(server, token, "GET", `/runs/${discarded.id}`)).json.data.attributes["status-timestamps"];
  assert.is(shown["planned-at"], at(12));
  assert.is(shown["discarded-at"], at(13));
  assert.is(shown["confirmed-at"], undefined);
  assert.equal((await api(server, token, "GET", `/applies/${phaseId(discarded.id, "apply")}`)).json.data.attributes["status-timestamps"], {});

  const canceled = await startRun(server, token, workspace.id, { "main.tf": "\n" });
  assert.is((await api(server, token, "POST", `/runs/${canceled.id}/actions/cancel`, "{}")).status, 202);
  const canceledAt = (await api(server, token, "GET", `/runs/${canceled.id}`)).json.data.attributes["status-timestamps"];
  assert.ok(canceledAt["canceled-at"], JSON.stringify(canceledAt));
  assert.is((await api(server, token, "GET", `/runs/${canceled.id}`)).json.data.attributes["canceled-at"], canceledAt["canceled-at"]);
  assert.is(canceledAt["planning-at"], undefined);
  assert.ok((await api(server, token, "GET", `/plans/${phaseId(canceled.id, "plan")}`)).json.data.attributes["status-timestamps"]["canceled-at"]);
});

testEachServer(runList, "shows created-by, confirmed-by and the workspace's locked-by, and includes users and the workspace on request", async (server) => {
  const { token, workspace } = await setUp(server);
  const approved = await startRun(server, token, workspace.id, { "main.tf": "\n" });
  const creator = (await server.services.stores.runs.getById(approved.id))!.createdBy!;
  assert.ok(creator);
  await server.services.stores.reviews.record({
    runId: approved.id,
    decision: "approved",
    actorId: creator,
    reason: "ok",
    planDigest: null,
    planJsonDigest: null,
    planDiffDigest: null,
    policyResultDigest: null,
    predecessorStateDigest: null,
    dependencyBundleDigest: null,
    decidedAt: new Date(),
  });
  const other = await startRun(server, token, workspace.id, { "main.tf": "\n" });

  const shown = (await api(server, token, "GET", `/runs/${approved.id}?include=created_by,confirmed_by`)).json;
  assert.equal(shown.data.relationships["created-by"].data, { type: "users", id: creator });
  assert.equal(shown.data.relationships["confirmed-by"].data, { type: "users", id: creator });
  assert.is(shown.included.length, 1);
  assert.is(shown.included[0].type, "users");
  assert.is(shown.included[0].id, creator);
  assert.is(typeof shown.included[0].attributes.username, "string");
  assert.equal((await api(server, token, "GET", `/runs/${other.id}`)).json.data.relationships["confirmed-by"].data, null);

  const listed = (await api(server, token, "GET", `/workspaces/${workspace.id}/runs?include=created_by,confirmed_by,workspace`)).json;
  assert.equal(
    listed.data.map((run: { id: string }) => run.id),
    [other.id, approved.id],
  );
  assert.equal(
    listed.included.map((resource: { type: string; id: string }) => `${resource.type}/${resource.id}`),
    [`users/${creator}`, `workspaces/${workspace.id}`],
  );
  assert.is((await api(server, token, "GET", `/workspaces/${workspace.id}/runs`)).json.included, undefined);

  assert.equal((await api(server, token, "GET", `/workspaces/${workspace.id}`)).json.data.relationships["locked-by"].data, null);
  assert.is((await api(server, token, "POST", `/workspaces/${workspace.id}/actions/lock`, JSON.stringify({ reason: "maintenance" }))).status, 200);
  const locked = (await api(server, token, "GET", `/workspaces/${workspace.id}`)).json.data;
  assert.is(locked.attributes.locked, true);
  assert.is(locked.relationships["locked-by"].data.type, "users");
  assert.ok(locked.relationships["locked-by"].data.id);
});

testEachServer(runList, "filters by status, operation and source (comma-separated) and searches user, commit and basic text; refuses unknown filters with 400", async (server) => {
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
  const fromCli = await createRun(server, token, workspace.id, await uploadedVersion(server, token, workspace.id), { message: "Queued from the CLI" });
  assert.is(fromCli.status, 201, JSON.stringify(fromCli.json));
  const canceled = await startRun(server, token, workspace.id, { "main.tf": "\n" });
  assert.is((await api(server, token, "POST", `/runs/${canceled.id}/actions/cancel`, "{}")).status, 202);

  const list = async (parameters: string) => {
    const listed = await api(server, token, "GET", `/workspaces/${workspace.id}/runs?${parameters}`);
    assert.is(listed.status, 200, `${parameters}: ${JSON.stringify(listed.json)}`);
    assert.is(listed.json.meta.pagination["total-count"], listed.json.data.length, parameters);
    return listed.json.data.map((run: { id: string }) => run.id);
  };
  const cli = fromCli.json.data.id;
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
    assert.is(refused.json.errors[0].code, "REQUEST_INVALID", unknown);
    assert.is(refused.json.errors[0].source.parameter, unknown.split("=")[0], unknown);
  }
});

// ---------------------------------------------------------------------------------------------
const workspaceList = suite("GET organization workspaces (tfe)");

testEachServer(workspaceList, "pages until an empty page with its own number, matches search[wildcard-name] and search[exclude-tags], refuses unknown filters", async (server) => {
  const { organizationName, token, workspace } = await setUp(server);
  for (const name of ["w1-a", "w1-b", "prod", "staging-prod", "a-mid-b", "w2"]) await createWorkspace(server, token, organizationName, { name });
  const tagged = await api(server, token, "GET", `/organizations/${organizationName}/workspaces/w1-b`);
  assert.is(
    (await api(server, token, "POST", `/workspaces/${tagged.json.data.id}/relationships/tags`, JSON.stringify({ data: [{ type: "tags", attributes: { name: "legacy" } }] })))
      .status,
    204,
  );
  const list = async (parameters: string) => {
    const listed = await api(server, token, "GET", `/organizations/${organizationName}/workspaces?${parameters}`);
    assert.is(listed.status, 200, `${parameters}: ${JSON.stringify(listed.json)}`);
    assert.ok(listed.json.meta.pagination, parameters);
    return listed.json;
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
    seen.push(...listed.data.map((w: { attributes: { name: string } }) => w.attributes.name));
  }
  assert.equal([...seen].sort(), ["a-mid-b", "app", "prod", "staging-prod", "w1-a", "w1-b", "w2"]);
  const far = await list("page[number]=999");
  assert.equal(far.data, []);
  assert.is(far.meta.pagination["current-page"], 999);
  assert.is(far.meta.pagination["next-page"], null);

  const names = async (parameters: string) => (await list(parameters)).data.map((w: { attributes: { name: string } }) => w.attributes.name).sort();
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

  for (const unknown of ["filter[current-run][status]=applied", "search[unknown]=x", "filter[tagged][0][key]=legacy"]) {
    const refused = await api(server, token, "GET", `/organizations/${organizationName}/workspaces?${unknown}`);
    assert.is(refused.status, 400, unknown);
    assert.is(refused.json.errors[0].code, "REQUEST_INVALID", unknown);
  }
});

testEachServer(workspaceList, "shows the current run (the oldest in progress, never a speculative one) and includes it with include=current_run", async (server) => {
  const { organizationName, token, workspace } = await setUp(server);
  const show = (include = "") => api(server, token, "GET", `/workspaces/${workspace.id}${include ? `?include=${include}` : ""}`);
  assert.is((await show()).json.data.relationships["current-run"].data, null);
  const speculative = await createRun(server, token, workspace.id, await uploadedVersion(server, token, workspace.id), {});
  assert.is(speculative.status, 201);
  assert.is((await show("current_run")).json.data.relationships["current-run"].data, null);
  assert.equal((await show("current_run")).json.included, []);

  const first = await startRun(server, token, workspace.id, { "main.tf": "\n" });
  const second = await startRun(server, token, workspace.id, { "main.tf": "\n" });
  const shown = await show("current_run,task_stages");
  assert.is(shown.status, 200, JSON.stringify(shown.json));
  assert.equal(shown.json.data.relationships["current-run"].data, { type: "runs", id: first.id });
  assert.is(shown.json.included.length, 1);
  assert.is(shown.json.included[0].id, first.id);
  assert.is(shown.json.included[0].type, "runs");
  assert.is(shown.json.included[0].attributes.status, "pending");
  assert.is((await show()).json.included, undefined);

  const byName = await api(server, token, "GET", `/organizations/${organizationName}/workspaces/${workspace.attributes.name}?include=current_run`);
  assert.is(byName.json.included[0].id, first.id);
  const listed = await api(server, token, "GET", `/organizations/${organizationName}/workspaces?include=current_run`);
  assert.equal(listed.json.data[0].relationships["current-run"].data, { type: "runs", id: first.id });
  assert.equal(
    listed.json.included.map((run: { id: string }) => run.id),
    [first.id],
  );

  // Once the first run ends, the one waiting behind it is current; after all end, the newest.
  assert.is((await api(server, token, "POST", `/runs/${first.id}/actions/cancel`, "{}")).status, 202);
  assert.equal((await show()).json.data.relationships["current-run"].data, { type: "runs", id: second.id });
  assert.is((await api(server, token, "POST", `/runs/${second.id}/actions/cancel`, "{}")).status, 202);
  assert.equal((await show()).json.data.relationships["current-run"].data, { type: "runs", id: second.id });
});

test("the spec declares 431 on every operation that takes a query string", () => {
  const spec = JSON.parse(readFileSync(new URL("../../../generated/tfe/openapi.json", import.meta.url), "utf8")) as {
    paths: Record<string, Record<string, { operationId?: string; parameters?: { $ref?: string; in?: string }[]; responses?: Record<string, unknown> }>>;
    components: { parameters: Record<string, { in: string }> };
  };
  const isQuery = (parameter: { $ref?: string; in?: string }) => (parameter.$ref ? spec.components.parameters[parameter.$ref.split("/").pop()!]?.in : parameter.in) === "query";
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

testEachServer(workspaceList, "answers a request head over 16 KiB (a long query string) with 431, as declared", async (server) => {
  const { organizationName, token } = await setUp(server);
  const listed = await fetch(`${server.baseUrl}/api/v2/organizations/${organizationName}/workspaces?search[name]=${"a".repeat(17 * 1024)}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  assert.is(listed.status, 431);
});

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
  for (const [name, pattern, expected] of cases) assert.is(matchesWildcard(name, pattern), expected, `${name} ~ ${pattern}`);
});

cv.run();
runs.run();
patch.run();
runList.run();
workspaceList.run();
test.run();
