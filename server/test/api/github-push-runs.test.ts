import { suite } from "uvu";
import * as assert from "uvu/assert";
import { firstError, jsonOf, type V1 } from "../support/documents.ts";
import { createOrganizationWithToken, createWorkspace, countRows } from "../support/factories.ts";
import { GitHubDouble } from "../support/github-double.ts";
import {
  commitTarball,
  connectWorkspace,
  deliver,
  eventually,
  newInstallationId,
  newSha,
  pushPayload,
  settled,
} from "../support/github.ts";
import { buildTarGz } from "../../src/github/tarball.ts";
import type { CheckRunRow } from "../../src/store/github-records.ts";
import type { ConfigurationVersionRow, RunRow } from "../../src/store/rows.ts";
import { testEachServer } from "../support/test-server.ts";
import {
  auditOf,
  githubServerOptions,
  MAIN_TF,
  PIPELINE_TABLES,
  runOf,
  sourceOf,
  TARBALL_LIMIT,
} from "../support/github-source.ts";

// Pushes through the GitHub App pipeline against a local GitHub API double (no runner: runs stay
// pending, which is what the queue-related cases need): a push to the tracked branch and what it
// creates, replays, refusals, outages and check runs. Source connections and the webhook intake are
// github-source.test.ts. The end-to-end case with real tofu is in test/lifecycle/github-push.test.ts.

// Started before the suite and stopped after it (uvu's -r tsx hook has no top-level await).
const double = new GitHubDouble();
const GITHUB = githubServerOptions(double);

// ---------------------------------------------------------------------------------------------
const push = suite("push → plan_and_apply run");
push.before(async () => {
  await double.start();
});

testEachServer(
  push,
  "replay: a captured push body re-sent with a new X-GitHub-Delivery creates nothing; an older push arriving after a newer one is refused",
  async (server) => {
    const connected = await connectWorkspace(server, double);
    const sha = newSha();
    double.setTarball(
      connected.repository,
      sha,
      await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }),
    );
    const captured = pushPayload(connected.repository, connected.installationId, sha);
    captured.repository.pushed_at = 1_700_000_100;
    const first = await settled(server, (await deliver(server, double, "push", captured)).deliveryId);
    assert.equal([first.status, first.outcome, first.run_ids.length], ["processed", "run_created", 1]);
    const before = await countRows(server, PIPELINE_TABLES);
    const replay = await deliver(server, double, "push", captured);
    assert.is(replay.response.status, 202, "a new delivery id is a new delivery");
    assert.equal(await settled(server, replay.deliveryId).then((r) => [r.status, r.outcome, r.run_ids]), [
      "ignored",
      "replayed",
      [],
    ]);
    assert.equal(await countRows(server, PIPELINE_TABLES), before, "the replay created nothing");

    // A push older than the newest one this workspace ran (GitHub's signed pushed_at) is refused.
    const older = newSha();
    double.setTarball(
      connected.repository,
      older,
      await commitTarball(connected.repository, older, { "main.tf": MAIN_TF }),
    );
    const stale = pushPayload(connected.repository, connected.installationId, older);
    stale.repository.pushed_at = 1_700_000_000;
    const refused = await settled(server, (await deliver(server, double, "push", stale)).deliveryId);
    assert.equal([refused.status, refused.outcome], ["refused", "push_outdated"], JSON.stringify(refused));
    assert.equal(await countRows(server, PIPELINE_TABLES), before);
    // A newer one runs.
    const newer = newSha();
    double.setTarball(
      connected.repository,
      newer,
      await commitTarball(connected.repository, newer, { "main.tf": MAIN_TF }),
    );
    const fresh = pushPayload(connected.repository, connected.installationId, newer);
    fresh.repository.pushed_at = 1_700_000_200;
    assert.equal(
      await settled(server, (await deliver(server, double, "push", fresh)).deliveryId).then((r) => [
        r.status,
        r.outcome,
      ]),
      ["processed", "run_created"],
    );
  },
  GITHUB,
);

