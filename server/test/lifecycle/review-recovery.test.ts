import { suite } from "uvu";
import * as assert from "uvu/assert";

import { createOrganizationWithToken, createToken, createWorkspace } from "../support/factories.ts";
import { assertNoLeaks, review } from "../support/review.ts";
import { applyUntil, startRun, startRunnerProcess, waitToSettle } from "../support/runs.ts";
import { killRunner, startSurvivorRunner } from "../support/scenarios.ts";
import { testEachServer } from "../support/test-server.ts";

const recovery = suite("run review of an interrupted apply");

const slow = {
  "main.tf":
    'resource "terraform_data" "slow" {\n  provisioner "local-exec" {\n    command = "echo provisioning-started; sleep 60"\n  }\n}\n',
};

testEachServer(
  recovery,
  "apply interrupted (runner killed): unresolved recovery evidence, the reason, recover only for run:recover",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "fragile" });
    const run = await startRun(server, token, workspace.id, slow);
    const runner = startRunnerProcess(server);
    try {
      await applyUntil(server, token, run.id);
      // While applying: the review shows the running apply and offers cancel (an interrupt request).
      const applying = await review(server.v1(token), run.id);
      assert.equal(
        [applying.attributes.stages.apply.status, applying.attributes.stages.apply.phase_status],
        ["running", "running"],
      );
      assert.equal(applying.attributes.available_actions, ["cancel"]);
      await killRunner(runner);
    } finally {
      if (runner.exitCode === null && runner.signalCode === null) runner.kill("SIGKILL");
    }

    const survivor = await startSurvivorRunner(server);
    try {
      await waitToSettle(server, token, run.id, "needs_recovery", { timeoutMs: 30_000 });

      const data = await review(server.v1(token), run.id);
      assert.is(data.attributes.header.status, "needs_recovery");
      const evidence = data.attributes.recovery;
      assert.ok(evidence, "unresolved recovery evidence is present");
      assert.is(evidence.attempt?.status, "lost");
      assert.is(evidence.attempt?.terminal_classification, "runner_lost");
      assert.ok(
        evidence.last_log_lines.some((line) => line.includes("provisioning-started")),
        JSON.stringify(evidence.last_log_lines),
      );
      assert.is(evidence.lock?.holder_id, run.id, "the workspace stays locked by the run");
      const reason = data.attributes.terminal_reason;
      assert.ok(reason?.state === "recorded");
      assert.is(reason.code, "apply_interrupted");
      assert.is(
        reason.sentence,
        "The apply was interrupted; an operator must decide whether the infrastructure changed.",
      );
      assert.is(reason.log_tail, null, "not a terminal failure: the recovery evidence carries the log lines");
      const apply = data.attributes.stages.apply;
      assert.equal([apply.status, apply.phase_status], ["failed", "interrupted"]);
      assert.equal(apply.state_version, { state: "not_recorded" }, "nothing committed, and nothing guessed");
      assert.equal(data.attributes.stages.approval.state, "approved");
      const attempts = data.attributes.evidence.attempts.map((a) => [a.phase, a.status, a.terminal_classification]);
      assert.equal(attempts, [
        ["plan", "succeeded", "exit_zero"],
        ["apply", "lost", "runner_lost"],
      ]);
      assert.match(data.attributes.evidence.attempts[1].sandbox_id ?? "", /^sbx-/);
      assert.equal(data.attributes.available_actions, ["recover"]);
      const operator = await createToken(server, token, organizationName, "operator");
      assert.equal(
        (await review(server.v1(operator.token), run.id)).attributes.available_actions,
        [],
        "run:recover is an admin's",
      );
      await assertNoLeaks(server, data, run.id);
    } finally {
      await survivor.stop({ interrupt: true });
    }
  },
);

recovery.run();
