import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cliProject, testEachCliServer, transcript } from "./cli.ts";

const init = suite("tofu init with a project in the cloud block");

testEachCliServer(
  init,
  "creates the missing project, then the workspace inside it; a second init finds both",
  async (server) => {
    const project = await cliProject(server, { project: "platform" });
    try {
      const first = await project.tofu(["init"]);
      assert.is(first.code, 0, transcript(first));
      const workspace = await project.workspace();
      assert.ok(workspace, "tofu init created the workspace");
      const created = await server.services.stores.projects.getById(workspace.projectId);
      assert.is(created?.name, "platform");

      const second = await project.tofu(["init"]);
      assert.is(second.code, 0, transcript(second));
      const projects = await server.services.stores.projects.listByOrganization(workspace.organizationId);
      assert.is(projects.filter((p) => p.name === "platform").length, 1);
    } finally {
      await project.cleanup();
    }
  },
);

init.run();
