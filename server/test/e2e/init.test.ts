import { suite } from "uvu";
import * as assert from "uvu/assert";
import { pinnedOpenTofuVersion } from "../support/factories.ts";
import { cliProject, testEachCliServer, transcript } from "./cli.ts";

const init = suite("tofu init against StackShip (cloud block, CLI-config host block over HTTP)");

testEachCliServer(init, "creates the workspace on the first init and finds it on the second", async (server) => {
  const project = await cliProject(server);
  try {
    assert.is(await project.workspace(), undefined);
    const first = await project.tofu(["init"]);
    assert.is(first.code, 0, transcript(first));
    assert.match(first.stdout, "initialized");
    const workspace = await project.workspace();
    assert.ok(workspace, "tofu init created the workspace");
    assert.is(workspace.opentofuVersion, pinnedOpenTofuVersion());

    const second = await project.tofu(["init"]);
    assert.is(second.code, 0, transcript(second));
    assert.is((await project.workspace())!.id, workspace.id);
    assert.equal(await project.runs(), []);
  } finally {
    await project.cleanup();
  }
});

init.run();
