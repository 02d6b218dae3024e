import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachInitializedProject, transcript } from "./cli.ts";

const plan = suite("tofu plan against StackShip");

testEachInitializedProject(
  plan,
  "runs a speculative plan remotely, streams its log and exits 0 (2 with -detailed-exitcode)",
  async (server, project) => {
    const result = await project.tofu(["plan"]);
    assert.is(result.code, 0, transcript(result));
    // The plan text streamed from the run's log.
    assert.match(result.stdout, "terraform_data.greeting will be created", transcript(result));
    assert.match(result.stdout, "Plan: 1 to add, 0 to change, 0 to destroy.", transcript(result));

    const [run] = await project.runs();
    assert.is(run.kind, "speculative");
    assert.is(run.source, "cli");
    assert.is(run.status, "planned_and_finished");
    assert.match(result.stdout, run.id);
    // The policy stage's log follows the plan's in the stream the CLI shows.
    const policyLog = (await server.services.stores.logs.read(run.id, "policy", 0, 1_000_000)).text.trim();
    assert.ok(policyLog.length > 0);
    assert.match(result.stdout, policyLog.split("\n")[0], transcript(result));

    const detailed = await project.tofu(["plan", "-detailed-exitcode"]);
    assert.is(detailed.code, 2, transcript(detailed));
    const runs = await project.runs();
    assert.is(runs.length, 2);
    assert.ok(runs.every((r) => r.kind === "speculative" && r.status === "planned_and_finished"));
  },
  { runner: true },
);

plan.run();
