import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cliProject, testEachCliServer, transcript } from "./cli.ts";

const autoApprove = suite("tofu apply -auto-approve against StackShip");

testEachCliServer(
  autoApprove,
  "is refused with the instruction to rerun without -auto-approve, exit 1, and no run is created",
  async (server) => {
    const project = await cliProject(server);
    try {
      const init = await project.tofu(["init"]);
      assert.is(init.code, 0, transcript(init));

      const result = await project.tofu(["apply", "-auto-approve"]);
      assert.is(result.code, 1, transcript(result));
      assert.match(result.stderr, "invalid_document", transcript(result));
      assert.match(result.stderr, "Rerun `tofu apply` without -auto-approve", transcript(result));
      assert.not.match(result.stdout, "Apply complete", transcript(result));

      assert.equal(await project.runs(), []);
      const workspace = await project.workspace();
      assert.is(await server.services.stores.stateVersions.current(workspace!.id), undefined);
      assert.is(await server.services.stores.workspaceLocks.current(workspace!.id), undefined);
    } finally {
      await project.cleanup();
    }
  },
  { runner: true },
);

autoApprove.run();
