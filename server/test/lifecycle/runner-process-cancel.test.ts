import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cancelRun } from "../../../client/src/index.ts";
import { cancelRun as tfeCancelRun } from "../../../generated/tfe/client/sdk.gen.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { runnerEnv, sandboxProcesses, scrape, spawnStackShip } from "../support/spawned.ts";
import { approvePlan, readLog, startRun, waitForLog, waitForStatus } from "../support/runs.ts";
import { poll } from "../support/poll.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

// The API (this test's server: no runner in its process, so no in-process interrupt exists) and
// a spawned runner-only process share only the database: a cancel recorded through the API must
// reach the runner process, which interrupts the sandbox. The latency printed is from the cancel
// response to the attempt recorded as ended (the sandbox gone); no timed assertion.
const cancel = suite("cancel reaches a runner in another process");

const many = { "main.tf": 'resource "terraform_data" "many" {\n  count = 4000\n  input = count.index\n}\n' };
const slow = {
  "main.tf":
    'resource "terraform_data" "slow" {\n  provisioner "local-exec" {\n    command = "echo provisioning-started; sleep 60"\n  }\n}\n',
};

/** The run_attempts columns read here (sandbox_name is set once the sandbox is). */
interface AttemptRow {
  id: string;
  status: string;
  sandbox_name: string;
}

/** The running attempt of `phase` once its sandbox id is recorded and its processes exist. */
async function runningSandbox(
  server: TestServer,
  runId: string,
  phase: "plan" | "apply",
): Promise<{ id: string; sandboxName: string }> {
  return poll(`the ${phase} sandbox of ${runId}`, async () => {
    const attempt = await server.db
      .knex("run_attempts")
      .where({ run_id: runId, phase, status: "running" })
      .whereNotNull("sandbox_name")
      .first<AttemptRow | undefined>();
    return attempt && sandboxProcesses(attempt.sandbox_name).length > 0
      ? { id: attempt.id, sandboxName: attempt.sandbox_name }
      : undefined;
  });
}

/** Waits until the attempt is no longer running; returns its status and the ms since `since`. */
async function attemptEnded(
  server: TestServer,
  attemptId: string,
  since: number,
): Promise<{ status: string; ms: number }> {
  return poll("the attempt to end", async () => {
    const attempt = await server.db.knex("run_attempts").where({ id: attemptId }).first<AttemptRow>();
    return attempt.status === "running" ? undefined : { status: attempt.status, ms: Date.now() - since };
  });
}

