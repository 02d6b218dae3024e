import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { approveRun, getRunPlanChanges } from "../../../client/src/index.ts";
import { writeRunArtifact } from "../../src/commands/run-artifacts.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { buildPlanDiff } from "../../src/domain/plan-diff/plan-diff.mjs";
import { RunnerEngine } from "../../src/runner/engine.ts";
import { readPlanJson } from "../../src/runner/plan-json.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { fixture, readLog, startRun, waitForPlanned, waitForStatus, waitToSettle } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

// Issue 25 part 4: the plan JSON, the plan changes, the policy input and the counts come from the
// exact saved plan the approval applies, derived by the launcher once nothing of the
// configuration runs any more, and sent over its own channel; the approval binds the digests of
// all three, and an apply of a plan whose recorded digests disagree refuses.

const evidence = suite("plan evidence nothing inside the run can forge");

/** The real plan: the random fixture plus the resource the attacker hides from reviewers. */
const REAL = {
  ...fixture("random"),
  "hidden.tf": 'resource "terraform_data" "hidden" {\n  input = "what really happens"\n}\n',
};
const REAL_ADDRESSES = ["random_password.db", "terraform_data.app", "terraform_data.hidden"];

/** What the watcher writes: a harmless plan of one no-op change, and its plan changes for the run (RUN_ID replaced). */
const FORGED_PLAN = {
  format_version: "1.2",
  terraform_version: "1.10.7",
  errored: false,
  resource_changes: [
    {
      address: "terraform_data.harmless",
      mode: "managed",
      type: "terraform_data",
      name: "harmless",
      provider_name: "terraform.io/builtin/terraform",
      change: {
        actions: ["create"],
        before: null,
        after: { input: "nothing to see" },
        after_unknown: { id: true },
        before_sensitive: false,
        after_sensitive: {},
      },
    },
  ],
};

/**
 * A copy of .tools (hard links) whose `tofu` is the red team's forging watcher: `tofu plan` runs the
 * real plan, then leaves a process in a session of its own (setsid: not in the script's process
 * group) that rewrites /work/plan.json and /work/plan-diff.json in a loop, as plan-time code of a
 * provider or an `external` program could; it waits until the watcher wrote once. Everything else
 * is the real tofu.
 */
function forgingTools(): string {
  const dir = mkdtempSync(join(tmpdir(), "ss-forging-tools-"));
  // Mounted read-only into the sandbox, whose own uid must reach it.
  chmodSync(dir, 0o755);
  const tools = join(REPO_ROOT, ".tools");
  for (const sub of ["bin", "providers"]) execFileSync("cp", ["-al", join(tools, sub), join(dir, sub)]);
  rmSync(join(dir, "bin/tofu"));
  execFileSync("ln", [join(tools, "bin/tofu"), join(dir, "bin/tofu-real")]);
  mkdirSync(join(dir, "forged"), { mode: 0o755 });
  writeFileSync(join(dir, "forged/plan.json"), JSON.stringify(FORGED_PLAN));
  writeFileSync(join(dir, "forged/plan-diff.json"), buildPlanDiff(FORGED_PLAN, { runId: "RUN_ID" }).json);
  const forged = "/opt/stackship/tools/forged";
  writeFileSync(
    join(dir, "bin/tofu"),
    `#!/bin/sh
real=/opt/stackship/tools/bin/tofu-real
if [ "$1" = "plan" ]; then
  "$real" "$@" || exit $?
  sed "s/RUN_ID/$TFE_RUN_ID/" ${forged}/plan-diff.json > /work/.forged-diff
  setsid sh -c 'while :; do cp ${forged}/plan.json /work/plan.json; cp /work/.forged-diff /work/plan-diff.json; : > /work/.forging; done' </dev/null >/dev/null 2>&1 &
  while [ ! -f /work/.forging ]; do :; done
  exit 0
fi
exec "$real" "$@"
`,
    { mode: 0o755 },
  );
  return dir;
}

/** The in-process runner of `server`, but with `toolsDir`. */
async function runnerWithTools(server: TestServer, toolsDir: string): Promise<RunnerEngine> {
  const port = Number(new URL(server.baseUrl).port);
  const engine = new RunnerEngine(
    { services: server.services, api: { host: "127.0.0.1", port }, phaseTimeoutMs: 120_000, toolsDir },
    { pollIntervalMs: 50, heartbeatIntervalMs: 500 },
  );
  await engine.start();
  return engine;
}

async function approve(server: TestServer, token: string, runId: string, planDigest: string) {
  return approveRun({
    client: server.v1(token),
    path: { run_id: runId },
    body: { data: { type: "approvals", attributes: { plan_digest: planDigest } } },
  });
}

