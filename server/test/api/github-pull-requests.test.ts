import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { InputSnapshotRow, RunRow } from "../../src/store/rows.ts";
import { createVariable } from "../support/factories.ts";
import { GitHubDouble } from "../support/github-double.ts";
import {
  connectedRepository,
  connectWorkspace,
  deliver,
  newCommit,
  newInstallationId,
  newSha,
  pullRequestSettled,
  pushPayload,
  settled,
} from "../support/github.ts";
import { testEachServer } from "../support/test-server.ts";
import { auditOf, githubServerOptions, MAIN_TF, runOf, sourceOf } from "../support/github-source.ts";

// Pull requests and installations through the GitHub App pipeline, against a local GitHub API double
// (no runner: runs stay pending). The webhook intake is github-source.test.ts, pushes github-push-runs.test.ts.

/** What a github.run_created audit event records of a fork pull request's speculative run (the parts read here). */
interface ForkRunCreatedAuditData {
  fork: true;
  cloud_credentials: string;
  sensitive_variables: string;
}

const double = new GitHubDouble();
const GITHUB = githubServerOptions(double);

const pulls = suite("pull requests → speculative runs");
pulls.before(async () => {
  await double.start();
});

testEachServer(
  pulls,
  "a pull request plans speculatively; a newer push cancels the queued older run; closing cancels the queued one",
  async (server) => {
    const connected = await connectedRepository(server, double);
    const first = await newCommit(double, connected.repository, { "main.tf": MAIN_TF });
    const second = await newCommit(double, connected.repository, { "main.tf": MAIN_TF });
    const one = await pullRequestSettled(server, double, connected, "opened", { number: 7, headSha: first });
    assert.is(one.status, "processed", JSON.stringify(one));
    const older = await runOf(server, connected.token, one.run_ids[0]);
    assert.is(older.attributes.kind, "speculative");
    assert.is(older.attributes.source, "github_pull_request");
    assert.equal(older.attributes.commit, {
      sha: first,
      message: "Change #7",
      author: older.attributes.commit!.author,
      ref: "refs/pull/7/head",
      repository: connected.repository,
      fork: false,
    });

    // Replay: the same signed body under a new X-GitHub-Delivery creates nothing (number and head SHA ran already).
    const replayed = await pullRequestSettled(server, double, connected, "opened", { number: 7, headSha: first });
    assert.equal([replayed.status, replayed.outcome, replayed.run_ids], ["ignored", "replayed", []]);
    assert.is(
      (await runOf(server, connected.token, older.id)).attributes.status,
      "pending",
      "the replay did not supersede the run",
    );

    const two = await pullRequestSettled(server, double, connected, "synchronize", { number: 7, headSha: second });
    assert.is((await runOf(server, connected.token, older.id)).attributes.status, "canceled");
    const newer = await runOf(server, connected.token, two.run_ids[0]);
    assert.is(newer.attributes.status, "pending");
    assert.is(newer.attributes.commit!.sha, second);

    // A pull request targeting another branch plans nothing.
    const elsewhere = await pullRequestSettled(server, double, connected, "opened", {
      number: 8,
      headSha: first,
      base: "develop",
    });
    assert.equal([elsewhere.status, elsewhere.outcome], ["ignored", "branch_not_tracked"]);

    const three = await pullRequestSettled(server, double, connected, "closed", { number: 7, headSha: second });
    assert.equal([three.outcome, three.run_ids], ["pull_request_closed", [newer.id]]);
    assert.is((await runOf(server, connected.token, newer.id)).attributes.status, "canceled");
  },
  GITHUB,
);

