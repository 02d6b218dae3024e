import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getRun, resolveRunRecovery } from "../../../client/src/index.ts";
import { getCurrentStateVersion } from "../../../generated/tfe/client/sdk.gen.ts";
import { createOrganizationWithToken, createToken, createWorkspace } from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { applyUntil, fixture, planApproveApply, startRun, startRunnerProcess, waitToSettle } from "../support/runs.ts";
import { killRunner, startSurvivorRunner } from "../support/scenarios.ts";
import { testEachServer } from "../support/test-server.ts";
import type { AuditEventRow, RunRow } from "../../src/store/rows.ts";

const recovery = suite("recovery after an interrupted apply");

const slow = {
  "main.tf":
    'resource "terraform_data" "slow" {\n  input = "two"\n  provisioner "local-exec" {\n    command = "echo provisioning-started; sleep 60"\n  }\n}\n',
};

testEachServer(
  recovery,
  "kill -9 of the runner process during apply: needs_recovery with evidence, lock held, state kept; the operator resolves it, audited",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "fragile" });
    const runner = startRunnerProcess(server);
    try {
      // A first apply publishes serial 1, so there is state that must not be lost.
      const first = await startRun(server, token, workspace.id, fixture("basic"));
      await planApproveApply(server, token, first.id);

      const run = await startRun(server, token, workspace.id, slow);
      await applyUntil(server, token, run.id);
      await killRunner(runner);
    } finally {
      if (runner.exitCode === null && runner.signalCode === null) runner.kill("SIGKILL");
    }

    // Another runner notices the silence and never guesses.
    const survivor = await startSurvivorRunner(server);
    try {
      const runs = await server.db
        .knex("runs")
        .where({ workspace_id: workspace.id })
        .orderBy("created_at", "desc")
        .first<RunRow>();
      const stuck = await waitToSettle(server, token, runs.id, "needs_recovery", {
        reason: "apply_interrupted",
        timeoutMs: 30_000,
      });
      assert.is(stuck.attributes.apply_status, "interrupted");
      const evidence = stuck.attributes.recovery!;
      assert.ok(evidence, "recovery evidence is present");
      assert.is(evidence.attempt?.status, "lost");
      assert.is(evidence.attempt?.terminal_classification, "runner_lost");
      assert.match(evidence.attempt?.sandbox_id ?? "", /^sbx-/);
      assert.ok(
        evidence.last_log_lines.some((line) => line.includes("provisioning-started")),
        JSON.stringify(evidence.last_log_lines),
      );
      assert.equal(evidence.lock?.holder_id, stuck.id, "the workspace stays locked by the run");
      assert.match(evidence.predecessor_state_digest ?? "", /^[0-9a-f]{64}$/);
      const state = await getCurrentStateVersion({ client: server.tfe(token), path: { workspace_id: workspace.id } });
      assert.is(state.data!.data.attributes.serial, 1, "the published state is untouched");

      // Only run:recover may resolve, with a typed reason.
      const operator = await createToken(server, token, organizationName, "operator");
      const body = {
        data: {
          type: "recovery-resolutions" as const,
          attributes: {
            resolution: "keep_current_state" as const,
            reason: "provisioner was only sleeping; nothing changed",
          },
        },
      };
      expectV1Error(
        await resolveRunRecovery({ client: server.v1(operator.token), path: { run_id: stuck.id }, body }),
        403,
        "FORBIDDEN",
      );
      expectV1Error(
        await resolveRunRecovery({
          client: server.v1(token),
          path: { run_id: stuck.id },
          body: {
            data: { type: "recovery-resolutions", attributes: { resolution: "keep_current_state", reason: "short" } },
          },
        }),
        422,
        "DOCUMENT_INVALID",
      );
      const resolved = expectStatus(
        await resolveRunRecovery({ client: server.v1(token), path: { run_id: stuck.id }, body }),
        202,
      ).data;
      assert.is(resolved.attributes.status, "errored");
      assert.is(resolved.attributes.status_reason, "recovered");
      assert.is(resolved.attributes.recovery?.lock, null, "the lock is released");
      const audit = await server.db
        .knex("audit_events")
        .where({ target_id: stuck.id, action: "run.recovery_resolved" })
        .first<AuditEventRow>();
      assert.is(audit.reason, body.data.attributes.reason);
      expectV1Error(
        await resolveRunRecovery({ client: server.v1(token), path: { run_id: stuck.id }, body }),
        409,
        "RUN_TRANSITION_INVALID",
      );
      const after = expectStatus(await getRun({ client: server.v1(token), path: { run_id: stuck.id } }), 200).data;
      assert.is(after.attributes.status, "errored");
    } finally {
      await survivor.stop({ interrupt: true });
    }
  },
);

recovery.run();