testEachServer(
  evidence,
  "a forging watcher left running by plan-time code (setsid, rewriting plan.json and plan-diff.json in a loop): the stored plan JSON, plan changes and counts are the real plan's, and that plan applies",
  async (server) => {
    const tools = forgingTools();
    const engine = await runnerWithTools(server, tools);
    try {
      const { token, organizationName } = await createOrganizationWithToken(server, "acme");
      const workspace = await createWorkspace(server, token, organizationName, { name: "forged" });
      const run = await startRun(server, token, workspace.id, REAL);
      const planned = await waitForStatus(server, token, run.id, ["awaiting_approval", "errored"]);
      const planLog = await readLog(server, token, run.id, "plan");
      assert.is(planned.attributes.status, "awaiting_approval", planLog);

      const changes = await getRunPlanChanges({ client: server.v1(token), path: { run_id: run.id } });
      assert.is(changes.response.status, 200, JSON.stringify(changes.error));
      const listed = (changes.data as { resources: { address: string }[] }).resources.map((r) => r.address).sort();
      assert.equal(listed, REAL_ADDRESSES, "the Changes tab lists every resource of the real plan");

      const stored = await server.services.stores.runs.getById(run.id);
      const planJson = JSON.parse((await readPlanJson(server.services, stored!)).toString("utf8")) as {
        resource_changes: Array<{ address: string }>;
      };
      assert.equal(
        planJson.resource_changes.map((c) => c.address).sort(),
        REAL_ADDRESSES,
        "the stored plan JSON is the show of the saved plan",
      );
      assert.equal(stored!.execution.planCounts, { create: 3, change: 0, destroy: 0 });
      // The three digests recorded with the plan are those of the stored artifacts.
      const x = stored!.execution;
      assert.is((await server.services.stores.artifacts.forRun(run.id, "plan"))!.ref.sha256, x.planDigest);
      assert.is((await server.services.stores.artifacts.forRun(run.id, "plan_json"))!.ref.sha256, x.planJsonDigest);
      assert.is((await server.services.stores.artifacts.forRun(run.id, "plan_diff"))!.ref.sha256, x.planDiffDigest);

      expectStatus(await approve(server, token, run.id, planned.attributes.plan_digest!), 202);
      const review = await server.services.stores.reviews.getByRun(run.id);
      assert.equal(
        [review!.planDigest, review!.planJsonDigest, review!.planDiffDigest],
        [x.planDigest, x.planJsonDigest, x.planDiffDigest],
        "the approval binds all three",
      );
      await waitToSettle(server, token, run.id, "applied");
    } finally {
      await engine.stop({ interrupt: true });
      rmSync(tools, { recursive: true, force: true });
    }
  },
);

testEachServer(
  evidence,
  "recorded digests that disagree with the stored artifacts: the approval refuses (409 RUN_PLAN_DIGEST_MISMATCH), and an approved plan whose plan changes were replaced afterwards applies nothing",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "bound" });

    // The plan JSON replaced after the plan: no approval.
    const first = await startRun(server, token, workspace.id, REAL);
    const planned = await waitForPlanned(server, token, first.id);
    const run = (await server.services.stores.runs.getById(first.id))!;
    await writeRunArtifact(server.services, run, "plan_json", Buffer.from(JSON.stringify(FORGED_PLAN)));
    expectV1Error(
      await approve(server, token, first.id, planned.attributes.plan_digest!),
      409,
      "RUN_PLAN_DIGEST_MISMATCH",
    );
    assert.is(await server.services.stores.reviews.getByRun(first.id), undefined, "no decision recorded");

    // Approved, then the plan changes replaced before the apply ran: the apply refuses.
    const other = await createWorkspace(server, token, organizationName, { name: "bound-2" });
    const second = await startRun(server, token, other.id, REAL);
    const planned2 = await waitForPlanned(server, token, second.id);
    await server.runner!.stop();
    expectStatus(await approve(server, token, second.id, planned2.attributes.plan_digest!), 202);
    const run2 = (await server.services.stores.runs.getById(second.id))!;
    await writeRunArtifact(
      server.services,
      run2,
      "plan_diff",
      Buffer.from(buildPlanDiff(FORGED_PLAN, { runId: second.id }).json),
    );
    await server.runner!.start();
    await waitToSettle(server, token, second.id, "errored", { reason: "apply_failed" });
    assert.match(await readLog(server, token, second.id, "apply"), "no longer matches");
    assert.is(await server.services.stores.stateVersions.current(other.id), undefined, "nothing was applied");
  },
  { runner: true },
);

evidence.run();
