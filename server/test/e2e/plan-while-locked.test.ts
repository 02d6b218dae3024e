import { suite } from "uvu";
import * as assert from "uvu/assert";
import { holdWorkspace, testEachInitializedProject, transcript } from "./cli.ts";

const plan = suite("tofu plan while another run holds the workspace");

testEachInitializedProject(
  plan,
  "a speculative plan runs alongside a run awaiting approval, which keeps the workspace lock",
  async (server, project) => {
    const { workspace, holder } = await holdWorkspace(server, project);
    const lock = await server.services.stores.workspaceLocks.current(workspace.id);
    assert.is(lock?.holder.id, holder.id);

    const result = await project.tofu(["plan"]);
    assert.is(result.code, 0, transcript(result));
    assert.match(result.stdout, "Plan: 1 to add, 0 to change, 0 to destroy.", transcript(result));

    const runs = await project.runs();
    assert.is(runs.length, 2);
    assert.is(runs.find((r) => r.id !== holder.id)?.status, "planned_and_finished");
    assert.is((await server.services.stores.runs.getById(holder.id))?.status, "awaiting_approval");
    assert.is((await server.services.stores.workspaceLocks.current(workspace.id))?.holder.id, holder.id);
  },
  { runner: true },
);

plan.run();
