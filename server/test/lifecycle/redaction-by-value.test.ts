// Redaction by value with real tofu (issue 12 part 1): OpenTofu's masks lose a sensitive value
// wherever a provider copies it (terraform_data's `output`) or the configuration calls
// nonsensitive(); the value must still never reach a stored log, the plan changes, policy
// findings or the review.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  getRunPlanChanges,
  getRunPolicyEvaluation,
  updateVariable,
  type PolicyInput,
} from "../../../client/src/index.ts";
import { createPolicySet } from "../../../client/src/index.ts";
import { databaseText, leakForms } from "../support/database.ts";
import { createOrganizationWithToken, createVariable, createWorkspace } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { review } from "../support/review.ts";
import { approvePlan, readLog, startRun, waitForPlanned, waitForStatus, waitToSettle } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const S = { $stackship: "sensitive" };
const U = { $stackship: "unknown" };

async function approveAndApply(server: TestServer, token: string, runId: string, planDigest: string) {
  await approvePlan(server, token, runId, planDigest);
  await waitToSettle(server, token, runId, "applied");
}

function assertNoLeak(where: string, text: string, secret: string) {
  for (const form of leakForms(secret))
    assert.not.ok(
      text.includes(form),
      `${where} holds ${JSON.stringify(secret)} (${form === secret ? "as is" : "encoded"})`,
    );
}

// An advisory policy whose finding quotes the values of every terraform_data's `output` before the change.
const QUOTE_OUTPUTS: PolicyInput = {
  name: "quote",
  enforcement_level: "advisory",
  source:
    'package stackship.quote\n\nviolations contains {"title": "Output", "message": sprintf("was %v", [rc.change.before.output]), "address": rc.address} if {\n  some rc in input.resource_changes\n  rc.type == "terraform_data"\n  rc.change.before != null\n}\n',
};

const masks = suite("redaction by value: where OpenTofu's masks lose a sensitive value");

testEachServer(
  masks,
  'terraform_data copies sensitive("s3cret-value") into its unmasked output: the second plan\'s log, plan changes, findings and review never show it',
  async (server) => {
    const secret = "s3cret-value";
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "copy" });
    const gen = await createVariable(server, token, workspace.id, { key: "gen", value: "g1" });
    expectStatus(
      await createPolicySet({
        client: server.v1(token),
        path: { organization_name: organizationName },
        body: { data: { type: "policy-sets", attributes: { name: "quote", policies: [QUOTE_OUTPUTS], global: true } } },
      }),
      201,
    );
    const files = {
      "main.tf":
        'variable "gen" { type = string }\nresource "terraform_data" "copy" {\n  input = { user = "u", pass = sensitive("s3cret-value"), gen = var.gen }\n}\n',
    };

    const first = await startRun(server, token, workspace.id, files);
    const planned = await waitForPlanned(server, token, first.id);
    await approveAndApply(server, token, first.id, planned.attributes.plan_digest!);

    expectStatus(
      await updateVariable({
        client: server.v1(token),
        path: { workspace_id: workspace.id, variable_id: gen.id },
        body: { data: { type: "variables", id: gen.id, attributes: { value: "g2" } } } as never,
      }),
      200,
    );
    const second = await startRun(server, token, workspace.id, files);
    const planned2 = await waitForStatus(server, token, second.id, ["awaiting_approval", "errored"]);
    const planLog = await readLog(server, token, second.id, "plan");
    assert.is(planned2.attributes.status, "awaiting_approval", planLog);

    // The plan log (GET /v1/runs/{id}/logs/plan): tofu printed the prior `output` in clear; the
    // value was there ("pass = …") and is redacted, the short values beside it are not.
    assert.match(planLog, 'gen  = "g1"');
    assert.match(planLog, /pass = "\[sensitive value\]"/);
    assert.match(planLog, 'user = "u"');
    assertNoLeak("the plan log", planLog, secret);

    // The plan changes: `output` in `before` holds the value and no mask marks it.
    const changes = await getRunPlanChanges({ client: server.v1(token), path: { run_id: second.id } });
    assert.is(changes.response.status, 200, JSON.stringify(changes.error));
    const [entry] = changes.data!.resources;
    assert.equal([entry.address, entry.action], ["terraform_data.copy", "update"]);
    const [before, after] = [entry.before, entry.after] as Array<{ input: unknown; output: unknown }>;
    assert.equal(before.output, { gen: "g1", pass: S, user: "u" });
    assert.equal(before.input, { gen: "g1", pass: S, user: "u" });
    assert.equal(after.output, U);
    assertNoLeak("the plan changes", JSON.stringify(changes.data), secret);

    // The policy finding quoted the whole prior output.
    const evaluation = expectStatus(
      await getRunPolicyEvaluation({ client: server.v1(token), path: { run_id: second.id } }),
      200,
    ).data.attributes;
    assert.is(evaluation.findings.length, 1);
    assert.match(evaluation.findings[0].message, "[sensitive value]");
    assertNoLeak("the policy findings", JSON.stringify(evaluation), secret);
    assertNoLeak("the policy log", await readLog(server, token, second.id, "policy"), secret);

    // The review, and nothing stored in the database either (logs, findings, events).
    assertNoLeak("the review", JSON.stringify(await review(server.v1(token), second.id)), secret);
    await approveAndApply(server, token, second.id, planned2.attributes.plan_digest!);
    assertNoLeak("the apply log", await readLog(server, token, second.id, "apply"), secret);
    assertNoLeak("the database", await databaseText(server), secret);
  },
  { runner: true },
);