testEachServer(
  push,
  "a pathological trigger path (twelve **/ then x) against a deep changed path is matched right while /healthz keeps answering",
  async (server) => {
    const connected = await connectWorkspace(server, double, {
      workingDirectory: "infra",
      triggerPaths: [`${"**/".repeat(12)}x`],
    });
    const deep = Array.from({ length: 40 }, (_, i) => `d${i}`).join("/");
    const sha = newSha();
    double.setTarball(
      connected.repository,
      sha,
      await commitTarball(connected.repository, sha, { "infra/main.tf": MAIN_TF, [`${deep}/x`]: "x\n" }),
    );
    let done = false;
    const health: number[] = [];
    const poll = (async () => {
      while (!done) {
        health.push((await fetch(`${server.baseUrl}/healthz`)).status);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      const miss = await settled(
        server,
        (
          await deliver(
            server,
            double,
            "push",
            pushPayload(connected.repository, connected.installationId, sha, { changed: [`${deep}/y`] }),
          )
        ).deliveryId,
      );
      assert.equal([miss.status, miss.outcome], ["ignored", "no_relevant_changes"]);
      const hit = await settled(
        server,
        (
          await deliver(
            server,
            double,
            "push",
            pushPayload(connected.repository, connected.installationId, sha, { changed: [`${deep}/x`] }),
          )
        ).deliveryId,
      );
      assert.equal([hit.status, hit.outcome], ["processed", "run_created"]);
    } finally {
      done = true;
      await poll;
    }
    assert.ok(health.length > 0 && health.every((status) => status === 200), JSON.stringify(health));
  },
  GITHUB,
);

testEachServer(
  push,
  "tarball redirects go only to GitHub's own host over its scheme: another host or another scheme is refused and nothing is downloaded or written",
  async (server) => {
    const connected = await connectWorkspace(server, double);
    try {
      for (const [rewrite, label] of [
        [
          (url: string) => url.replace("://127.0.0.1:", "://localhost:"),
          "another host (the same server by another name)",
        ],
        [(url: string) => url.replace("http://", "https://"), "another scheme"],
        [(url: string) => url.replace(/:(\d+)\//, (_, port) => `:${Number(port) + 1}/`), "another port"],
      ] as const) {
        const sha = newSha();
        double.setTarball(
          connected.repository,
          sha,
          await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }),
        );
        double.tarballRedirect = rewrite;
        const downloadsBefore = double.requests.filter((r) => r.includes("/_codeload/")).length;
        const before = await countRows(server, PIPELINE_TABLES);
        const result = await settled(
          server,
          (await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha)))
            .deliveryId,
        );
        assert.equal(
          [result.status, result.outcome],
          ["refused", "tarball_redirect_refused"],
          `${label}: ${JSON.stringify(result)}`,
        );
        assert.is(
          double.requests.filter((r) => r.includes("/_codeload/")).length,
          downloadsBefore,
          `${label}: nothing was downloaded`,
        );
        assert.equal(await countRows(server, PIPELINE_TABLES), before);
      }
    } finally {
      double.tarballRedirect = null;
    }
    const sha = newSha();
    double.setTarball(
      connected.repository,
      sha,
      await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }),
    );
    assert.is(
      (
        await settled(
          server,
          (await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha)))
            .deliveryId,
        )
      ).status,
      "processed",
    );
  },
  GITHUB,
);

