import * as assert from "uvu/assert";
import { firstError } from "../support/documents.ts";
import { countRows } from "../support/database.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import {
  commitTarball,
  connectedRepository,
  connectWorkspace,
  deliver,
  eventually,
  newCommit,
  newInstallationId,
  newSha,
  pushPayload,
  settled,
} from "../support/github.ts";
import { buildTarGz } from "../../src/github/tarball.ts";
import type { CheckRunRow } from "../../src/store/github-records.ts";
import type { RunRow } from "../../src/store/rows.ts";
import { testEachServer } from "../support/test-server.ts";
import { auditOf, MAIN_TF, PIPELINE_TABLES, runOf, TARBALL_LIMIT } from "../support/github-source.ts";
import { newBytes, pushSettled, pushSuite, deliverPush } from "../support/api-github-push.ts";

// Pushes through the GitHub App pipeline against a local GitHub API double (no runner: runs stay
// pending): pushes that create nothing, refusals, outages, several workspaces on one repository and
// check runs. The pushes that create a run, replays and redirects are github-push-runs.test.ts.

// ---------------------------------------------------------------------------------------------
const { double, push, GITHUB } = pushSuite("push → refusals, outages and check runs");

testEachServer(
  push,
  "a push that changes nothing under the working directory or trigger paths, and a push to another branch, create nothing (audited)",
  async (server) => {
    const connected = await connectedRepository(server, double, {
      workingDirectory: "infra",
      triggerPaths: ["modules/**"],
    });
    const sha = await newCommit(double, connected.repository, {
      "infra/main.tf": MAIN_TF,
      "modules/x/main.tf": "# x\n",
    });
    const before = await countRows(server, PIPELINE_TABLES);
    const readme = await deliverPush(server, double, connected, sha, { changed: ["README.md", "infra2/main.tf"] });
    assert.equal(await settled(server, readme.deliveryId).then((r) => [r.status, r.outcome]), [
      "ignored",
      "no_relevant_changes",
    ]);
    const other = await deliverPush(server, double, connected, sha, {
      branch: "feature",
      changed: ["infra/main.tf"],
    });
    assert.equal(await settled(server, other.deliveryId).then((r) => [r.status, r.outcome]), [
      "ignored",
      "branch_not_tracked",
    ]);
    assert.equal(await countRows(server, PIPELINE_TABLES), before);
    assert.equal(
      (await auditOf(server, other.deliveryId))
        .filter((e) => e.action !== "github.delivery.received")
        .map((e) => [e.action, e.reason]),
      [["github.delivery.ignored", "branch_not_tracked"]],
    );
    // A trigger path outside the working directory does create one.
    const module = await deliverPush(server, double, connected, sha, { changed: ["modules/x/main.tf"] });
    assert.is((await settled(server, module.deliveryId)).status, "processed");
  },
  GITHUB,
);

