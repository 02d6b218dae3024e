import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readPlanJson } from "../../src/runner/plan-json.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { startRun, waitToSettle } from "../support/runs.ts";
import { testEachServer } from "../support/test-server.ts";

// Issue 25 part 5: tofu's data directory in the sandbox is outside the configuration (providers
// only from the mirror), yet the modules a CLI's local `tofu init` installed, which its upload
// carries in `.terraform/modules/` (go-slug's defaults), are still reused offline: a registry
// module the sandbox could never download plans from the uploaded copy.
const modules = suite("modules the CLI uploads with the configuration");

testEachServer(
  modules,
  "a registry module installed by the CLI (.terraform/modules/ in the upload) plans offline; the providers still come from the mirror",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "modules" });
    const run = await startRun(
      server,
      token,
      workspace.id,
      {
        "main.tf":
          'module "thing" {\n  source  = "acme/thing/null"\n  version = "1.0.0"\n}\noutput "from_module" {\n  value = module.thing.v\n}\n',
        ".terraform/modules/modules.json": JSON.stringify({
          Modules: [
            { Key: "", Source: "", Dir: "." },
            {
              Key: "thing",
              Source: "registry.opentofu.org/acme/thing/null",
              Version: "1.0.0",
              Dir: ".terraform/modules/thing",
            },
          ],
        }),
        ".terraform/modules/thing/main.tf": 'output "v" {\n  value = "uploaded-module-output"\n}\n',
      },
      "speculative",
    );
    await waitToSettle(server, token, run.id, "planned_and_finished");
    const planJson = JSON.parse(
      (await readPlanJson(server.services, (await server.services.stores.runs.getById(run.id))!)).toString("utf8"),
    ) as {
      planned_values: { outputs: Record<string, { value: unknown }> };
    };
    assert.is(planJson.planned_values.outputs.from_module.value, "uploaded-module-output");
  },
  { runner: true },
);

modules.run();