testEachServer(
  push,
  "a push to the tracked branch creates a plan_and_apply run from the commit with its identity recorded, a check run, and the delivery in the source document; a redelivery creates nothing",
  async (server) => {
    const connected = await connectWorkspace(server, double, { workingDirectory: "infra" });
    double.installations.set(connected.installationId, [connected.repository]);
    const sha = newSha();
    double.setTarball(
      connected.repository,
      sha,
      await commitTarball(connected.repository, sha, { "infra/main.tf": MAIN_TF, "README.md": "# infra\n" }),
    );
    const payload = pushPayload(connected.repository, connected.installationId, sha, {
      changed: ["infra/main.tf"],
      message: "Add the greeting\n\nWith a body.",
    });
    const sent = await deliver(server, double, "push", payload);
    assert.is(sent.response.status, 202, JSON.stringify(sent.body));
    assert.is(sent.body.data.attributes.status, "queued");
    const result = await settled(server, sent.deliveryId);
    assert.is(result.status, "processed", JSON.stringify(result));
    assert.is(result.run_ids.length, 1);
    const run = await runOf(server, connected.token, result.run_ids[0]);
    assert.is(run.attributes.kind, "plan_and_apply");
    assert.is(run.attributes.source, "github_push");
    assert.is(run.attributes.message, `GitHub ${sha}`);
    assert.equal(run.attributes.commit, {
      sha,
      message: "Add the greeting\n\nWith a body.",
      author: "octocat",
      ref: "refs/heads/main",
      repository: connected.repository,
      fork: false,
    });
    assert.is(run.attributes.auto_apply, false);

    const review = (
      await jsonOf<V1["RunReviewDocument"]>(
        await fetch(`${server.baseUrl}/v1/runs/${run.id}/review`, {
          headers: { Authorization: `Bearer ${connected.token}` },
        }),
      )
    ).data.attributes.header;
    assert.is(review.title, `GitHub ${sha}`);
    assert.is(review.title_generated, true);
    assert.equal(review.commit_sha, { state: "recorded", value: sha });
    // The double stands where a GitHub Enterprise Server would: the commit page is on its host.
    assert.equal(review.commit_url, {
      state: "recorded",
      value: `${double.url.replace(/\/+$/, "")}/${connected.repository}/commit/${sha}`,
    });
    assert.equal(review.commit_message, { state: "recorded", value: "Add the greeting\n\nWith a body." });
    assert.equal(review.commit_author, { state: "recorded", value: "octocat" });
    assert.equal(review.source_ref, { state: "recorded", value: "refs/heads/main" });
    assert.equal(review.working_directory, { state: "recorded", value: "infra" });
    assert.is(review.source, "github_push");

    // The configuration is the commit's tree without GitHub's top-level folder.
    const cv = (await server.db
      .knex<ConfigurationVersionRow>("configuration_versions")
      .where({ id: run.relationships.configuration_version.data.id })
      .first())!;
    assert.is(cv.source, "github");
    assert.is(cv.status, "uploaded");

    const check = await eventually("the check run", () => double.checkRuns.find((c) => c.body.external_id === run.id));
    assert.is(check.method, "POST");
    assert.is(check.body.head_sha, sha);
    assert.is(check.body.status, "queued");
    assert.is(check.body.details_url, `http://127.0.0.1:8080/runs/${run.id}`);
    assert.match(check.body.output!.summary, "plan not finished");
    assert.not.ok(double.downloadSawAuthorization, "the token is never sent to the download host");

    const doc = await sourceOf(server, connected.workspaceId, connected.token);
    assert.equal(
      doc.body.meta.deliveries.map((d) => [d.id, d.attributes.status, d.attributes.outcome, d.attributes.run_ids]),
      [[sent.deliveryId, "processed", "run_created", [run.id]]],
    );

    const before = await countRows(server, PIPELINE_TABLES);
    const again = await deliver(server, double, "push", payload, { deliveryId: sent.deliveryId });
    assert.is(again.response.status, 200);
    assert.equal(await countRows(server, PIPELINE_TABLES), before);
  },
  GITHUB,
);

