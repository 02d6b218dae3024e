import { suite } from "uvu";
import * as assert from "uvu/assert";

import { jsonOf, type V1 } from "../support/documents.ts";

import { GitHubDouble } from "../support/github-double.ts";
import {
  connectWorkspace,
  deliver,
  eventually,
  newCommit,
  pullRequestSettled,
  pushPayload,
  settled,
} from "../support/github.ts";
import { approvePlan, readLog, waitForPlanned, waitForStatus, waitToSettle } from "../support/runs.ts";
import { testEachServer } from "../support/test-server.ts";

// End to end with real tofu in the sandbox: a push and a pull request through the GitHub App
// pipeline, against the local GitHub API double.

const double = new GitHubDouble();
const FILES = {
  "infra/main.tf":
    'module "greet" {\n  source = "../modules/greet"\n}\n\noutput "greeting" {\n  value = module.greet.greeting\n}\n',
  "modules/greet/main.tf":
    'resource "terraform_data" "greeting" {\n  input = "hello"\n}\n\noutput "greeting" {\n  value = terraform_data.greeting.output\n}\n',
  "README.md": "# infra\n",
};

const github = suite("GitHub pipeline with real tofu");
github.before(async () => {
  await double.start();
});
github.after(() => double.stop());

testEachServer(
  github,
  "push → plan_and_apply run with the commit identity in the review → approve → applied; the check run goes queued/in progress → action_required → success; a pull request plans speculatively → success",
  async (server) => {
    const connected = await connectWorkspace(server, double, {
      workingDirectory: "infra",
      triggerPaths: ["modules/**"],
    });
    double.installations.set(connected.installationId, [connected.repository]);
    const sha = await newCommit(double, connected.repository, FILES);
    const sent = await deliver(
      server,
      double,
      "push",
      pushPayload(connected.repository, connected.installationId, sha, {
        changed: ["modules/greet/main.tf"],
        message: "Greet the world",
      }),
    );
    assert.is(sent.response.status, 202);
    const result = await settled(server, sent.deliveryId);
    assert.is(result.status, "processed", JSON.stringify(result));
    const runId = result.run_ids[0];

    const planned = await waitForPlanned(server, connected.token, runId);
    assert.equal(planned.attributes.plan_counts, { create: 1, change: 0, destroy: 0 });
    assert.equal(planned.attributes.commit, {
      sha,
      message: "Greet the world",
      author: "octocat",
      ref: "refs/heads/main",
      repository: connected.repository,
      fork: false,
    });

    const review = (
      await jsonOf<V1["RunReviewDocument"]>(
        await fetch(`${server.baseUrl}/v1/runs/${runId}/review`, {
          headers: { Authorization: `Bearer ${connected.token}` },
        }),
      )
    ).data.attributes;
    assert.is(review.header.title, `GitHub ${sha}`);
    assert.equal(review.header.commit_sha, { state: "recorded", value: sha });
    assert.equal(review.header.commit_message, { state: "recorded", value: "Greet the world" });
    assert.equal(review.header.commit_author, { state: "recorded", value: "octocat" });
    assert.equal(review.header.source_ref, { state: "recorded", value: "refs/heads/main" });
    assert.equal(review.header.working_directory, { state: "recorded", value: "infra" });
    assert.ok(review.available_actions.includes("approve"));

    const check = await eventually("the check run", () => double.checkRuns.find((c) => c.body.external_id === runId));
    await eventually("action_required on GitHub", () =>
      double.statesOf(check.id).includes("completed:action_required"),
    );
    const waiting = double.checkRuns.filter((c) => c.id === check.id).at(-1)!;
    assert.match(waiting.body.output!.summary, "1 to add, 0 to change, 0 to destroy");
    assert.match(waiting.body.output!.summary, "Policy: skipped");

    await approvePlan(server, connected.token, runId, planned.attributes.plan_digest!);
    await waitToSettle(server, connected.token, runId, "applied");
    await eventually("success on GitHub", () => double.statesOf(check.id).at(-1) === "completed:success");
    const states = double.statesOf(check.id);
    assert.is(states[0] === "queued" || states[0] === "in_progress", true, states.join(" → "));
    assert.ok(
      states.indexOf("completed:action_required") < states.lastIndexOf("completed:success"),
      states.join(" → "),
    );
    assert.is(
      double.checkRuns.filter((c) => c.id === check.id && c.method === "POST").length,
      1,
      "one check run per StackShip run",
    );

    // A pull request targeting the tracked branch: a speculative plan of its head, never applied.
    const head = await newCommit(double, connected.repository, FILES);
    const prResult = await pullRequestSettled(server, double, connected, "opened", { number: 3, headSha: head });
    const speculative = await waitForStatus(server, connected.token, prResult.run_ids[0], [
      "planned_and_finished",
      "errored",
    ]);
    assert.is(
      speculative.attributes.status,
      "planned_and_finished",
      await readLog(server, connected.token, speculative.id, "plan"),
    );
    assert.is(speculative.attributes.kind, "speculative");
    const prCheck = await eventually("the pull request's check run", () =>
      double.checkRuns.find((c) => c.body.external_id === speculative.id),
    );
    await eventually("success on the pull request", () => double.statesOf(prCheck.id).at(-1) === "completed:success");
    assert.is(prCheck.body.head_sha, head);
  },
  { runner: true, githubWorker: true, config: { github: double.config() } },
);

github.run();
