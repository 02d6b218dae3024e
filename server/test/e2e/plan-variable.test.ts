import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachInitializedProject, transcript } from "./cli.ts";

const planVariable = suite("tofu plan -var against StackShip");

const CONFIGURATION = `variable "greeting" {
  type = string
}

variable "sizes" {
  type = list(number)
  default = [1]
}

resource "terraform_data" "greeting" {
  input = "\${var.greeting}:\${length(var.sizes)}"
}
`;

testEachInitializedProject(
  planVariable,
  "-var values reach the remote plan as run variables (strings stay strings, lists stay lists)",
  async (server, project) => {
    const result = await project.tofu(["plan", "-var", "greeting=hello from the CLI", "-var", "sizes=[1, 2, 3]"]);
    assert.is(result.code, 0, transcript(result));
    assert.match(result.stdout, '"hello from the CLI:3"', transcript(result));
    const [run] = await project.runs();
    const snapshot = await server.services.stores.snapshots.getById(run.inputSnapshotId);
    assert.equal(
      snapshot!.document.variables.map((v) => [v.key, v.hcl, "value" in v ? v.value : null]),
      [
        ["greeting", true, '"hello from the CLI"'],
        ["sizes", true, "[1, 2, 3]"],
      ],
    );
  },
  { runner: true, project: { configuration: CONFIGURATION } },
);

planVariable.run();
