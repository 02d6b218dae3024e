import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cliProject, testEachCliServer, transcript } from "./cli.ts";

const forceUnlock = suite("tofu force-unlock against StackShip");

testEachCliServer(
  forceUnlock,
  "releases a lock someone else took (organization admin), and is refused when nothing is locked",
  async (server) => {
    const project = await cliProject(server);
    try {
      const init = await project.tofu(["init"]);
      assert.is(init.code, 0, transcript(init));
      const workspace = (await project.workspace())!;
      const locked = await fetch(`${server.baseUrl}/api/v2/workspaces/${workspace.id}/actions/lock`, {
        method: "POST",
        headers: { Authorization: `Bearer ${server.bootstrapToken}`, "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({ data: { type: "", attributes: { reason: "maintenance" } } }),
      });
      assert.is(locked.status, 200, await locked.text());
      assert.ok(await server.services.stores.workspaceLocks.current(workspace.id));

      const result = await project.tofu([
        "force-unlock",
        "-force",
        `${project.organizationName}/${project.workspaceName}`,
      ]);
      assert.is(result.code, 0, transcript(result));
      assert.match(result.stdout, "successfully unlocked", transcript(result));
      assert.is(await server.services.stores.workspaceLocks.current(workspace.id), undefined);

      const again = await project.tofu([
        "force-unlock",
        "-force",
        `${project.organizationName}/${project.workspaceName}`,
      ]);
      assert.is(again.code, 1, transcript(again));
    } finally {
      await project.cleanup();
    }
  },
);

forceUnlock.run();
