import * as assert from "uvu/assert";
import { jsonOf, type V1 } from "../support/documents.ts";
import { countRows } from "../support/database.ts";
import { connectedRepository, connectWorkspace, deliver, eventually, pushPayload, settled } from "../support/github.ts";
import type { ConfigurationVersionRow } from "../../src/store/rows.ts";
import { testEachServer } from "../support/test-server.ts";
import { MAIN_TF, PIPELINE_TABLES, runOf, sourceOf } from "../support/github-source.ts";
import { pushSettled, pushSuite } from "../support/api-github-push.ts";
import { newCommit } from "../support/github.ts";

// Pushes through the GitHub App pipeline against a local GitHub API double (no runner: runs stay
// pending, which is what the queue-related cases need): a push to the tracked branch and what it
// creates, replays and redirects; refusals, outages and check runs are github-push-refusals.test.ts. Source connections and the webhook intake are
// github-source.test.ts. The end-to-end case with real tofu is in test/lifecycle/github-push.test.ts.

// ---------------------------------------------------------------------------------------------
const { double, push, GITHUB } = pushSuite("push → plan_and_apply run");

testEachServer(
  push,
  "replay: a captured push body re-sent with a new X-GitHub-Delivery creates nothing; an older push arriving after a newer one is refused",
  async (server) => {
    const connected = await connectWorkspace(server, double);
    const sha = await newCommit(double, connected.repository, { "main.tf": MAIN_TF });
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
    const older = await newCommit(double, connected.repository, { "main.tf": MAIN_TF });
    const stale = pushPayload(connected.repository, connected.installationId, older);
    stale.repository.pushed_at = 1_700_000_000;
    const refused = await settled(server, (await deliver(server, double, "push", stale)).deliveryId);
    assert.equal([refused.status, refused.outcome], ["refused", "push_outdated"], JSON.stringify(refused));
    assert.equal(await countRows(server, PIPELINE_TABLES), before);
    // A newer one runs.
    const newer = await newCommit(double, connected.repository, { "main.tf": MAIN_TF });
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
    const sha = await newCommit(double, connected.repository, { "infra/main.tf": MAIN_TF, [`${deep}/x`]: "x\n" });
    let done = false;
    const health: number[] = [];
    const poll = (async () => {
      while (!done) {
        health.push((await fetch(`${server.baseUrl}/healthz`)).status);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      const miss = await pushSettled(server, double, connected, sha, { changed: [`${deep}/y`] });
      assert.equal([miss.status, miss.outcome], ["ignored", "no_relevant_changes"]);
      const hit = await pushSettled(server, double, connected, sha, { changed: [`${deep}/x`] });
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
        const sha = await newCommit(double, connected.repository, { "main.tf": MAIN_TF });
        double.tarballRedirect = rewrite;
        const downloadsBefore = double.requests.filter((r) => r.includes("/_codeload/")).length;
        const before = await countRows(server, PIPELINE_TABLES);
        const result = await pushSettled(server, double, connected, sha);
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
    const sha = await newCommit(double, connected.repository, { "main.tf": MAIN_TF });
    assert.is((await pushSettled(server, double, connected, sha)).status, "processed");
  },
  GITHUB,
);

testEachServer(
  push,
  "a push to the tracked branch creates a plan_and_apply run from the commit with its identity recorded, a check run, and the delivery in the source document; a redelivery creates nothing",
  async (server) => {
    const connected = await connectedRepository(server, double, { workingDirectory: "infra" });
    const sha = await newCommit(double, connected.repository, { "infra/main.tf": MAIN_TF, "README.md": "# infra\n" });
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
push.run();
