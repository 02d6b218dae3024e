import { suite } from "uvu";
import * as assert from "uvu/assert";

import { TERMINAL_REASON_SENTENCES } from "../../src/domain/review.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { review } from "../support/review.ts";
import { approvePlan, readLog, startRun, waitForStatus, waitToSettle } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

/**
 * Real tofu in the real sandbox, with small limits: a run that exceeds one ends with that limit's
 * own reason (on the run, the attempt and in the review, with its sentence) while other runs of
 * the same runner are unaffected.
 */

const MIB = 1024 * 1024;
const limits = suite("sandbox limits of real runs");

/**
 * `count` strings of `mib` MiB each as an output: tofu holds them in memory and writes them to the
 * plan JSON (sensitive, so that the plan log does not print them).
 */
const bigOutput = (count: number, mib = 1) => ({
  "main.tf": `resource "terraform_data" "x" {\n  input = "x"\n}\noutput "big" {\n  sensitive = true\n  value = [for i in range(${count}) : format("%0${mib * 1048576}d", i)]\n}\n`,
});
const small = { "main.tf": 'resource "terraform_data" "ok" {\n  input = "fine"\n}\n' };

async function expectLimit(
  server: TestServer,
  token: string,
  runId: string,
  code: keyof typeof TERMINAL_REASON_SENTENCES,
  phase: "plan" | "apply",
) {
  const r = await review(server.v1(token), runId);
  const reason = r.attributes.terminal_reason;
  assert.ok(reason?.state === "recorded", JSON.stringify(reason));
  assert.is(reason.code, code);
  assert.is(reason.sentence, TERMINAL_REASON_SENTENCES[code]);
  const attempt = r.attributes.evidence.attempts.filter((a) => a.phase === phase).at(-1);
  assert.is(attempt?.terminal_classification, code);
  const log = await readLog(server, token, runId, phase);
  assert.match(log, /STACKSHIP_SANDBOX_/, "the log says which limit");
}

testEachServer(
  limits,
  "a plan that writes more than the disk limit ends errored with sandbox_disk_limit; the next run plans normally",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "filler" });
    // 40 MiB of plan JSON into a 24 MiB work directory.
    const run = await startRun(server, token, workspace.id, bigOutput(40));
    await waitToSettle(server, token, run.id, "errored", { reason: "sandbox_disk_limit" });
    await expectLimit(server, token, run.id, "sandbox_disk_limit", "plan");
    // The same runner, the same limits: a run that fits is unaffected.
    const next = await startRun(server, token, workspace.id, small);
    await waitToSettle(server, token, next.id, "awaiting_approval");
  },
  { runner: true, config: { sandboxLimits: { diskBytes: 24 * MIB } } },
);

testEachServer(
  limits,
  "a plan that holds more memory than the limit ends errored with sandbox_memory_limit",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "hog" });
    // 2 GiB of strings against a 384 MiB limit.
    const run = await startRun(server, token, workspace.id, bigOutput(1024, 2));
    await waitToSettle(server, token, run.id, "errored", { reason: "sandbox_memory_limit" });
    await expectLimit(server, token, run.id, "sandbox_memory_limit", "plan");
  },
  { runner: true, config: { sandboxLimits: { memoryBytes: 384 * MIB } } },
);

testEachServer(
  limits,
  "a fork bomb in an apply's local-exec is ended on the process limit; the apply waits for recovery with sandbox_process_limit",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "bomb" });
    const bomb = {
      "main.tf": [
        'resource "terraform_data" "bomb" {',
        '  provisioner "local-exec" {',
        '    interpreter = ["/bin/bash", "-c"]',
        '    command     = "bomb() { bomb | bomb & }; bomb; sleep 120"',
        "  }",
        "}",
        "",
      ].join("\n"),
    };
    const run = await startRun(server, token, workspace.id, bomb);
    const planned = await waitForStatus(server, token, run.id, ["awaiting_approval", "errored"]);
    assert.is(planned.attributes.status, "awaiting_approval", "the plan itself fits in the limit");
    await approvePlan(server, token, run.id, planned.attributes.plan_digest!);
    const ended = await waitForStatus(server, token, run.id, ["applied", "errored", "needs_recovery"]);
    // Killed mid-apply: what the provider did is not known, so an operator decides (never a guess).
    assert.is(ended.attributes.status, "needs_recovery");
    assert.is(ended.attributes.status_reason, "sandbox_process_limit");
    await expectLimit(server, token, run.id, "sandbox_process_limit", "apply");
  },
  { runner: true, config: { sandboxLimits: { processes: 128 } } },
);

limits.run();
