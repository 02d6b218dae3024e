// GET /api/v2/plans/{plan_id}/json-output-redacted (issue 29): the redacted plan the CLI renders
// itself, built in the plan sandbox from the saved plan and the provider schemas, stored framed
// and encrypted with a descriptor, served to any caller with run:read. One case stores an
// artifact directly (who may read it); the others run real plans.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { phaseId } from "../../src/api/tfe/presenters.ts";
import { writeRunArtifact } from "../../src/commands/run-artifacts.ts";
import { readPlanJson } from "../../src/runner/plan-json.ts";
import { createOrganizationWithToken, createToken, createWorkspace } from "../support/factories.ts";
import { renderLocal, renderPlanUnavailable, renderRedacted } from "../support/render-plan.ts";
import { fixture, startRun } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import { plannedRunIn } from "../support/api-plan-json.ts";

const test = suite("tfe json-output-redacted");

async function setUp(server: TestServer) {
  const { organizationName } = await createOrganizationWithToken(server, "acme", "admin");
  const { token: admin } = await createToken(server, server.bootstrapToken, organizationName, "admin");
  const { token: viewer } = await createToken(server, server.bootstrapToken, organizationName, "viewer");
  const { organizationName: other } = await createOrganizationWithToken(server, "other", "admin");
  const { token: outsider } = await createToken(server, server.bootstrapToken, other, "admin");
  // Without structured output (on by default for new workspaces): only imports build the redacted plan here.
  const workspace = await createWorkspace(server, admin, organizationName, {
    name: "app",
    structured_run_output_enabled: false,
  });
  return { admin, viewer, outsider, workspace };
}

function get(server: TestServer, token: string, planId: string): Promise<Response> {
  return fetch(`${server.baseUrl}/api/v2/plans/${planId}/json-output-redacted`, {
    headers: { Authorization: `Bearer ${token}` },
  });
}

async function assertUnavailable(response: Response) {
  assert.is(response.status, 404);
  const document = (await response.json()) as { errors: Array<{ code: string }> };
  assert.is(document.errors[0].code, "PLAN_JSON_UNAVAILABLE");
}

testEachServer(
  test,
  "a viewer reads the stored redacted plan byte for byte; another organization and an unfinished plan read 404",
  async (server) => {
    const { admin, viewer, outsider, workspace } = await setUp(server);
    const created = await startRun(server, admin, workspace.id, { "main.tf": "\n" }, "speculative");
    const run = (await server.services.stores.runs.getById(created.id))!;
    const bytes = Buffer.from(
      JSON.stringify({
        plan_format_version: "1.2",
        resource_changes: [],
        provider_format_version: "1.0",
        provider_schemas: {},
      }),
    );
    await writeRunArtifact(server.services, run, "plan_json_redacted", bytes);
    const planId = phaseId(run.id, "plan");
    // Not published before the plan finished.
    await assertUnavailable(await get(server, viewer, planId));
    await server.services.stores.runs.update(run.id, run.status, { planStatus: "finished", updatedAt: new Date() });
    const response = await get(server, viewer, planId);
    assert.is(response.status, 200);
    assert.is(response.headers.get("cache-control"), "private, no-store");
    assert.is(response.headers.get("content-length"), String(bytes.length));
    assert.ok(Buffer.from(await response.arrayBuffer()).equals(bytes));
    await assertUnavailable(await get(server, outsider, planId));
    await assertUnavailable(await get(server, viewer, "plan-0000000000000000"));
  },
);

const CANARY_VARIABLE = "canary-variable-3141592";
const CANARY_ATTRIBUTE = "canary-attribute-2718281";
const CANARY_IMPORT = "canary-import-id-1618033";

/**
 * A sensitive variable, a sensitive() attribute and an import block whose id is a secret
 * (random_password's id is its result). The import is what makes the launcher build the redacted
 * plan on a workspace without structured output.
 */
const IMPORTING = {
  "main.tf": `
variable "secret" {
  type      = string
  sensitive = true
  default   = "${CANARY_VARIABLE}"
}
resource "terraform_data" "visible" {
  input = { name = "visible", token = var.secret }
}
resource "terraform_data" "hidden" {
  input = sensitive({ k = "${CANARY_ATTRIBUTE}", n = 5 })
}
resource "random_password" "imported" {
  length = ${CANARY_IMPORT.length}
}
import {
  to = random_password.imported
  id = "${CANARY_IMPORT}"
}
`,
};

const unavailable = renderPlanUnavailable();

testEachServer(
  test,
  "a plan that imports: the redacted plan holds no sensitive value and renders as the plan JSON does",
  async (server) => {
    const { admin, viewer, workspace } = await setUp(server);
    const run = await plannedRunIn(server, admin, workspace.id, IMPORTING);
    const response = await get(server, viewer, phaseId(run.id, "plan"));
    assert.is(response.status, 200);
    const text = await response.text();
    for (const canary of [CANARY_VARIABLE, CANARY_ATTRIBUTE, CANARY_IMPORT])
      assert.not.ok(text.includes(canary), `${canary} is in the redacted plan`);
    const document = JSON.parse(text) as {
      resource_changes: Array<{ address: string; change: { importing?: { id: string } } }>;
      provider_schemas: Record<string, unknown>;
    };
    const imported = document.resource_changes.find((r) => r.address === "random_password.imported")!;
    assert.is(imported.change.importing?.id, "[sensitive value]");
    assert.equal(Object.keys(document.provider_schemas).sort(), [
      "registry.opentofu.org/hashicorp/random",
      "terraform.io/builtin/terraform",
    ]);
    if (unavailable) return;
    // The CLI's renderer: the same lines as from the unredacted plan JSON the runner stored.
    const record = (await server.services.stores.runs.getById(run.id))!;
    const dir = mkdtempSync(join(tmpdir(), "redacted-plan-"));
    try {
      writeFileSync(join(dir, "plan.json"), await readPlanJson(server.services, record));
      writeFileSync(
        join(dir, "schemas.json"),
        JSON.stringify({ format_version: "1.0", provider_schemas: document.provider_schemas }),
      );
      // The import id is random_password's result, a value the plan marks sensitive: tofu prints
      // it locally; the redacted plan has it redacted by value, like the logs.
      const local = renderLocal(join(dir, "plan.json"), join(dir, "schemas.json"));
      assert.ok(local.includes(`# (imported from "${CANARY_IMPORT}")`));
      const rendered = renderRedacted(text);
      assert.fixture(rendered, local.replace(CANARY_IMPORT, "[sensitive value]"));
      assert.match(rendered, /token = \(sensitive value\)/);
      assert.match(rendered, /input += \(sensitive value\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  { runner: true },
);

testEachServer(
  test,
  "a workspace without structured output and a plan without imports: no redacted plan (404)",
  async (server) => {
    const { admin, viewer, workspace } = await setUp(server);
    const run = await plannedRunIn(server, admin, workspace.id, fixture("random"));
    await assertUnavailable(await get(server, viewer, phaseId(run.id, "plan")));
  },
  { runner: true },
);

test.run();
