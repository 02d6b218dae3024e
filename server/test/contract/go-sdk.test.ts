// The generated Go SDK (generated/sdk/go) against a real server with real runs (bubblewrap +
// tofu): server/test/fixtures/sdk/go/main.go drives one run to `applied` and pages the inventory.
// Built with the machine's Go from a copy of the fixture module whose `replace` points at
// generated/sdk/go (GOFLAGS=-mod=mod; module downloads come from the Go module proxy).
import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getRun, getRunReview } from "../../../client/src/index.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { expectStatus } from "../support/factories.ts";
import { withTestServer } from "../support/test-server.ts";
import { run, summaryOf, tarballFile } from "./smoke-support.ts";

const test = suite("go sdk");

/** Builds the smoke program; the copy keeps go.sum updates out of the repository. */
async function buildSmoke(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "ss-go-sdk-"));
  const module = join(dir, "smoke");
  await cp(join(REPO_ROOT, "server/test/fixtures/sdk/go"), module, { recursive: true });
  const gomod = await readFile(join(module, "go.mod"), "utf8");
  await writeFile(join(module, "go.mod"), gomod.replace(/=> \S+generated\/sdk\/go/, `=> ${join(REPO_ROOT, "generated/sdk/go")}`));
  const binary = join(dir, "smoke-bin");
  await run("go", ["build", "-o", binary, "."], { cwd: module, env: { ...process.env, GOFLAGS: "-mod=mod", CGO_ENABLED: "0" } });
  return binary;
}

test("package stackship drives a run to applied: token, workspace, upload, review, plan changes, approval by digest, inventory pages", async () => {
  const binary = await buildSmoke();
  const tarball = await tarballFile();
  await withTestServer(
    "sqlite",
    async (server) => {
      const { stdout } = await run(binary, [], {
        env: { ...process.env, STACKSHIP_URL: server.baseUrl, STACKSHIP_BOOTSTRAP_TOKEN: server.bootstrapToken, STACKSHIP_ORGANIZATION: "go-sdk", SMOKE_TARBALL: tarball },
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
      assert.is(approval.reason, "go sdk smoke");
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