testEachServer(
  push,
  "refusals write nothing and are audited: unknown installation, repository not connected, `..`, an absolute path, an escaping symlink, a tarball over the limit",
  async (server) => {
    const connected = await connectedRepository(server, double);
    const top = (sha: string) => `${connected.repository.replace("/", "-")}-${sha.slice(0, 7)}`;
    const cases: Array<{
      outcome: string;
      payload: (sha: string) => unknown;
      tarball?: (sha: string) => Promise<Buffer>;
    }> = [
      {
        outcome: "installation_unknown",
        payload: (sha) => pushPayload(connected.repository, newInstallationId(), sha),
      },
      {
        outcome: "repository_not_connected",
        payload: (sha) => pushPayload("someone/else", connected.installationId, sha),
      },
      {
        outcome: "tarball_path_escapes",
        payload: (sha) => pushPayload(connected.repository, connected.installationId, sha),
        tarball: (sha) =>
          buildTarGz([
            { name: `${top(sha)}/`, type: "directory" },
            { name: `${top(sha)}/main.tf`, content: MAIN_TF },
            { name: `${top(sha)}/../../evil.tf`, content: "x" },
          ]),
      },
      {
        outcome: "tarball_path_absolute",
        payload: (sha) => pushPayload(connected.repository, connected.installationId, sha),
        tarball: (sha) =>
          buildTarGz([
            { name: `${top(sha)}/`, type: "directory" },
            { name: "/etc/cron.d/evil", content: "x" },
          ]),
      },
      {
        outcome: "tarball_link_escapes",
        payload: (sha) => pushPayload(connected.repository, connected.installationId, sha),
        tarball: (sha) =>
          buildTarGz([
            { name: `${top(sha)}/`, type: "directory" },
            { name: `${top(sha)}/main.tf`, type: "symlink", linkname: "../../../etc/passwd" },
          ]),
      },
      {
        outcome: "tarball_too_large",
        payload: (sha) => pushPayload(connected.repository, connected.installationId, sha),
        // Random bytes do not compress: over the 64 KiB limit once gzipped.
        tarball: (sha) =>
          buildTarGz([
            { name: `${top(sha)}/`, type: "directory" },
            { name: `${top(sha)}/blob.bin`, content: newBytes(TARBALL_LIMIT + 1024) },
          ]),
      },
    ];
    for (const c of cases) {
      const sha = newSha();
      double.setTarball(
        connected.repository,
        sha,
        c.tarball ? await c.tarball(sha) : await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }),
      );
      const before = await countRows(server, PIPELINE_TABLES);
      const sent = await deliver(server, double, "push", c.payload(sha));
      assert.is(sent.response.status, 202);
      const result = await settled(server, sent.deliveryId);
      assert.equal([result.status, result.outcome], ["refused", c.outcome], JSON.stringify(result));
      assert.equal(await countRows(server, PIPELINE_TABLES), before, `${c.outcome} wrote rows`);
      assert.equal(
        (await auditOf(server, sent.deliveryId))
          .filter((e) => e.action !== "github.delivery.received")
          .map((e) => [e.action, e.reason]),
        [["github.delivery.refused", c.outcome]],
      );
    }
    // Just under the limit is accepted.
    const sha = newSha();
    let size = TARBALL_LIMIT - 2048;
    let tarball = await buildTarGz([
      { name: `${top(sha)}/`, type: "directory" },
      { name: `${top(sha)}/main.tf`, content: MAIN_TF },
      { name: `${top(sha)}/blob.bin`, content: newBytes(size) },
    ]);
    while (tarball.length > TARBALL_LIMIT)
      tarball = await buildTarGz([
        { name: `${top(sha)}/`, type: "directory" },
        { name: `${top(sha)}/main.tf`, content: MAIN_TF },
        { name: `${top(sha)}/blob.bin`, content: newBytes((size -= 256)) },
      ]);
    double.setTarball(connected.repository, sha, tarball);
    const ok = await deliverPush(server, double, connected, sha);
    assert.is((await settled(server, ok.deliveryId)).status, "processed");
  },
  GITHUB,
);

testEachServer(
  push,
  "a GitHub outage is retried with backoff and audited; the delivery then creates its run",
  async (server) => {
    const connected = await connectedRepository(server, double);
    const sha = await newCommit(double, connected.repository, { "main.tf": MAIN_TF });
    double.down = true;
    try {
      const sent = await deliverPush(server, double, connected, sha);
      assert.is(sent.response.status, 202);
      await eventually("a failed attempt", async () =>
        (await auditOf(server, sent.deliveryId)).some((e) => e.action === "github.delivery.attempt_failed"),
      );
      assert.is((await countRows(server, ["runs"])).runs, 0);
      double.down = false;
      const result = await settled(server, sent.deliveryId);
      assert.is(result.status, "processed");
      assert.ok(result.attempts >= 2, `attempts ${result.attempts}`);
    } finally {
      double.down = false;
    }
  },
  GITHUB,
);

