import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getRunPlanChanges, resolveRunRecovery } from "../../../client/src/index.ts";
import { getCurrentStateVersion } from "../../../generated/tfe/client/sdk.gen.ts";
import { phaseId } from "../../src/api/tfe/presenters.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { review } from "../support/review.ts";
import {
  approvePlan,
  fixture,
  readLog,
  startRun,
  waitForLog,
  waitForPlanned,
  waitForStatus,
  waitToSettle,
} from "../support/runs.ts";
import { masterKeyOf, runnerEnv, spawnStackShip, type Spawned } from "../support/spawned.ts";
import { withTestServer, type TestServer } from "../support/test-server.ts";
import { skipTest } from "../support/skips.ts";

/**
 * Whether the runner processes get data directories of their own (another host: nothing shared
 * but the PostgreSQL database, the master key and the API URL) or the API's. Separate directories
 * need artifacts that live in a store every process shares (the PostgreSQL artifact backend);
 * until that is on this branch they share the API's directory. STACKSHIP_TEST_SEPARATE_DATA_DIRS
 * (1 or 0) overrides it for one run.
 */
const SEPARATE_DATA_DIRS_BY_DEFAULT = true;
const SEPARATE_DATA_DIRS = process.env.STACKSHIP_TEST_SEPARATE_DATA_DIRS
  ? process.env.STACKSHIP_TEST_SEPARATE_DATA_DIRS === "1"
  : SEPARATE_DATA_DIRS_BY_DEFAULT;

const hosts = suite("an API and runner-only processes as on separate hosts (PostgreSQL)");

const slow = {
  "main.tf":
    'resource "terraform_data" "slow" {\n  input = "two"\n  provisioner "local-exec" {\n    command = "echo provisioning-started; sleep 60"\n  }\n}\n',
};

/** A runner-only process against `server`, in its own data directory when SEPARATE_DATA_DIRS. */
async function startRunner(server: TestServer, dirs: string[]): Promise<Spawned> {
  let dataDir = server.dataDir;
  if (SEPARATE_DATA_DIRS) {
    dataDir = await mkdtemp(join(tmpdir(), "ss-runner-host-"));
    dirs.push(dataDir);
  }
  const runner = spawnStackShip(
    "runner-main.ts",
    runnerEnv(server, {
      STACKSHIP_DATA_DIR: dataDir,
      STACKSHIP_ENCRYPTION_KEY: masterKeyOf(server),
      STACKSHIP_RUNNER_STALE_AFTER_MS: "1500",
    }),
  );
  await runner.line(/runner \S+ started/);
  return runner;
}

/** The parts of a state file and of a plan's JSON output these tests read. */
interface StateFile {
  serial: number;
  resources: Array<{ type: string }>;
}
interface PlanJson {
  resource_changes: Array<{ type: string }>;
}

