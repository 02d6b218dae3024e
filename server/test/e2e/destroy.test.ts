import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cliProject, testEachCliServer, transcript } from "./cli.ts";

const destroy = suite("tofu destroy against StackShip");

testEachCliServer(
  destroy,
  "is refused before anything starts (with and without -auto-approve), exit 1, and no run is created",
  async (server) => {
    const project = await cliProject(server);
    try {
      const init = await project.tofu(["init"]);
      assert.is(init.code, 0, transcript(init));

      for (const args of [["destroy"], ["destroy", "-auto-approve"]]) {
        const result = await project.tofu(args, { stdin: "yes\n" });
        assert.is(result.code, 1, transcript(result));
        assert.match(result.stderr, "invalid_document", transcript(result));
        assert.match(result.stderr, "does not run destroy plans", transcript(result));
        assert.not.match(result.stdout, "Destroy complete", transcript(result));
      }

      assert.equal(await project.runs(), []);
      const workspace = await project.workspace();
      assert.is(await server.services.stores.workspaceLocks.current(workspace!.id), undefined);
    } finally {
      await project.cleanup();
    }
  },
  { runner: true },
);

destroy.run();
