// Faults that lose nothing (issue 31, part 5): the S3 store (SeaweedFS, `.tools/bin/weed`) killed
// with SIGKILL while a plan writes its artifacts and while an apply uploads its state, then
// started again on the same data and ports. Expected: the plan ends errored with nothing
// published, an apply that cannot read its plan applies nothing and says so, an apply whose
// state upload fails keeps going while tofu retries and lands its state whole once S3 is back,
// and the same server process plans and applies again without a restart. Counted as skipped
// without the weed binary. About 110 s per database on this 2-core machine.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";

import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, HeadBucketCommand } from "@aws-sdk/client-s3";
import { suite } from "uvu";
import * as assert from "uvu/assert";

import { getCurrentStateVersion } from "../../../generated/tfe/client/sdk.gen.ts";
import { testDialects } from "../support/databases.ts";
import { expectAppliesAgain, expectPlanUnpublished, faultWorkspace } from "../support/fault-runs.ts";
import {
  applyUntil,
  approvePlan,
  readLog,
  startPlannedRun,
  startRun,
  waitForApplied,
  waitForLog,
  waitToSettle,
} from "../support/runs.ts";
import { artifactStoreUrl, seaweedServer, WEED } from "../support/seaweedfs.ts";
import { withTestServer } from "../support/test-server.ts";
import { skipTest } from "../support/skips.ts";
import { currentState, expectPublished } from "../support/state.ts";

const test = suite("the S3 store killed and started again");

interface KillableS3 {
  url: string;
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** SeaweedFS on fixed ports and one directory, so a SIGKILL and a new start keep its data. */
async function killableSeaweed(): Promise<KillableS3> {
  const dir = await mkdtemp(join(tmpdir(), "ss-weed-restart-"));
  const weed = await seaweedServer(dir);
  const { args, bucket, client } = weed;
  let child: ChildProcess | null = null;
  const killOnExit = () => child?.kill("SIGKILL");
  process.once("exit", killOnExit);
  const kill = async () => {
    const running = child;
    child = null;
    if (running && running.exitCode === null && running.signalCode === null) {
      const gone = new Promise((resolve) => running.once("exit", resolve));
      running.kill("SIGKILL");
      await gone;
    }
  };
  const start = async () => {
    const out = openSync(join(dir, "weed.log"), "a");
    const started = spawn(WEED, args, { cwd: dir, stdio: ["ignore", out, out] });
    closeSync(out);
    child = started;
    const deadline = Date.now() + 60_000;
    for (;;) {
      assert.ok(
        started.exitCode === null && started.signalCode === null,
        `weed exited: ${readFileSync(join(dir, "weed.log"), "utf8").slice(-2000)}`,
      );
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
        return;
      } catch (error) {
        const name = (error as { name?: string }).name;
        if (name === "BucketAlreadyOwnedByYou" || name === "BucketAlreadyExists") {
          await client.send(new HeadBucketCommand({ Bucket: bucket }));
          return;
        }
        assert.ok(Date.now() < deadline, `weed not ready after 60 s: ${name}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  };
  await start();
  return {
    url: artifactStoreUrl(weed, "faults").toString(),
    kill,
    start,
    stop: async () => {
      process.off("exit", killOnExit);
      await kill();
      client.destroy();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const slowApply = {
  "main.tf":
    'resource "terraform_data" "slow" {\n  input = "three"\n  provisioner "local-exec" {\n    command = "echo provisioning-started; sleep 3"\n  }\n}\n',
};

for (const dialect of testDialects()) {
  const title = `SIGKILL of S3 under a plan's artifact writes and an apply's state upload, then a start: recorded, nothing published half, recovered without a restart [${dialect}]`;
  if (!existsSync(WEED)) {
    skipTest(
      test,
      title,
      `${WEED} is absent (bash scripts/bootstrap-tools --with-test-tools, which npm test runs, builds it)`,
    );
    continue;
  }
  test(title, async () => {
    const s3 = await killableSeaweed();
    try {
      await withTestServer(
        dialect,
        async (server) => {
          const { token, workspaceId, configurationVersionId } = await faultWorkspace(server, "s3-faults", "s3");

          // 1. The store is gone while the plan writes its artifacts.
          await s3.kill();
          await expectPlanUnpublished(server, token, workspaceId, configurationVersionId);
          await s3.start();

          // Back: the same server plans and applies.
          await expectAppliesAgain(server, token, workspaceId, configurationVersionId);

          // 2. The store is gone when the apply starts: it cannot read its plan, applies nothing and says so.
          const unread = await startPlannedRun(server, token, workspaceId, {
            "main.tf": 'resource "terraform_data" "y" {\n  input = "two"\n}\n',
          });
          await s3.kill();
          await approvePlan(server, token, unread.id, unread.attributes.plan_digest!);
          await waitToSettle(server, token, unread.id, "errored", { reason: "apply_failed" });
          assert.match(
            await readLog(server, token, unread.id, "apply"),
            /could not read the plan .*nothing was applied/,
          );
          await s3.start();
          assert.is((await currentState(server, token, workspaceId)).serial, 1, "the current state is untouched");

          // 3. The store is killed during the apply, before its state upload: tofu retries, nothing is
          // published meanwhile, and once S3 is back the state lands whole.
          const second = await startRun(server, token, workspaceId, slowApply);
          await applyUntil(server, token, second.id);
          await s3.kill();
          await waitForLog(server, token, second.id, "apply", "Trying to restore the connection");
          assert.is(
            (await currentState(server, token, workspaceId).catch(() => ({ serial: -1 }))).serial,
            -1,
            "the current state cannot even be read while S3 is gone",
          );
          const during = await getCurrentStateVersion({
            client: server.tfe(token),
            path: { workspace_id: workspaceId },
          });
          assert.is(
            (during.data as { data: { attributes: { serial: number } } }).data.attributes.serial,
            1,
            "nothing is published while S3 is gone",
          );
          await s3.start();
          await waitForApplied(server, token, second.id);
          await expectPublished(server, token, workspaceId, 2, "slow");
        },
        { runner: true, config: { artifactStore: { kind: "s3", url: s3.url } } },
      );
    } finally {
      await s3.stop();
    }
  });
}

if (!process.env.STACKSHIP_TEST_PG_URL) {
  skipTest(
    test,
    "SIGKILL of S3 under a plan's artifact writes and an apply's state upload [postgres]",
    "STACKSHIP_TEST_PG_URL is not set (export STACKSHIP_TEST_PG_URL=$(bash scripts/ensure-postgres))",
  );
}

test.run();
