import { suite } from "uvu";
import * as assert from "uvu/assert";
import { expectNothingApplied, testEachInitializedProject, transcript } from "./cli.ts";

const apply = suite("tofu apply against StackShip, answering no");

testEachInitializedProject(
  apply,
  "plans, prompts, and discards the run on any answer but yes; nothing is applied",
  async (server, project) => {
    const result = await project.tofu(["apply"], { stdin: "no\n" });
    assert.is(result.code, 1, transcript(result));
    assert.match(result.stdout, "Plan: 1 to add, 0 to change, 0 to destroy.", transcript(result));
    assert.match(result.stdout + result.stderr, "Apply discarded.", transcript(result));

    const [run] = await project.runs();
    assert.is(run.status, "discarded");
    assert.is(run.execution.applyStatus, "pending");
    const review = await server.services.stores.reviews.getByRun(run.id);
    assert.is(review?.decision, "discarded");
    await expectNothingApplied(server, project);
  },
  { runner: true },
);

apply.run();
