import { suite } from "uvu";
import * as assert from "uvu/assert";
import { discardRun } from "../../../client/src/index.ts";
import { expectStatus } from "../support/responses.ts";
import { poll } from "../support/poll.ts";
import { holdWorkspace, testEachInitializedProject, transcript } from "./cli.ts";

const queued = suite("tofu apply while another run holds the workspace");

testEachInitializedProject(
  queued,
  "the CLI's run waits pending (queue polled) until the holder is discarded, then plans and prompts",
  async (server, project) => {
    const { holder } = await holdWorkspace(server, project);

    const applying = project.tofu(["apply"], { stdin: "no\n" });
    // The CLI's run is created and stays pending behind the holder while the CLI polls.
    const deadline = Date.now() + 30_000;
    let mine;
    while (Date.now() < deadline) {
      mine = (await project.runs()).find((r) => r.id !== holder.id);
      if (mine) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(mine, "tofu apply created a run");
    // The runner tries its plan and puts it back while the holder keeps the workspace, twice.
    const runId = mine.id;
    await poll("the runner to put the queued plan back twice", async () => {
      const job = await server.db
        .knex("run_jobs")
        .where({ run_id: runId, phase: "plan" })
        .first<{ attempts: number | string; status: string } | undefined>();
      return job && Number(job.attempts) >= 2 && job.status === "queued" ? job : undefined;
    });
    assert.is((await server.services.stores.runs.getById(mine.id))?.status, "pending");

    const discarded = await discardRun({
      client: server.v1(project.token),
      path: { run_id: holder.id },
      body: { data: { type: "decisions", attributes: { reason: "make room" } } },
    });
    expectStatus(discarded, 202);

    const result = await applying;
    assert.is(result.code, 1, transcript(result));
    assert.match(result.stdout, "Plan: 1 to add, 0 to change, 0 to destroy.", transcript(result));
    assert.match(result.stdout + result.stderr, "Apply discarded.", transcript(result));
    assert.is((await server.services.stores.runs.getById(mine.id))?.status, "discarded");
  },
  { runner: true },
);

queued.run();
