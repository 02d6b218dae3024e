// Faults that lose nothing (issue 31, part 5): PostgreSQL restarted during a plan and during an
// apply. The test starts a throwaway cluster of its own (initdb in a temporary directory, its own
// port, as the postgres user) so the restarts disturb no other test; it needs root and Debian's
// PostgreSQL server binaries, and is counted as skipped without them. Expected: each run ends in a
// recorded state (with its reason) or carries on, no state version is lost or half-written, and
// the same server process plans and applies again once the database is back. About 20 s.
// Seen while writing it (2 of 9 runs, timing-dependent, and once in a clean-clone CI run): when
// failJobs could not reach the database during the restart, graphile-worker's runner.promise
// rejected unobserved, so the worker pool stopped (new runs stayed pending) or the process exited.
// runner/graphile.ts now batches job completion (so a failure to record one is handled, not a
// floating rejection) and supervises the runner, starting it again with backoff: the process
// survives. Then a plan in flight during the restart could stay `planning` (2 of 3 runs): its
// phase failed, and so did recording that (runner/engine.ts `handleLost`, the database still
// away), while the process went on heartbeating the job row so no sweep took it for lost. The
// runner now keeps such an ending and records it at its next sweeps (engine.ts `settle`).
import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { discardRun, getRun, type Run } from "../../../client/src/index.ts";
import { TEST_PG_URL_ENV } from "../support/databases.ts";
import { createOrganizationWithToken, createWorkspace, sha256 } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { approvePlan, fixture, readLog, startRun, waitForLog } from "../support/runs.ts";
import { withTestServer, type TestServer } from "../support/test-server.ts";
import { freePort } from "../support/ports.ts";
import { skipTest } from "../support/skips.ts";
import { currentState } from "../support/state.ts";

const run = promisify(execFile);
const test = suite("PostgreSQL restarted under a plan and an apply");

/** The newest installed PostgreSQL server's bin directory, or null. */
function postgresBin(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((version) => existsSync(join(root, version, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], "bin") : null;
}

/** A throwaway cluster for `fn`: its admin URL and an asynchronous restart (the server keeps running meanwhile). */
async function withOwnCluster<T>(
  bin: string,
  fn: (adminUrl: string, restart: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), "ss-pg-cluster-"));
  chownSync(
    directory,
    Number((await run("id", ["-u", "postgres"])).stdout.trim()),
    Number((await run("id", ["-g", "postgres"])).stdout.trim()),
  );
  const data = join(directory, "data");
  const port = await freePort();
  const asPostgres = (command: string, args: string[]) =>
    run("runuser", ["-u", "postgres", "--", join(bin, command), ...args], { cwd: directory });
  const options = ["-o", `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off`];
  await asPostgres("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"]);
  await asPostgres("pg_ctl", ["-D", data, "-l", join(directory, "log"), ...options, "-w", "start"]);
  // A test process that dies mid-test (the header's defect) still stops its cluster.
  const stopOnExit = () =>
    execFileSync(
      "runuser",
      ["-u", "postgres", "--", join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"],
      { stdio: "ignore" },
    );
  process.once("exit", stopOnExit);
  try {
    return await fn(`postgres://postgres@127.0.0.1:${port}/postgres`, async () => {
      await asPostgres("pg_ctl", ["-D", data, "-l", join(directory, "log"), ...options, "-m", "fast", "-w", "restart"]);
    });
  } finally {
    process.off("exit", stopOnExit);
    await asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
    await rm(directory, { recursive: true, force: true });
  }
}

