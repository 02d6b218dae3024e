import { suite } from "uvu";
import * as assert from "uvu/assert";
import { expectNothingApplied, testEachInitializedProject, transcript } from "./cli.ts";

const autoApprove = suite("tofu apply -auto-approve against StackShip");

testEachInitializedProject(
  autoApprove,
  "is refused with the instruction to rerun without -auto-approve, exit 1, and no run is created",
  async (server, project) => {
    const result = await project.tofu(["apply", "-auto-approve"]);
    assert.is(result.code, 1, transcript(result));
    assert.match(result.stderr, "invalid_document", transcript(result));
    assert.match(result.stderr, "Rerun `tofu apply` without -auto-approve", transcript(result));
    assert.not.match(result.stdout, "Apply complete", transcript(result));

    assert.equal(await project.runs(), []);
    await expectNothingApplied(server, project);
  },
  { runner: true },
);

autoApprove.run();
