import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachInitializedProject, transcript } from "./cli.ts";

const destroy = suite("tofu destroy against StackShip");

testEachInitializedProject(
  destroy,
  "is refused before anything starts (with and without -auto-approve), exit 1, and no run is created",
  async (server, project) => {
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
  },
  { runner: true },
);

destroy.run();
