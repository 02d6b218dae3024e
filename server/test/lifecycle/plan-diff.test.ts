import { suite } from "uvu";
import { writeRunArtifact } from "../../src/commands/run-artifacts.ts";
import * as assert from "uvu/assert";
import { getRunPlanChanges } from "../../../client/src/index.ts";
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import { createOrganizationWithToken, createVariable, createWorkspace } from "../support/factories.ts";
import { expectV1Error } from "../support/responses.ts";
import { approvePlan, fixture, startRun, waitForPlanned, waitToSettle } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { components } from "../../../generated/v1/types.gen.ts";

/** The plan-diff document, with each resource's before/after read as a JSON object (the values these tests look into). */
type Values = Record<string, unknown>;
type Resource = Omit<components["schemas"]["PlanDiffResource"], "before" | "after"> & { before: Values; after: Values };
type Artifact = Omit<components["schemas"]["PlanDiff"], "resources"> & { resources: Resource[] };

const S = { $stackship: "sensitive" };
const U = { $stackship: "unknown" };
const US = { $stackship: "unknown", sensitive: true };

async function planChanges(server: TestServer, token: string, runId: string) {
  return getRunPlanChanges({ client: server.v1(token), path: { run_id: runId } });
}

async function artifactOf(
  server: TestServer,
  token: string,
  runId: string,
): Promise<{ artifact: Artifact; text: string; response: Response }> {
  const result = await planChanges(server, token, runId);
  assert.is(result.response.status, 200, JSON.stringify(result.error));
  assert.is(result.response.headers.get("content-type")?.split(";")[0], "application/json");
  assert.is(result.response.headers.get("cache-control"), "private, no-store");
  assert.ok(v1Validators.PlanDiff(result.data), JSON.stringify(v1Validators.PlanDiff.errors));
  return { artifact: result.data as Artifact, text: JSON.stringify(result.data), response: result.response };
}

const real = suite("plan-diff artifact from real tofu plans");

testEachServer(
  real,
  "terraform_data, a sensitive variable and random_password: built in the sandbox, stored, served redacted; an update redacts both sides",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "diff" });
    const secret = "plan-diff-canary-39151";
    await createVariable(server, token, workspace.id, { key: "api_key", value: secret, sensitive: true });
    const secretTf =
      'variable "api_key" {\n  type      = string\n  sensitive = true\n}\nresource "terraform_data" "secret" {\n  input = var.api_key\n}\n';
    const run = await startRun(server, token, workspace.id, { ...fixture("random"), "secret.tf": secretTf });
    const planned = await waitForPlanned(server, token, run.id);
    // The dependency lock file tofu init wrote travels with the plan (the launcher copies it out).
    const recorded = (await server.services.stores.runs.getById(run.id))!.execution.dependencyLockFile;
    assert.match(recorded ?? "", /provider "registry\.opentofu\.org\/hashicorp\/random" \{/);

    const first = await artifactOf(server, token, run.id);
    assert.is(first.artifact.format, "stackship.plan-diff/v1");
    assert.is(first.artifact.run_id, run.id);
    assert.is(first.artifact.opentofu_version, planned.attributes.opentofu_version);
    assert.is(first.artifact.truncated, false);
    assert.is(first.artifact.plan_errored, false);
    const byAddress = Object.fromEntries(first.artifact.resources.map((r) => [r.address, r]));
    assert.equal(Object.keys(byAddress).sort(), ["random_password.db", "terraform_data.app", "terraform_data.secret"]);
    const password = byAddress["random_password.db"];
    assert.equal(
      [password.action, password.actions, password.provider, password.before],
      ["create", ["create"], "registry.opentofu.org/hashicorp/random", null],
    );
    assert.equal(
      [
        password.after.length,
        password.after.special,
        password.after.result,
        password.after.bcrypt_hash,
        password.after.id,
      ],
      [24, false, US, US, U],
    );
    const secretResource = byAddress["terraform_data.secret"];
    assert.equal(
      [secretResource.provider, secretResource.after.input, secretResource.after.output, secretResource.after.id],
      ["terraform.io/builtin/terraform", S, U, U],
    );
    // terraform_data.app's input holds the (unknown, sensitive) password.
    assert.equal(byAddress["terraform_data.app"].after.input, { name: "app", password: US });
    assert.not.ok(first.text.includes(secret), "the sensitive variable leaked into the plan changes");

    // Stored as its own encrypted artifact, described by its ref.
    const stored = (await server.services.stores.artifacts.forRun(run.id, "plan_diff"))!.ref;
    assert.match(stored.sha256, /^[0-9a-f]{64}$/);
    // Weak when the response was compressed (fetch asks for br/gzip): the encoded bytes are another representation.
    assert.ok([`"${stored.sha256}"`, `W/"${stored.sha256}"`].includes(first.response.headers.get("etag") ?? ""));
    assert.is(stored.sizeBytes, Buffer.byteLength(first.text));
    assert.is(stored.key, `runs/${run.id}/plan-diff.json`);
    assert.is(stored.format, "framed-aes256gcm-v1");

    await approvePlan(server, token, run.id, planned.attributes.plan_digest!);
    await waitToSettle(server, token, run.id, "applied");

    // An update of the sensitive value: redacted before and after; the unchanged resources are no-ops and omitted.
    const changed = secretTf.replace("input = var.api_key", 'input = "${var.api_key}-v2"');
    const second = await startRun(server, token, workspace.id, { ...fixture("random"), "secret.tf": changed });
    await waitForPlanned(server, token, second.id);
    const update = await artifactOf(server, token, second.id);
    assert.equal(
      update.artifact.resources.map((r) => [r.address, r.action]),
      [["terraform_data.secret", "update"]],
    );
    const [entry] = update.artifact.resources;
    // OpenTofu does not mark terraform_data's `output` in `before` although it holds the sensitive
    // value; the run's known secrets redact it anyway.
    assert.equal([entry.before.input, entry.after.input, entry.before.output, entry.after.output], [S, S, S, U]);
    assert.match(entry.before.id as string, /^[0-9a-f-]{36}$/);
    assert.is(update.artifact.truncation.changed_resources, 1);
    assert.not.ok(update.text.includes(secret), "the sensitive variable leaked into the plan changes");
  },
  { runner: true },
);

