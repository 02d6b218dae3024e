// Faults that lose nothing (issue 31, part 5): a runner-only process killed with SIGKILL during a
// plan. Expected by the issue: the plan is retried by another runner and the run goes on to
// awaiting_approval (runner/engine.ts `handleLost`: a lost plan of a `planning` run goes back to
// `pending` with a new job, `plan_requeued`), with evidence of the new attempt only. PostgreSQL
// only (runner-only processes need it). About 15 s.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getRun } from "../../../client/src/index.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { fixture, readLog, startRun, waitForStatus } from "../support/runs.ts";
import { runnerEnv, spawnStackShip, type Spawned } from "../support/spawned.ts";
import { withTestServer } from "../support/test-server.ts";
import { skipTest } from "../support/skips.ts";

const test = suite("a runner killed during a plan");
const title = "SIGKILL of the runner holding a plan: another runner plans the run again";

if (!process.env.STACKSHIP_TEST_PG_URL) {
  skipTest(test, title, "set STACKSHIP_TEST_PG_URL: runner-only processes need PostgreSQL");
} else {
  test(title, () =>
    withTestServer("postgres", async (server) => {
      const runners: Spawned[] = [];
      const start = async () => {
        const runner = spawnStackShip("runner-main.ts", runnerEnv(server, { STACKSHIP_RUNNER_STALE_AFTER_MS: "1500" }));
        runners.push(runner);
        await runner.line(/runner \S+ started/);
        return runner;
      };
      try {
        const { token, organizationName } = await createOrganizationWithToken(server, "killed");
        const workspace = await createWorkspace(server, token, organizationName, { name: "killed" });
        const first = await start();
        const run = await startRun(server, token, workspace.id, fixture("basic"));
        for (;;) {
          const status = expectStatus(await getRun({ client: server.v1(token), path: { run_id: run.id } }), 200).data
            .attributes.status;
          if (status === "planning") break;
          assert.ok(status === "pending", `the plan ended before the kill: ${status}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await first.kill("SIGKILL");
        await start();
        const ended = await waitForStatus(
          server,
          token,
          run.id,
          ["awaiting_approval", "errored", "planned_and_finished"],
          90_000,
        );
        const log = await readLog(server, token, run.id, "plan");
        assert.is(ended.attributes.status, "awaiting_approval", `${ended.attributes.status_reason}: ${log}`);
        assert.match(
          log,
          /the runner planning this run was lost \(its runner stopped heartbeating\); the plan runs again from the start/,
        );

        // Fresh evidence: the last plan attempt succeeded, any before it was lost, and the saved
        // plan the run is bound to was written by that last attempt.
        const attempts = await server.db
          .knex("run_attempts")
          .where({ run_id: run.id, phase: "plan" })
          .orderBy("attempt_number", "asc")
          .select<Array<{ status: string; terminal_classification: string | null; started_at: string | Date }>>(
            "status",
            "terminal_classification",
            "started_at",
          );
        const last = attempts.at(-1)!;
        assert.is(last.status, "succeeded");
        for (const earlier of attempts.slice(0, -1))
          assert.equal([earlier.status, earlier.terminal_classification], ["lost", "runner_lost"]);
        const plan = await server.db
          .knex("artifacts")
          .where({ run_id: run.id, kind: "plan" })
          .first<{ sha256: string; created_at: string | Date }>("sha256", "created_at");
        assert.is(plan.sha256, ended.attributes.plan_digest);
        assert.ok(
          new Date(plan.created_at).getTime() >= new Date(last.started_at).getTime(),
          "the saved plan was written by the attempt that succeeded",
        );
      } finally {
        for (const runner of runners) await runner.kill();
      }
    }),
  );
}

test.run();
