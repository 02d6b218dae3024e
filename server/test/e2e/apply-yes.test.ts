import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachInitializedProject, transcript } from "./cli.ts";

const apply = suite("tofu apply against StackShip, answering yes");

testEachInitializedProject(
  apply,
  "plans, prompts, records the CLI's yes as the approval bound to the run's plan, applies and publishes state serial 1",
  async (server, project) => {
    const result = await project.tofu(["apply"], { stdin: "yes\n" });
    assert.is(result.code, 0, transcript(result));
    assert.match(result.stdout, "Plan: 1 to add, 0 to change, 0 to destroy.", transcript(result));
    assert.match(result.stdout, "Do you want to perform these actions in workspace", transcript(result));
    assert.match(result.stdout, "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.", transcript(result));

    const [run] = await project.runs();
    assert.is(run.kind, "plan_and_apply");
    assert.is(run.status, "applied");
    const review = await server.services.stores.reviews.getByRun(run.id);
    assert.is(review?.decision, "approved");
    assert.is(review?.planDigest, run.execution.planDigest);
    assert.is(review?.policyResultDigest, run.execution.policyResultDigest);

    const workspace = await project.workspace();
    const state = await server.services.stores.stateVersions.current(workspace!.id);
    assert.is(state?.serial, 1);
    assert.is(state?.runId, run.id);
    // `tofu output` reads the published outputs.
    const output = await project.tofu(["output", "-raw", "greeting"]);
    assert.is(output.code, 0, transcript(output));
    assert.is(output.stdout, "hello");
    // `tofu state pull` and `tofu state list` read the published state (the token has state:read).
    const pulled = await project.tofu(["state", "pull"]);
    assert.is(pulled.code, 0, transcript(pulled));
    const pulledState = JSON.parse(pulled.stdout) as {
      serial: number;
      lineage: string;
      resources: Array<{ type: string; name: string }>;
    };
    assert.is(pulledState.serial, 1);
    assert.is(pulledState.lineage, state!.lineage);
    assert.equal(
      pulledState.resources.map((r) => `${r.type}.${r.name}`),
      ["terraform_data.greeting"],
    );
    const listed = await project.tofu(["state", "list"]);
    assert.is(listed.code, 0, transcript(listed));
    assert.is(listed.stdout.trim(), "terraform_data.greeting");

    // The lock went with the run.
    assert.is(await server.services.stores.workspaceLocks.current(workspace!.id), undefined);

    // Applying again: nothing to do, no prompt, exit 0, nothing published.
    const again = await project.tofu(["apply"], { stdin: "" });
    assert.is(again.code, 0, transcript(again));
    assert.match(again.stdout, "No changes.", transcript(again));
    assert.not.match(again.stdout, "Do you want to perform these actions", transcript(again));
    const [second] = await project.runs();
    assert.is(second.status, "planned_and_finished");
    assert.is((await server.services.stores.stateVersions.current(workspace!.id))?.serial, 1);
  },
  { runner: true },
);

apply.run();