const canaries = suite("redaction by value: sensitive values the configuration echoes into unmasked places");

testEachServer(
  canaries,
  "a sensitive workspace variable and a sensitive default echoed through nonsensitive() outputs stay out of the plan and apply logs",
  async (server) => {
    const variable = "workspace-canary-30417";
    const declared = "declared-default-canary-8812";
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "echo" });
    await createVariable(server, token, workspace.id, { key: "canary", value: variable, sensitive: true });
    const files = {
      "main.tf": [
        'variable "canary" {\n  type      = string\n  sensitive = true\n}',
        // Not in the input snapshot: only the plan's configuration says it is sensitive.
        `variable "pw" {\n  type      = string\n  sensitive = true\n  default   = "${declared}"\n}`,
        'resource "terraform_data" "t" {\n  input = "plain"\n}',
        'output "echo" {\n  value = nonsensitive(var.canary)\n}',
        'output "pw_echo" {\n  value = nonsensitive(var.pw)\n}',
        'output "upper" {\n  value = nonsensitive(upper(var.pw))\n}',
        "",
      ].join("\n"),
    };
    const run = await startRun(server, token, workspace.id, files);
    const planned = await waitForStatus(server, token, run.id, ["awaiting_approval", "errored"]);
    const planLog = await readLog(server, token, run.id, "plan");
    assert.is(planned.attributes.status, "awaiting_approval", planLog);
    assert.match(planLog, /\+ echo\s+= "\[sensitive value\]"/);
    assert.match(planLog, /\+ pw_echo\s+= "\[sensitive value\]"/);
    // A value derived from a sensitive one is not the value: its masks were removed on purpose.
    assert.match(planLog, declared.toUpperCase());
    await approveAndApply(server, token, run.id, planned.attributes.plan_digest!);
    const applyLog = await readLog(server, token, run.id, "apply");
    assert.match(applyLog, /echo = "\[sensitive value\]"/);
    for (const [name, text] of [
      ["plan", planLog],
      ["apply", applyLog],
    ] as const) {
      assertNoLeak(`the ${name} log`, text, variable);
      assertNoLeak(`the ${name} log`, text, declared);
    }
  },
  { runner: true },
);

testEachServer(
  canaries,
  "a sensitive workspace variable quoted by a failing precondition's error message stays out of the plan log and the review",
  async (server) => {
    const variable = "precondition-canary-66120";
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "fail" });
    await createVariable(server, token, workspace.id, { key: "canary", value: variable, sensitive: true });
    const files = {
      "main.tf":
        'variable "canary" {\n  type      = string\n  sensitive = true\n}\nresource "terraform_data" "t" {\n  input = "x"\n  lifecycle {\n    precondition {\n      condition     = length(var.canary) < 5\n      error_message = "The canary was ${nonsensitive(var.canary)}."\n    }\n  }\n}\n',
    };
    const run = await startRun(server, token, workspace.id, files);
    const ended = await waitForStatus(server, token, run.id, ["errored", "awaiting_approval"]);
    const planLog = await readLog(server, token, run.id, "plan");
    assert.is(ended.attributes.status, "errored", planLog);
    assert.match(planLog, "The canary was [sensitive value].");
    assertNoLeak("the plan log", planLog, variable);
    const document = await review(server.v1(token), run.id);
    assert.ok(
      JSON.stringify(document).includes("The canary was [sensitive value]."),
      "the review's log tail shows the error",
    );
    assertNoLeak("the review", JSON.stringify(document), variable);
  },
  { runner: true },
);

masks.run();
canaries.run();
