// The generated Python SDK (generated/sdk/python) against a real server with real runs
// (bubblewrap + tofu): server/test/fixtures/sdk/python/smoke.py drives one run to `applied` and pages the
// inventory. Set-up: a venv under .stackship-test/ (python3 -m venv), then `pip install` of a copy
// of the SDK (its dependencies from PyPI on the first run, cached by pip after that).
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getRun, getRunReview } from "../../../client/src/index.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { expectStatus } from "../support/factories.ts";
import { withTestServer } from "../support/test-server.ts";
import { run, summaryOf, tarballFile } from "./smoke-support.ts";

const test = suite("python sdk");
const VENV = join(REPO_ROOT, ".stackship-test/python-sdk-venv");

async function pythonWithSdk(): Promise<string> {
  const python = join(VENV, "bin/python");
  if (!existsSync(python)) {
    await mkdir(join(REPO_ROOT, ".stackship-test"), { recursive: true });
    await run("python3", ["-m", "venv", VENV]);
  }
  // A copy: pip's build leaves build/ and *.egg-info in the directory it installs from.
  const copy = join(await mkdtemp(join(tmpdir(), "ss-python-sdk-")), "python");
  await cp(join(REPO_ROOT, "generated/sdk/python"), copy, { recursive: true });
  await run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--force-reinstall", "--no-deps", copy]);
  await run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", copy]);
  return python;
}

test("stackship_client drives a run to applied: token, workspace, upload, review, plan changes, approval by digest, inventory pages", async () => {
  const python = await pythonWithSdk();
  const tarball = await tarballFile();
  await withTestServer(
    "sqlite",
    async (server) => {
      const { stdout } = await run(python, [join(REPO_ROOT, "server/test/fixtures/sdk/python/smoke.py")], {
        env: { ...process.env, STACKSHIP_URL: server.baseUrl, STACKSHIP_BOOTSTRAP_TOKEN: server.bootstrapToken, STACKSHIP_ORGANIZATION: "python-sdk", SMOKE_TARBALL: tarball },
      });
      const summary = summaryOf(stdout);
      assert.is(summary.status, "applied");
      assert.match(summary.planned_digest, /^[0-9a-f]{64}$/);
      assert.equal(summary.review_actions, ["approve", "discard", "cancel"]);
      // The server agrees: applied, and the approval is bound to the digest the program read.
      const applied = expectStatus(await getRun({ client: server.admin, path: { run_id: summary.run } }), 200).data;
      assert.is(applied.attributes.status, "applied");
      assert.is(applied.attributes.plan_digest, summary.planned_digest);
      const approval = expectStatus(await getRunReview({ client: server.admin, path: { run_id: summary.run } }), 200).data.attributes.stages.approval;
      assert.is(approval.state, "approved");
      assert.is(approval.plan_digest, summary.planned_digest);
      assert.is(approval.reason, "python sdk smoke");
      // Plan changes were read as a document naming the one resource.
      assert.match(JSON.stringify(summary.changes), /terraform_data\.x/);
      // Two runs, one per page, each seen exactly once, newest first.
      assert.is(summary.pages, 2);
      assert.equal(summary.inventory, [summary.second, summary.run]);
    },
    { runner: true },
  );
});

test.run();