async function readJson<T>(server: TestServer, token: string, path: string): Promise<T> {
  const response = await fetch(`${server.baseUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  assert.is(response.status, 200, `GET ${path}: ${response.status} ${await response.clone().text()}`);
  return (await response.json()) as T;
}

const HOSTS_TITLE = "plan → approve → apply → state → review → json-output across separate API and runner processes";
if (!process.env.STACKSHIP_TEST_PG_URL) {
  skipTest(
    hosts,
    HOSTS_TITLE,
    "STACKSHIP_TEST_PG_URL is not set: the API and runner processes share one PostgreSQL database (export STACKSHIP_TEST_PG_URL=$(bash scripts/ensure-postgres))",
  );
} else {
  hosts(
    `plan → approve → apply → state → review → json-output, then a kill -9 of the runner mid-apply and recovery by another runner (${SEPARATE_DATA_DIRS ? "separate" : "shared"} data directories)`,
    () =>
      withTestServer("postgres", async (server) => {
        const dirs: string[] = [];
        const runners: Spawned[] = [];
        try {
          const { token, organizationName } = await createOrganizationWithToken(server, "acme");
          const workspace = await createWorkspace(server, token, organizationName, { name: "far-away" });
          runners.push(await startRunner(server, dirs));

          // The whole cycle: the API reads everything the runner wrote, and the runner everything the API stored.
          const run = await startRun(server, token, workspace.id, fixture("basic"));
          const planned = await waitForPlanned(server, token, run.id);
          await approvePlan(server, token, run.id, planned.attributes.plan_digest!);
          await waitToSettle(server, token, run.id, "applied");
          const current = await getCurrentStateVersion({
            client: server.tfe(token),
            path: { workspace_id: workspace.id },
          });
          const stateVersion = current.data!.data;
          assert.is(stateVersion.attributes.serial, 1);
          const state = await readJson<StateFile>(server, token, stateVersion.attributes["hosted-state-download-url"]);
          assert.is(state.serial, 1);
          assert.ok(
            state.resources.some((resource) => resource.type === "terraform_data"),
            JSON.stringify(state.resources),
          );
          const reviewed = await review(server.v1(token), run.id);
          assert.is(reviewed.id, run.id);
          const changes = expectStatus(
            await getRunPlanChanges({ client: server.v1(token), path: { run_id: run.id } }),
            200,
          );
          assert.ok(changes.resources.length >= 1, JSON.stringify(changes));
          const planJson = await readJson<PlanJson>(
            server,
            token,
            `/api/v2/plans/${phaseId(run.id, "plan")}/json-output`,
          );
          assert.ok(
            planJson.resource_changes.some((change) => change.type === "terraform_data"),
            JSON.stringify(planJson.resource_changes),
          );

          // kill -9 of the runner mid-apply: another runner process finds it lost and never guesses.
          const fragile = await startRun(server, token, workspace.id, slow);
          const fragilePlanned = await waitForStatus(server, token, fragile.id, ["awaiting_approval", "errored"]);
          assert.is(
            fragilePlanned.attributes.status,
            "awaiting_approval",
            await readLog(server, token, fragile.id, "plan"),
          );
          await approvePlan(server, token, fragile.id, fragilePlanned.attributes.plan_digest!);
          await waitForLog(server, token, fragile.id, "apply", "provisioning-started");
          await runners[0].kill("SIGKILL");
          runners.push(await startRunner(server, dirs));
          const stuck = await waitToSettle(server, token, fragile.id, "needs_recovery", {
            reason: "apply_interrupted",
            timeoutMs: 60_000,
          });
          assert.is(stuck.attributes.recovery?.attempt?.terminal_classification, "runner_lost");
          assert.ok(stuck.attributes.recovery?.last_log_lines.some((line) => line.includes("provisioning-started")));
          assert.equal(stuck.attributes.recovery?.lock?.holder_id, fragile.id, "the workspace stays locked by the run");
          const kept = await getCurrentStateVersion({
            client: server.tfe(token),
            path: { workspace_id: workspace.id },
          });
          assert.is(kept.data!.data.attributes.serial, 1, "the published state is untouched");
          const body = {
            data: {
              type: "recovery-resolutions" as const,
              attributes: {
                resolution: "keep_current_state" as const,
                reason: "the provisioner only slept; nothing changed",
              },
            },
          };
          const resolved = expectStatus(
            await resolveRunRecovery({ client: server.v1(token), path: { run_id: fragile.id }, body }),
            202,
          ).data;
          assert.is(resolved.attributes.status_reason, "recovered");

          // The surviving runner takes new work: the workspace is free and plans again.
          const next = await startRun(server, token, workspace.id, fixture("basic"));
          assert.is(
            (await waitForStatus(server, token, next.id, ["awaiting_approval", "planned_and_finished", "errored"]))
              .attributes.status,
            "planned_and_finished",
          );
        } finally {
          for (const runner of runners) await runner.kill();
          for (const dir of dirs) await rm(dir, { recursive: true, force: true });
        }
      }),
  );
}

hosts.run();