testEachServer(
  cancel,
  "a v1 cancel while planning and a tfe cancel while applying interrupt the runner process; its counters and the API's move, with no names in them",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const canaryName = "canary-workspace-7f3a";
    const workspace = await createWorkspace(server, token, organizationName, { name: canaryName });
    const runner = spawnStackShip("runner-main.ts", runnerEnv(server, { STACKSHIP_RUNNER_METRICS_PORT: "0" }));
    try {
      const metricsUrl = (await runner.line(/metrics: (http:\/\/\S+\/metrics)/))[1];
      await runner.line(/runner \S+ started: concurrency 1,/);
      const before = await scrape(metricsUrl);

      // v1 cancel while planning: the run ends canceled at once; the runner's sandbox goes.
      const planRun = await startRun(server, token, workspace.id, many);
      await waitForStatus(server, token, planRun.id, ["planning"]);
      const plan = await runningSandbox(server, planRun.id, "plan");
      const planAsked = Date.now();
      const canceled = expectStatus(
        await cancelRun({ client: server.v1(token), path: { run_id: planRun.id } }),
        202,
      ).data;
      assert.is(canceled.attributes.status, "canceled");
      const planEnd = await attemptEnded(server, plan.id, planAsked);
      assert.is(planEnd.status, "interrupted");
      const planGone = await poll(
        "the plan sandbox's processes to exit",
        () => (sandboxProcesses(plan.sandboxName).length === 0 ? Date.now() - planAsked : undefined),
        30_000,
      );
      assert.equal(sandboxProcesses(plan.sandboxName), []);
      assert.is(
        (await waitForStatus(server, token, planRun.id, ["canceled"])).attributes.status_reason,
        "plan_canceled",
      );

      // tfe cancel (the CLI's Ctrl-C) while applying: an interrupt request; the run ends as what happened.
      const applyRun = await startRun(server, token, workspace.id, slow);
      const planned = await waitForStatus(server, token, applyRun.id, ["awaiting_approval"]);
      await approvePlan(server, token, applyRun.id, planned.attributes.plan_digest!);
      await waitForLog(server, token, applyRun.id, "apply", "provisioning-started");
      const apply = await runningSandbox(server, applyRun.id, "apply");
      const applyAsked = Date.now();
      const asked = await tfeCancelRun({ client: server.tfe(token), path: { run_id: applyRun.id } });
      assert.is(asked.response.status, 202);
      const applyEnd = await attemptEnded(server, apply.id, applyAsked);
      assert.is(applyEnd.status, "interrupted");
      const applyGone = await poll(
        "the apply sandbox's processes to exit",
        () => (sandboxProcesses(apply.sandboxName).length === 0 ? Date.now() - applyAsked : undefined),
        30_000,
      );
      const ended = await waitForStatus(server, token, applyRun.id, ["needs_recovery", "errored", "applied"], 60_000);
      assert.is.not(ended.attributes.status, "applied");
      assert.match(await readLog(server, token, applyRun.id, "apply"), /Interrupt received|interrupt/i);
      process.stdout.write(
        `  [${server.dialect}] cancel latency (cancel response → attempt ended | sandbox processes gone): plan ${planEnd.ms} | ${planGone} ms, apply ${applyEnd.ms} | ${applyGone} ms\n`,
      );

      // The runner process's own counters moved: three phases timed (two plans, one apply), sandboxes booted.
      // A phase's duration is observed when the runner's phase returns, which can be after the
      // run's status already moved: read the counters until the apply's is there.
      const count = (s: typeof before, series: string) => s.value(series);
      const applyInterrupted = 'stackship_phase_duration_seconds_count{phase="apply",outcome="interrupted"}';
      const after = await poll(
        "the runner to time the interrupted apply",
        async () => {
          const scraped = await scrape(metricsUrl);
          return count(scraped, applyInterrupted) > count(before, applyInterrupted) ? scraped : undefined;
        },
        30_000,
        100,
      );
      assert.is(
        count(after, 'stackship_phase_duration_seconds_count{phase="plan",outcome="interrupted"}') -
          count(before, 'stackship_phase_duration_seconds_count{phase="plan",outcome="interrupted"}'),
        1,
      );
      assert.is(count(after, applyInterrupted) - count(before, applyInterrupted), 1);
      assert.ok(
        count(after, 'stackship_phase_duration_seconds_count{phase="plan",outcome="succeeded"}') >= 1,
        after.text,
      );
      assert.ok(count(after, 'stackship_sandbox_boots_total{outcome="ok"}') >= 3, after.text);
      assert.ok(count(after, 'stackship_artifact_bytes_total{direction="written"}') > 0, "the runner stored the plan");
      assert.ok(
        count(after, 'stackship_artifact_bytes_total{direction="read"}') > 0,
        "the runner read the configuration",
      );
      assert.not.match(after.text, /stackship_runs\{/, "a runner-only process does not read the database gauges");

      // The API's page: runs by status from the database, the queue, HTTP latency by operation id.
      const api = await scrape(`${server.baseUrl}/metrics`);
      assert.is(api.value('stackship_runs{status="canceled"}'), 1);
      assert.is(api.value('stackship_runs{status="applied"}'), 0);
      assert.ok(api.text.includes("stackship_run_queue_depth 0"), api.text);
      assert.ok(api.text.includes("stackship_run_queue_oldest_age_seconds 0"), api.text);
      assert.ok(
        api.value('stackship_http_request_duration_seconds_count{operation_id="createRun",status="201"}') >= 2,
        api.text,
      );
      assert.ok(
        api.value('stackship_http_request_duration_seconds_count{operation_id="cancelRun",status="202"}') >= 1,
        api.text,
      );
      for (const secret of [canaryName, workspace.id, planRun.id, applyRun.id, organizationName, token]) {
        assert.not.ok(api.text.includes(secret) || after.text.includes(secret), `the metrics name ${secret}`);
      }
    } finally {
      await runner.kill();
    }
  },
);

cancel.run();