/** Polls until the run's status is one of `statuses` (the API itself may fail while the database is away); fails after 90 s. */
async function waitFor(server: TestServer, token: string, runId: string, statuses: string[]): Promise<Run> {
  const deadline = Date.now() + 90_000;
  let last = "no answer";
  while (Date.now() < deadline) {
    const response = await getRun({ client: server.v1(token), path: { run_id: runId } }).catch(() => null);
    if (response?.response.status === 200) {
      last = response.data!.data.attributes.status;
      if (statuses.includes(last)) return response.data!.data;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return assert.unreachable(`run ${runId} stayed ${last}, wanted ${statuses.join("|")}`) as never;
}

const slowApply = {
  "main.tf":
    'resource "terraform_data" "slow" {\n  input = "two"\n  provisioner "local-exec" {\n    command = "echo provisioning-started; sleep 4; echo provisioning-done"\n  }\n}\n',
};

const bin = postgresBin();
const title =
  "a restart during a plan and during an apply: recorded or carried on, no state lost, the same server carries on";
if (process.getuid?.() !== 0 || bin === null) {
  skipTest(test, title, "needs root and the PostgreSQL server binaries (/usr/lib/postgresql/<version>/bin/initdb)");
} else {
  test(title, () =>
    withOwnCluster(bin, async (adminUrl, restart) => {
      const previous = process.env[TEST_PG_URL_ENV];
      // withTestServer makes its scratch database on the cluster this names.
      process.env[TEST_PG_URL_ENV] = adminUrl;
      try {
        await withTestServer(
          "postgres",
          async (server) => {
            const { token, organizationName } = await createOrganizationWithToken(server, "restarts");
            const workspace = await createWorkspace(server, token, organizationName, { name: "restarted" });

            // During a plan: it finishes, or ends errored with its reason.
            const planned = await startRun(server, token, workspace.id, fixture("basic"));
            await waitFor(server, token, planned.id, ["planning"]);
            await restart();
            const afterPlan = await waitFor(server, token, planned.id, [
              "awaiting_approval",
              "errored",
              "planned_and_finished",
              "needs_recovery",
            ]);
            assert.ok(
              ["awaiting_approval", "errored"].includes(afterPlan.attributes.status),
              afterPlan.attributes.status,
            );
            if (afterPlan.attributes.status === "errored") {
              assert.ok(afterPlan.attributes.status_reason, "the run says why it ended");
              assert.ok(
                (await readLog(server, token, planned.id, "plan")).trim().length > 0,
                "the plan's log says what happened",
              );
            }
            if (afterPlan.attributes.status === "awaiting_approval") {
              expectStatus(
                await discardRun({
                  client: server.v1(token),
                  path: { run_id: planned.id },
                  body: { data: { type: "decisions", attributes: { reason: "only the restart was under test" } } },
                }),
                202,
              );
            }

            // During an apply: it is applied with its state whole, or needs recovery with the reason; no state half-written.
            const applying = await startRun(server, token, workspace.id, slowApply);
            const ready = await waitFor(server, token, applying.id, ["awaiting_approval", "errored"]);
            assert.is(ready.attributes.status, "awaiting_approval", await readLog(server, token, applying.id, "plan"));
            await approvePlan(server, token, applying.id, ready.attributes.plan_digest!);
            await waitForLog(server, token, applying.id, "apply", "provisioning-started");
            await restart();
            const afterApply = await waitFor(server, token, applying.id, ["applied", "errored", "needs_recovery"]);
            const states = await server.db
              .knex("state_versions")
              .where({ workspace_id: workspace.id })
              .select<Array<{ id: string; status: string; sha256: string | null }>>("id", "status", "sha256");
            if (afterApply.attributes.status === "applied") {
              const current = await currentState(server, token, workspace.id);
              assert.is(
                sha256(current.bytes),
                states.find((state) => state.id === current.id)?.sha256,
                "the published state is whole",
              );
            } else {
              assert.is(afterApply.attributes.status, "needs_recovery", afterApply.attributes.status_reason ?? "");
              assert.is(afterApply.attributes.status_reason, "apply_interrupted");
            }
            for (const state of states)
              assert.ok(
                state.status !== "finalized" || state.sha256 !== null,
                `state version ${state.id} is finalized without its digest`,
              );

            // The same process takes new work once the database is back (no restart).
            const next = await startRun(
              server,
              token,
              (await createWorkspace(server, token, organizationName, { name: "after" })).id,
              fixture("basic"),
            );
            const later = await waitFor(server, token, next.id, [
              "awaiting_approval",
              "errored",
              "planned_and_finished",
            ]);
            assert.is(later.attributes.status, "awaiting_approval", await readLog(server, token, next.id, "plan"));
          },
          { runner: true },
        );
      } finally {
        if (previous === undefined) delete process.env[TEST_PG_URL_ENV];
        else process.env[TEST_PG_URL_ENV] = previous;
      }
    }),
  );
}

test.run();