testEachServer(
  pulls,
  "a fork pull request gets a speculative run marked fork, with no sensitive value in its snapshot and its record saying why",
  async (server) => {
    const connected = await connectedRepository(server, double);
    const canary = `canary-${newSha()}`;
    await createVariable(server, connected.token, connected.workspaceId, {
      key: "db_password",
      value: canary,
      sensitive: true,
    });
    await createVariable(server, connected.token, connected.workspaceId, {
      key: "AWS_SECRET_ACCESS_KEY",
      value: `${canary}-env`,
      sensitive: true,
      category: "env",
    });
    const sha = await newCommit(double, connected.repository, { "main.tf": MAIN_TF });
    const result = await pullRequestSettled(server, double, connected, "opened", {
      number: 9,
      headSha: sha,
      headRepository: "mallory/infra",
    });
    assert.is(result.status, "processed", JSON.stringify(result));
    const run = await runOf(server, connected.token, result.run_ids[0]);
    assert.is(run.attributes.kind, "speculative");
    assert.is(run.attributes.commit!.fork, true);
    assert.is(run.attributes.commit!.repository, "mallory/infra");
    const snapshot = (await server.db
      .knex<InputSnapshotRow>("input_snapshots")
      .where({ id: (await server.db.knex<RunRow>("runs").where({ id: run.id }).first())!.input_snapshot_id })
      .first())!;
    assert.not.match(snapshot.document, canary);
    assert.not.match(snapshot.document, "db_password");
    assert.not.match(snapshot.document, "AWS_SECRET_ACCESS_KEY");
    assert.not.match(JSON.stringify(snapshot.document), "value_handle");
    const created = (await auditOf(server, run.id)).find((e) => e.action === "github.run_created")!;
    const data = JSON.parse(created.data) as ForkRunCreatedAuditData;
    assert.is(data.fork, true);
    assert.match(data.cloud_credentials, "withheld");
    assert.match(data.sensitive_variables, "omitted");
  },
  GITHUB,
);

// ---------------------------------------------------------------------------------------------
const installations = suite("installations");
installations.after(() => double.stop());

testEachServer(
  installations,
  "installation and installation_repositories events say which repositories the App can see (the source document's repository_access)",
  async (server) => {
    const installationId = newInstallationId();
    const connected = await connectWorkspace(server, double, { installationId });
    const created = (await import("../support/github-double.ts")).webhookExample(
      "installation",
      (p) => p.action === "created",
    );
    created.installation.id = installationId;
    created.installation.repository_selection = "selected";
    created.repositories = [{ ...created.repositories![0], full_name: connected.repository }];
    assert.is(
      (await settled(server, (await deliver(server, double, "installation", created)).deliveryId)).status,
      "processed",
    );
    assert.is(
      (await sourceOf(server, connected.workspaceId, connected.token)).body.data!.attributes.repository_access,
      "granted",
    );
    const removed = (await import("../support/github-double.ts")).webhookExample(
      "installation_repositories",
      (p) => p.action === "removed",
    );
    removed.installation.id = installationId;
    removed.repository_selection = "selected";
    removed.repositories_removed = [{ ...removed.repositories_removed[0], full_name: connected.repository }];
    removed.repositories_added = [];
    assert.is(
      (await settled(server, (await deliver(server, double, "installation_repositories", removed)).deliveryId)).status,
      "processed",
    );
    assert.is(
      (await sourceOf(server, connected.workspaceId, connected.token)).body.data!.attributes.repository_access,
      "not_granted",
    );
    const notGranted = await deliver(
      server,
      double,
      "push",
      pushPayload(connected.repository, installationId, newSha()),
    );
    assert.equal(await settled(server, notGranted.deliveryId).then((r) => [r.status, r.outcome]), [
      "refused",
      "repository_not_granted",
    ]);
    const deleted = (await import("../support/github-double.ts")).webhookExample(
      "installation",
      (p) => p.action === "deleted",
    );
    deleted.installation.id = installationId;
    assert.is(
      (await settled(server, (await deliver(server, double, "installation", deleted)).deliveryId)).status,
      "processed",
    );
    // A push through an uninstalled installation is refused.
    const sha = newSha();
    const refused = await deliver(server, double, "push", pushPayload(connected.repository, installationId, sha));
    assert.equal(await settled(server, refused.deliveryId).then((r) => [r.status, r.outcome]), [
      "refused",
      "installation_unknown",
    ]);
  },
  GITHUB,
);

pulls.run();
installations.run();