testEachServer(
  push,
  "one repository backs several workspaces: a push runs exactly the workspaces whose directory it changed",
  async (server) => {
    const network = await connectWorkspace(server, double, { workingDirectory: "network" });
    const app = await connectWorkspace(server, double, {
      workingDirectory: "app",
      repository: network.repository,
      installationId: network.installationId,
      organization: network,
    });
    // Another organization cannot connect through this installation (nor reach the repository).
    const { token: otherToken, organizationName: other } = await createOrganizationWithToken(
      server,
      "intruder",
      "admin",
    );
    const otherWorkspace = await createWorkspace(server, otherToken, other);
    const before = await countRows(server, ["source_connections", "audit_events"]);
    const refused = await fetch(`${server.baseUrl}/v1/workspaces/${otherWorkspace.id}/source`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${otherToken}`, "Content-Type": "application/vnd.api+json" },
      body: JSON.stringify({
        data: {
          type: "source-connections",
          attributes: { installation_id: network.installationId, repository: network.repository },
        },
      }),
    });
    assert.is(refused.status, 422);
    assert.is(firstError(await refused.json()).code, "SOURCE_INSTALLATION_NOT_BOUND");
    assert.equal(await countRows(server, ["source_connections", "audit_events"]), before);
    double.installations.set(network.installationId, [network.repository]);
    const sha = await newCommit(double, network.repository, { "network/main.tf": MAIN_TF, "app/main.tf": MAIN_TF });
    const one = await pushSettled(server, double, network, sha, { changed: ["app/main.tf"] });
    assert.is(one.run_ids.length, 1);
    assert.is(
      (await server.db.knex<RunRow>("runs").where({ id: one.run_ids[0] }).first())!.workspace_id,
      app.workspaceId,
    );
    // The next commit (a push of the same head SHA again would be a replay).
    const next = await newCommit(double, network.repository, { "network/main.tf": MAIN_TF, "app/main.tf": MAIN_TF });
    const both = await pushSettled(server, double, network, next, {
      changed: ["app/main.tf", "network/main.tf"],
    });
    const workspaces = (await server.db.knex<RunRow>("runs").whereIn("id", both.run_ids).select("workspace_id"))
      .map((r) => r.workspace_id)
      .sort();
    assert.equal(workspaces, [network.workspaceId, app.workspaceId].sort());
  },
  GITHUB,
);

testEachServer(
  push,
  "check runs failing on GitHub are retried and audited, and never block or change the run",
  async (server) => {
    const connected = await connectedRepository(server, double);
    const sha = await newCommit(double, connected.repository, { "main.tf": MAIN_TF });
    double.checkRunsDown = true;
    try {
      const sent = await deliverPush(server, double, connected, sha);
      const result = await settled(server, sent.deliveryId);
      assert.is(result.status, "processed", "the delivery does not wait for the check run");
      const runId = result.run_ids[0];
      await eventually("the failed check run audit", async () =>
        (await auditOf(server, runId)).some((e) => e.action === "github.check_run.failed"),
      );
      const run = await runOf(server, connected.token, runId);
      assert.is(run.attributes.status, "pending");
      const record = (await server.db.knex<CheckRunRow>("github_check_runs").where({ run_id: runId }).first())!;
      assert.ok(Number(record.attempts) >= 1);
      assert.is(record.check_run_id, null);
      assert.match(record.last_error!, "502");
      double.checkRunsDown = false;
      const created = await eventually(
        "the check run once GitHub is back",
        () => double.checkRuns.find((c) => c.body.external_id === runId),
        15_000,
      );
      assert.is(created.body.status, "queued");
      assert.is(
        (await runOf(server, connected.token, runId)).attributes.updated_at,
        run.attributes.updated_at,
        "the run itself never changed",
      );
    } finally {
      double.checkRunsDown = false;
    }
  },
  GITHUB,
);
push.run();
