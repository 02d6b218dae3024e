// Faults that lose nothing (issue 31, part 5): the filesystem of the artifact directory full
// during a plan's artifact writes and during an apply's state upload. A small tmpfs is mounted
// for the test (root only; counted as skipped otherwise) and filled to the last byte; the run
// ends in a recorded state whose reason says why, nothing half-written is left (no temporary
// file, no artifact row or state version without its complete object, the current state
// untouched), and once space is back the same server plans and applies again, without a restart.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getRun } from "../../../client/src/index.ts";
import { testDialects } from "../support/databases.ts";
import { expectStatus } from "../support/responses.ts";
import { expectAppliesAgain, expectPlanUnpublished, faultWorkspace } from "../support/fault-runs.ts";
import { approvePlan, startPlannedRun, waitForApplied, waitForLog } from "../support/runs.ts";
import { withTestServer, type TestServer } from "../support/test-server.ts";
import { skipTest } from "../support/skips.ts";
import { currentState, expectPublished } from "../support/state.ts";
import { fillFilesystem } from "../support/files.ts";

const test = suite("the artifact directory's filesystem full");

/** Whether this process may mount a tmpfs (root in a mount namespace that allows it). */
function canMount(): string | null {
  if (process.getuid?.() !== 0) return "not root";
  const probe = join(tmpdir(), `ss-mount-probe-${process.pid}`);
  try {
    execFileSync("mkdir", ["-p", probe]);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe], { stdio: "pipe" });
    execFileSync("umount", [probe]);
    return null;
  } catch (error) {
    return `mount -t tmpfs failed: ${(error as Error).message}`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** Mounts a tmpfs of `megabytes` for `fn`, unmounted in a finally. */
async function withTmpfs<T>(megabytes: number, fn: (directory: string) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), "ss-tmpfs-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${megabytes}m,mode=0700`, "tmpfs", directory]);
  // A process that dies mid-test still leaves no mount behind.
  const unmountOnExit = () => execFileSync("umount", ["--lazy", directory]);
  process.once("exit", unmountOnExit);
  try {
    return await fn(directory);
  } finally {
    process.off("exit", unmountOnExit);
    execFileSync("umount", ["--lazy", directory]);
    await rm(directory, { recursive: true, force: true });
  }
}

/** Every file under `root`. */
function filesUnder(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(root, entry.name)) : [join(root, entry.name)],
  );
}

/** A stored object as a row records it: its key and size. */
interface StoredSize {
  key: string;
  size: number | string;
}

/** Nothing half-written: no temporary file, and every artifact and state version row has its object, complete. */
async function assertNothingHalfWritten(server: TestServer, artifacts: string): Promise<void> {
  const files = filesUnder(artifacts).filter((file) => !file.endsWith("/filler"));
  assert.equal(
    files.filter((file) => file.endsWith(".tmp")),
    [],
    "no temporary file of an aborted write is left",
  );
  const knex = server.db.knex;
  const rows = [
    ...(await knex("artifacts").select<StoredSize[]>("artifact_key as key", "size_bytes as size")),
    ...(await knex("state_versions")
      .whereNotNull("artifact_key")
      .select<StoredSize[]>("artifact_key as key", "size_bytes as size")),
    ...(await knex("configuration_versions")
      .whereNotNull("artifact_key")
      .select<StoredSize[]>("artifact_key as key", "size_bytes as size")),
  ];
  for (const row of rows) {
    const path = join(artifacts, row.key);
    assert.ok(existsSync(path), `artifact ${row.key} is recorded but its object is missing`);
    assert.ok(statSync(path).size >= Number(row.size), `artifact ${row.key} is shorter than recorded`);
  }
}

const mountable = canMount();
for (const dialect of testDialects()) {
  const title = `a plan's artifact writes and an apply's state upload on a full filesystem: recorded, explained, nothing half-written, recovered without a restart [${dialect}]`;
  if (mountable !== null) {
    skipTest(test, title, mountable);
    continue;
  }
  test(title, () =>
    withTmpfs(16, (mount) => {
      const artifacts = join(mount, "artifacts");
      return withTestServer(
        dialect,
        async (server) => {
          const { token, workspaceId, configurationVersionId } = await faultWorkspace(server, "full-disk", "full");

          // 1. The plan's artifacts (saved plan, plan JSON) cannot be written: the plan ends errored, recorded.
          let filler = fillFilesystem(mount);
          await expectPlanUnpublished(server, token, workspaceId, configurationVersionId);
          await assertNothingHalfWritten(server, artifacts);
          rmSync(filler);

          // Space is back: the same server plans and applies.
          const first = await expectAppliesAgain(server, token, workspaceId, configurationVersionId);
          await assertNothingHalfWritten(server, artifacts);

          // 2. The apply's state upload cannot be written: tofu keeps the state and retries (the run
          // continues), nothing is published meanwhile, and once space is back the state lands whole.
          const second = await startPlannedRun(server, token, workspaceId, {
            "main.tf": 'resource "terraform_data" "y" {\n  input = "two"\n}\n',
          });
          filler = fillFilesystem(mount);
          await approvePlan(server, token, second.id, second.attributes.plan_digest!);
          await waitForLog(server, token, second.id, "apply", "Trying to restore the connection");
          assert.is(
            expectStatus(await getRun({ client: server.v1(token), path: { run_id: second.id } }), 200).data.attributes
              .status,
            "applying",
          );
          assert.equal(
            await currentState(server, token, workspaceId),
            first,
            "the current state is untouched while the upload fails",
          );
          await assertNothingHalfWritten(server, artifacts);
          rmSync(filler);
          await waitForApplied(server, token, second.id);
          await expectPublished(server, token, workspaceId, 2, "y");
          await assertNothingHalfWritten(server, artifacts);
        },
        { runner: true, localArtifacts: true, config: { artifactStore: { kind: "local", directory: artifacts } } },
      );
    }),
  );
}

if (!process.env.STACKSHIP_TEST_PG_URL) {
  skipTest(
    test,
    "a plan's artifact writes and an apply's state upload on a full filesystem [postgres]",
    "STACKSHIP_TEST_PG_URL is not set (export STACKSHIP_TEST_PG_URL=$(bash scripts/ensure-postgres))",
  );
}

test.run();