testEachServer(
  push,
  "a push that changes nothing under the working directory or trigger paths, and a push to another branch, create nothing (audited)",
  async (server) => {
    const connected = await connectWorkspace(server, double, {
      workingDirectory: "infra",
      triggerPaths: ["modules/**"],
    });
    double.installations.set(connected.installationId, [connected.repository]);
    const sha = newSha();
    double.setTarball(
      connected.repository,
      sha,
      await commitTarball(connected.repository, sha, { "infra/main.tf": MAIN_TF, "modules/x/main.tf": "# x\n" }),
    );
    const before = await countRows(server, PIPELINE_TABLES);
    const readme = await deliver(
      server,
      double,
      "push",
      pushPayload(connected.repository, connected.installationId, sha, { changed: ["README.md", "infra2/main.tf"] }),
    );
    assert.equal(await settled(server, readme.deliveryId).then((r) => [r.status, r.outcome]), [
      "ignored",
      "no_relevant_changes",
    ]);
    const other = await deliver(
      server,
      double,
      "push",
      pushPayload(connected.repository, connected.installationId, sha, {
        branch: "feature",
        changed: ["infra/main.tf"],
      }),
    );
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
    const module = await deliver(
      server,
      double,
      "push",
      pushPayload(connected.repository, connected.installationId, sha, { changed: ["modules/x/main.tf"] }),
    );
    assert.is((await settled(server, module.deliveryId)).status, "processed");
  },
  GITHUB,
);

testEachServer(
  push,
  "refusals write nothing and are audited: unknown installation, repository not connected, `..`, an absolute path, an escaping symlink, a tarball over the limit",
  async (server) => {
    const connected = await connectWorkspace(server, double);
    double.installations.set(connected.installationId, [connected.repository]);
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
    const ok = await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha));
    assert.is((await settled(server, ok.deliveryId)).status, "processed");
  },
  GITHUB,
);

function newBytes(size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i += 20) Buffer.from(newSha(), "hex").copy(out, i);
  return out;
}

testEachServer(
  push,
  "a GitHub outage is retried with backoff and audited; the delivery then creates its run",
  async (server) => {
    const connected = await connectWorkspace(server, double);
    double.installations.set(connected.installationId, [connected.repository]);
    const sha = newSha();
    double.setTarball(
      connected.repository,
      sha,
      await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }),
    );
    double.down = true;
    try {
      const sent = await deliver(
        server,
        double,
        "push",
        pushPayload(connected.repository, connected.installationId, sha),
      );
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
    const sha = newSha();
    double.setTarball(
      network.repository,
      sha,
      await commitTarball(network.repository, sha, { "network/main.tf": MAIN_TF, "app/main.tf": MAIN_TF }),
    );
    const one = await settled(
      server,
      (
        await deliver(
          server,
          double,
          "push",
          pushPayload(network.repository, network.installationId, sha, { changed: ["app/main.tf"] }),
        )
      ).deliveryId,
    );
    assert.is(one.run_ids.length, 1);
    assert.is(
      (await server.db.knex<RunRow>("runs").where({ id: one.run_ids[0] }).first())!.workspace_id,
      app.workspaceId,
    );
    // The next commit (a push of the same head SHA again would be a replay).
    const next = newSha();
    double.setTarball(
      network.repository,
      next,
      await commitTarball(network.repository, next, { "network/main.tf": MAIN_TF, "app/main.tf": MAIN_TF }),
    );
    const both = await settled(
      server,
      (
        await deliver(
          server,
          double,
          "push",
          pushPayload(network.repository, network.installationId, next, {
            changed: ["app/main.tf", "network/main.tf"],
          }),
        )
      ).deliveryId,
    );
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
    const connected = await connectWorkspace(server, double);
    double.installations.set(connected.installationId, [connected.repository]);
    const sha = newSha();
    double.setTarball(
      connected.repository,
      sha,
      await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }),
    );
    double.checkRunsDown = true;
    try {
      const sent = await deliver(
        server,
        double,
        "push",
        pushPayload(connected.repository, connected.installationId, sha),
      );
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

// ---------------------------------------------------------------------------------------------
push.after(() => double.stop());

push.run();
