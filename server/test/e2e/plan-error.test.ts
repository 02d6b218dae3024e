import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cliProject, testEachCliServer, transcript } from "./cli.ts";

const plan = suite("tofu plan of a configuration that fails to plan");

testEachCliServer(
  plan,
  "streams the error from the run's log and exits 1; the run is errored",
  async (server) => {
    const project = await cliProject(server, {
      configuration: 'resource "terraform_data" "broken" {\n  input = var.missing\n}\n',
    });
    try {
      const init = await project.tofu(["init"]);
      assert.is(init.code, 0, transcript(init));
      const result = await project.tofu(["plan"]);
      assert.is(result.code, 1, transcript(result));
      assert.match(result.stdout + result.stderr, "Reference to undeclared input variable", transcript(result));
      const [run] = await project.runs();
      assert.is(run.status, "errored");
    } finally {
      await project.cleanup();
    }
  },
  { runner: true },
);

plan.run();
