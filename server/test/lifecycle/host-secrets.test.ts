// The host's redaction set for every run (issue 25, parts 3 and 6) with real tofu: the workspace's
// sensitive variable values even when the run's snapshot leaves them out (a speculative run, a
// fork's pull request), each element of an HCL-typed sensitive collection, the canonical form of
// a sensitive number, and the phase's own run token printed by a provisioner.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getRunPlanChanges } from "../../../client/src/index.ts";
import { createOrganizationWithToken, createVariable, createWorkspace } from "../support/factories.ts";
import { GitHubDouble } from "../support/github-double.ts";
import {
  connectedRepository,
  deliver,
  newCommit,
  pullRequestSettled,
  pushPayload,
  settled,
} from "../support/github.ts";
import { approvePlan, readLog, startRun, waitForStatus } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const CANARY = "host-known-canary-40917";
const LIST = '["HCLELEMone1","HCLELEMtwo2"]';
const PIN = "00123456789";
// What must never show: the values and the forms tofu prints them in.
const LEAKS = [CANARY, "HCLELEMone1", "HCLELEMtwo2", "123456789"];
const RUN_TOKEN = /ssr\.[A-Za-z0-9_-]{20,}/;

// Not declared sensitive: only the workspace says so. A speculative run gets the defaults, and its
// plan prints the prior values (in the prior state at no sensitive path) as they change.
const FILES = {
  "main.tf": [
    'variable "canary" {\n  type    = string\n  default = "placeholder"\n}',
    'variable "list" {\n  type    = list(string)\n  default = []\n}',
    'variable "pin" {\n  type    = number\n  default = 0\n}',
    'resource "terraform_data" "copy" {\n  input = { canary = var.canary, list = var.list, pin = var.pin }\n}',
    'resource "terraform_data" "leak" {\n  provisioner "local-exec" {\n    command = "cat \\"$TF_CLI_CONFIG_FILE\\""\n  }\n}',
    'output "echo" {\n  value = var.canary\n}',
    "",
  ].join("\n"),
};

async function sensitiveVariables(server: TestServer, token: string, workspaceId: string) {
  await createVariable(server, token, workspaceId, { key: "canary", value: CANARY, sensitive: true });
  await createVariable(server, token, workspaceId, { key: "list", value: LIST, sensitive: true, hcl: true });
  await createVariable(server, token, workspaceId, { key: "pin", value: PIN, sensitive: true });
}

function assertNoLeak(where: string, text: string) {
  for (const leak of LEAKS) assert.not.ok(text.includes(leak), `${where} holds ${leak}:\n${text}`);
  assert.not.match(text, RUN_TOKEN, `${where} holds a run token`);
}

async function approveAndApply(server: TestServer, token: string, runId: string) {
  const planned = await waitForStatus(server, token, runId, ["awaiting_approval", "errored"]);
  const planLog = await readLog(server, token, runId, "plan");
  assert.is(planned.attributes.status, "awaiting_approval", planLog);
  // The snapshot has the values: the collection's elements and the number's canonical form too.
  assertNoLeak("the first plan log", planLog);
  assert.match(planLog, "[sensitive value]");
  await approvePlan(server, token, runId, planned.attributes.plan_digest!);
  const applied = await waitForStatus(server, token, runId, ["applied", "errored", "needs_recovery"]);
  const applyLog = await readLog(server, token, runId, "apply");
  assert.is(applied.attributes.status, "applied", applyLog);
  // The provisioner printed the CLI configuration with the apply's own token in it.
  assert.match(applyLog, /terraform_data\.leak \(local-exec\):.*token/);
  assertNoLeak("the apply log", applyLog);
}

async function assertSpeculativeRedacted(server: TestServer, token: string, runId: string) {
  const finished = await waitForStatus(server, token, runId, ["planned_and_finished", "errored"]);
  const planLog = await readLog(server, token, runId, "plan");
  assert.is(finished.attributes.status, "planned_and_finished", planLog);
  assert.is(finished.attributes.kind, "speculative");
  // The prior values print as they change: redacted, the defaults beside them not.
  assert.match(planLog, "placeholder");
  assert.match(planLog, "[sensitive value]");
  assertNoLeak("the speculative plan log", planLog);
  const changes = await getRunPlanChanges({ client: server.v1(token), path: { run_id: runId } });
  assert.is(changes.response.status, 200, JSON.stringify(changes.error));
  const text = JSON.stringify(changes.data);
  assertNoLeak("the speculative plan changes", text);
  const copy = changes.data!.resources.find((r) => r.address === "terraform_data.copy")!;
  const [before, after] = [copy.before, copy.after] as Array<{ input: { canary: unknown } }>;
  assert.equal(before.input.canary, { $stackship: "sensitive" }, text);
  assert.is(after.input.canary, "placeholder");
}

const host = suite("the host's redaction set: secrets a run never receives, printed forms, run tokens");

testEachServer(
  host,
  "a sensitive variable copied into the prior state stays [sensitive value] in a speculative run's plan log and plan changes; HCL elements, numbers and the run token too",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "spec" });
    await sensitiveVariables(server, token, workspace.id);
    await approveAndApply(server, token, (await startRun(server, token, workspace.id, FILES)).id);
    const speculative = await startRun(server, token, workspace.id, FILES, "speculative");
    await assertSpeculativeRedacted(server, token, speculative.id);
  },
  { runner: true },
);

const double = new GitHubDouble();
const forks = suite("the host's redaction set: a fork's pull request through the GitHub App");
forks.before(async () => {
  await double.start();
});
forks.after(() => double.stop());

testEachServer(
  forks,
  "a fork pull request's speculative plan never prints the workspace's secret its snapshot left out",
  async (server) => {
    const connected = await connectedRepository(server, double);
    await sensitiveVariables(server, connected.token, connected.workspaceId);
    const sha = await newCommit(double, connected.repository, FILES);
    const pushed = await settled(
      server,
      (await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha)))
        .deliveryId,
    );
    assert.is(pushed.status, "processed", JSON.stringify(pushed));
    await approveAndApply(server, connected.token, pushed.run_ids[0]);

    const head = await newCommit(double, connected.repository, FILES);
    const result = await pullRequestSettled(server, double, connected, "opened", {
      number: 11,
      headSha: head,
      headRepository: "mallory/infra",
    });
    assert.is(result.status, "processed", JSON.stringify(result));
    await assertSpeculativeRedacted(server, connected.token, result.run_ids[0]);
  },
  { runner: true, githubWorker: true, config: { github: double.config() } },
);

host.run();
forks.run();