testEachServer(
  real,
  "a sensitive workspace variable the configuration does not declare sensitive is redacted anyway (the masks miss it)",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "undeclared" });
    const secret = "undeclared-canary-55012";
    await createVariable(server, token, workspace.id, { key: "token", value: secret, sensitive: true });
    const files = {
      "main.tf":
        'variable "token" { type = string }\nresource "terraform_data" "t" {\n  input = { token = var.token, name = "x" }\n}\n',
    };
    const run = await startRun(server, token, workspace.id, files);
    await waitForPlanned(server, token, run.id);
    const { artifact, text } = await artifactOf(server, token, run.id);
    assert.equal(artifact.resources[0].after.input, { name: "x", token: S });
    assert.not.ok(text.includes(secret));
  },
  { runner: true },
);

const serving = suite("GET /v1/runs/{run_id}/plan-changes");

testEachServer(
  serving,
  "not available yet while the plan is unfinished; unavailable when none was produced; invisible to other organizations",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const other = await createOrganizationWithToken(server, "other");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    // No runner in this server: the plan stays pending.
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    expectV1Error(await planChanges(server, token, run.id), 409, "RUN_PLAN_CHANGES_NOT_READY");
    assert.ok(
      await server.services.stores.runs.update(run.id, "pending", {
        status: "planning",
        planStatus: "running",
        updatedAt: new Date(),
      }),
    );
    expectV1Error(await planChanges(server, token, run.id), 409, "RUN_PLAN_CHANGES_NOT_READY");
    expectV1Error(await planChanges(server, other.token, run.id), 404, "NOT_FOUND");
    expectV1Error(await planChanges(server, token, "run-0000000000000000"), 404, "NOT_FOUND");

    // The plan ended without an artifact (errored, or built none): unavailable, never an empty list.
    assert.ok(
      await server.services.stores.runs.update(run.id, "planning", {
        status: "errored",
        planStatus: "errored",
        updatedAt: new Date(),
      }),
    );
    expectV1Error(await planChanges(server, token, run.id), 404, "RUN_PLAN_CHANGES_UNAVAILABLE");
    assert.ok(
      await server.services.stores.runs.update(run.id, "errored", { planStatus: "finished", updatedAt: new Date() }),
    );
    expectV1Error(await planChanges(server, token, run.id), 404, "RUN_PLAN_CHANGES_UNAVAILABLE");

    // A stored artifact is served as stored.
    const text =
      '{"format":"stackship.plan-diff/v1","run_id":"' +
      run.id +
      '","opentofu_version":"1.12.6","plan_format_version":"1.2","plan_timestamp":null,"plan_errored":false,"truncated":false,"truncation":{"max_resources":5000,"max_bytes":4194304,"changed_resources":0,"cut":0,"withheld":0,"dropped":0},"resources":[]}';
    const descriptor = await writeRunArtifact(
      server.services,
      (await server.services.stores.runs.getById(run.id))!,
      "plan_diff",
      Buffer.from(text),
    );
    const served = await artifactOf(server, token, run.id);
    assert.is(served.text, text);
    assert.is(served.response.headers.get("etag"), `"${descriptor.sha256}"`);
  },
);

real.run();
serving.run();
