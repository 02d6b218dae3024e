import { createHmac, randomUUID } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createOrganizationWithToken, createToken, createWorkspace, countRows } from "../support/factories.ts";
import { GitHubDouble } from "../support/github-double.ts";
import { commitTarball, connectWorkspace, deliver, eventually, newInstallationId, newSha, pushPayload, settled } from "../support/github.ts";
import { buildTarGz } from "../../src/github/tarball.ts";
import { testEachServer } from "../support/test-server.ts";
import { auditOf, githubServerOptions, MAIN_TF, PIPELINE_TABLES, runOf, sourceOf, TARBALL_LIMIT } from "../support/github-source.ts";

// The GitHub App pipeline against a local GitHub API double (no runner: runs stay pending, which
// is what the queue-related cases need): source connections, the webhook intake and pushes; pull
// requests and installations are github-pull-requests.test.ts. The end-to-end case with real tofu
// is in test/lifecycle/github-push.test.ts.

// Started before the first suite and stopped after the last (uvu's -r tsx hook has no top-level await).
const double = new GitHubDouble();
const GITHUB = githubServerOptions(double);

// ---------------------------------------------------------------------------------------------
const source = suite("workspace source connection");
source.before(async () => {
  await double.start();
});

testEachServer(source, "without the GitHub variables the pipeline is off: the source document says so and the webhook answers 503, writing nothing", async (server) => {
  const { token, organizationName } = await createOrganizationWithToken(server, "nogh", "admin");
  const workspace = await createWorkspace(server, token, organizationName);
  const read = await sourceOf(server, workspace.id, token);
  assert.is(read.status, 200);
  assert.is(read.body.data, null);
  assert.is(read.body.meta.pipeline.state, "off");
  assert.match(read.body.meta.pipeline.detail, "STACKSHIP_GITHUB_APP_ID");
  assert.match(read.body.meta.pipeline.detail, "STACKSHIP_GITHUB_WEBHOOK_SECRET");
  assert.equal(read.body.meta.deliveries, []);
  const before = await countRows(server, ["github_deliveries", ...PIPELINE_TABLES]);
  const { response, body } = await deliver(server, double, "ping", { zen: "hi" });
  assert.is(response.status, 503);
  assert.is(body.errors[0].code, "GITHUB_APP_NOT_CONFIGURED");
  assert.equal(await countRows(server, ["github_deliveries", ...PIPELINE_TABLES]), before);
});

testEachServer(
  source,
  "PUT/GET/DELETE: the connection with the workspace's branch and directory, workspace:write to change, schema refusals write nothing",
  async (server) => {
    const connected = await connectWorkspace(server, double, { workingDirectory: "infra/", triggerPaths: ["modules/**", "modules/**"], trackedBranch: "release" });
    const read = await sourceOf(server, connected.workspaceId, connected.token);
    assert.is(read.status, 200);
    const attributes = read.body.data.attributes;
    assert.equal(
      { ...attributes, created_at: undefined, updated_at: undefined },
      {
        provider: "github",
        installation_id: connected.installationId,
        repository: connected.repository,
        tracked_branch: "release",
        working_directory: "infra",
        trigger_paths: ["modules/**"],
        repository_access: "unknown",
        created_at: undefined,
        updated_at: undefined,
      },
    );
    assert.is(read.body.meta.pipeline.state, "on");
    assert.is(read.body.meta.pipeline.webhook_url, `${server.baseUrl}/v1/github/webhooks`);
    // The workspace shows the same branch and directory.
    const workspace = (await (await fetch(`${server.baseUrl}/v1/workspaces/${connected.workspaceId}`, { headers: { Authorization: `Bearer ${connected.token}` } })).json()) as any;
    assert.is(workspace.data.attributes.tracked_branch, "release");
    assert.is(workspace.data.attributes.working_directory, "infra");

    const put = (token: string, attributes: Record<string, unknown>) =>
      fetch(`${server.baseUrl}/v1/workspaces/${connected.workspaceId}/source`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({ data: { type: "source-connections", attributes } }),
      });
    const { token: viewer } = await createToken(server, server.bootstrapToken, connected.organizationName, "viewer");
    const { token: operator } = await createToken(server, server.bootstrapToken, connected.organizationName, "operator");
    const before = await countRows(server, ["source_connections", "audit_events"]);
    assert.is((await put(viewer, { installation_id: 1, repository: "a/b" })).status, 403);
    // Only an organization administrator connects, changes or removes a connection.
    const byOperator = await put(operator, { installation_id: connected.installationId, repository: connected.repository });
    assert.is(byOperator.status, 403);
    for (const bad of [
      { installation_id: 0, repository: "a/b" },
      { installation_id: 1, repository: "not-a-repo" },
      { installation_id: 1, repository: "a/b", working_directory: "../up" },
      { installation_id: 1, repository: "a/b", trigger_paths: ["/abs/**"] },
      { installation_id: "1", repository: "a/b" },
      // The trigger path bounds: at most 20 globs, each at most 200 characters.
      { installation_id: connected.installationId, repository: connected.repository, trigger_paths: Array.from({ length: 21 }, (_, i) => `m${i}/**`) },
      { installation_id: connected.installationId, repository: connected.repository, trigger_paths: [`${"a".repeat(199)}/*`, "x"] },
    ]) {
      const response = await put(connected.token, bad);
      assert.is(response.status, 422, JSON.stringify(bad));
    }
    assert.equal(await countRows(server, ["source_connections", "audit_events"]), before);
    const asViewer = await sourceOf(server, connected.workspaceId, viewer);
    assert.is(asViewer.status, 200, "a viewer reads it");
    // The App id and the API URL are for administrators only.
    assert.equal([asViewer.body.meta.pipeline.app_id, asViewer.body.meta.pipeline.api_url], [null, null]);
    assert.not.match(asViewer.body.meta.pipeline.detail, double.appId);
    assert.not.match(asViewer.body.meta.pipeline.detail, double.url);
    assert.equal([read.body.meta.pipeline.app_id, read.body.meta.pipeline.api_url], [double.appId, double.url]);
    assert.match(read.body.meta.pipeline.detail, double.appId);
    // Exactly at the bounds is accepted.
    const atBounds = [`${"a".repeat(198)}/*`, ...Array.from({ length: 19 }, (_, i) => `m${i}/**`)];
    assert.is(atBounds[0]!.length, 200);
    const bounded = await put(connected.token, { installation_id: connected.installationId, repository: connected.repository, trigger_paths: atBounds });
    assert.is(bounded.status, 200, await bounded.clone().text());
    assert.equal(((await bounded.json()) as any).data.attributes.trigger_paths, atBounds);
    const byOperatorDelete = await fetch(`${server.baseUrl}/v1/workspaces/${connected.workspaceId}/source`, { method: "DELETE", headers: { Authorization: `Bearer ${operator}` } });
    assert.is(byOperatorDelete.status, 403);

    const del = (token: string) => fetch(`${server.baseUrl}/v1/workspaces/${connected.workspaceId}/source`, { method: "DELETE", headers: { Authorization: `Bearer ${token}` } });
    assert.is((await del(viewer)).status, 403);
    assert.is((await del(connected.token)).status, 204);
    assert.is((await sourceOf(server, connected.workspaceId, connected.token)).body.data, null);
    assert.is((await del(connected.token)).status, 404);
    const actions = (await auditOf(server, connected.workspaceId)).map((e) => e.action);
    assert.equal(
      actions.filter((a) => a.startsWith("source_connection.")),
      ["source_connection.created", "source_connection.updated", "source_connection.deleted"],
    );
  },
  GITHUB,
);

// ---------------------------------------------------------------------------------------------
const webhook = suite("GitHub webhook intake");

testEachServer(
  webhook,
  "missing or wrong signature is 401, a body over 5 MiB is 413: nothing written but the audit; exactly 5 MiB is accepted; a redelivery is 200 and creates nothing",
  async (server) => {
    const tables = ["github_deliveries", ...PIPELINE_TABLES];
    const ping = { zen: "Keep it logically awesome.", hook_id: 1 };
    let before = await countRows(server, tables);
    const missing = await deliver(server, double, "ping", ping, { signature: null });
    assert.is(missing.response.status, 401);
    assert.is(missing.body.errors[0].code, "GITHUB_WEBHOOK_SIGNATURE_INVALID");
    const wrong = await deliver(server, double, "ping", ping, { signature: `sha256=${"0".repeat(64)}` });
    assert.is(wrong.response.status, 401);
    // Signed for another body: the bytes are what is verified.
    const tampered = await deliver(server, double, "ping", ping, { signature: await double.sign(JSON.stringify({ ...ping, zen: "x" })) });
    assert.is(tampered.response.status, 401);
    assert.equal(await countRows(server, tables), before);
    assert.equal(
      (await auditOf(server, missing.deliveryId)).map((e) => [e.action, e.reason]),
      [["github.webhook.refused", "signature_missing"]],
    );
    assert.equal(
      (await auditOf(server, wrong.deliveryId)).map((e) => [e.action, e.reason]),
      [["github.webhook.refused", "signature_invalid"]],
    );

    const LIMIT = 5 * 1024 * 1024;
    const padded = (size: number) => {
      const head = JSON.stringify(ping);
      return head.slice(0, -1) + " ".repeat(size - head.length) + "}";
    };
    const exact = await deliver(server, double, "ping", null, { raw: padded(LIMIT) });
    assert.is(exact.response.status, 202, JSON.stringify(exact.body));
    assert.is(exact.body.data.attributes.status, "processed");
    assert.is(exact.body.data.attributes.outcome, "pong");
    before = await countRows(server, tables);
    const over = await deliver(server, double, "ping", null, { raw: padded(LIMIT + 1) });
    assert.is(over.response.status, 413);
    assert.is(over.body.errors[0].code, "GITHUB_WEBHOOK_TOO_LARGE");
    assert.equal(await countRows(server, tables), before);
    assert.equal(
      (await auditOf(server, over.deliveryId)).map((e) => [e.action, e.reason]),
      [["github.webhook.refused", "body_too_large"]],
    );

    const again = await deliver(server, double, "ping", null, { raw: padded(LIMIT), deliveryId: exact.deliveryId });
    assert.is(again.response.status, 200);
    assert.equal(again.body.data, exact.body.data);
    assert.equal(await countRows(server, tables), before);
    assert.ok((await auditOf(server, exact.deliveryId)).some((e) => e.action === "github.delivery.replayed"));

    before = await countRows(server, tables);
    const badId = await deliver(server, double, "ping", ping, { deliveryId: "x".repeat(101) });
    assert.is(badId.response.status, 400);
    assert.is(badId.body.errors[0].code, "GITHUB_WEBHOOK_INVALID");
    assert.equal(await countRows(server, tables), before);

    const unknown = await deliver(server, double, "star", { action: "created" });
    assert.is(unknown.response.status, 202);
    assert.is(unknown.body.data.attributes.status, "ignored");
  },
  GITHUB,
);

testEachServer(
  webhook,
  "the signature covers the bytes as received: a body whose bytes differ from the signed ones only where they decode alike is 401, nothing written",
  async (server) => {
    const tables = ["github_deliveries", ...PIPELINE_TABLES];
    const post = (bytes: Buffer, signature: string) =>
      fetch(`${server.baseUrl}/v1/github/webhooks`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-GitHub-Event": "ping", "X-GitHub-Delivery": randomUUID(), "X-Hub-Signature-256": signature },
        body: new Uint8Array(bytes),
      });
    // GitHub signed a body holding U+FFFD (EF BF BD); the attacker sends 0xFF in its place, which
    // a lenient decoder reads as the same U+FFFD.
    const signed = Buffer.from('{"zen":"\uFFFD","hook_id":1}', "utf8");
    const tampered = Buffer.concat([Buffer.from('{"zen":"'), Buffer.from([0xff]), Buffer.from('","hook_id":1}')]);
    const signature = `sha256=${createHmac("sha256", double.webhookSecret).update(signed).digest("hex")}`;
    const before = await countRows(server, tables);
    const attack = await post(tampered, signature);
    assert.is(attack.status, 401);
    assert.is(((await attack.json()) as any).errors[0].code, "GITHUB_WEBHOOK_SIGNATURE_INVALID");
    // Bytes that are not UTF-8, even when signed over exactly, are refused once verified.
    const invalid = await post(tampered, `sha256=${createHmac("sha256", double.webhookSecret).update(tampered).digest("hex")}`);
    assert.is(invalid.status, 400);
    assert.is(((await invalid.json()) as any).errors[0].code, "GITHUB_WEBHOOK_INVALID");
    assert.equal(await countRows(server, tables), before);
    // The signed bytes themselves are accepted.
    const genuine = await post(signed, signature);
    assert.is(genuine.status, 202);
  },
  GITHUB,
);

// ---------------------------------------------------------------------------------------------
const push = suite("push → plan_and_apply run");

testEachServer(
  push,
  "replay: a captured push body re-sent with a new X-GitHub-Delivery creates nothing; an older push arriving after a newer one is refused",
  async (server) => {
    const connected = await connectWorkspace(server, double);
    const sha = newSha();
    double.setTarball(connected.repository, sha, await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }));
    const captured = pushPayload(connected.repository, connected.installationId, sha);
    captured.repository.pushed_at = 1_700_000_100;
    const first = await settled(server, (await deliver(server, double, "push", captured)).deliveryId);
    assert.equal([first.status, first.outcome, first.run_ids.length], ["processed", "run_created", 1]);
    const before = await countRows(server, PIPELINE_TABLES);
    const replay = await deliver(server, double, "push", captured);
    assert.is(replay.response.status, 202, "a new delivery id is a new delivery");
    assert.equal(await settled(server, replay.deliveryId).then((r) => [r.status, r.outcome, r.run_ids]), ["ignored", "replayed", []]);
    assert.equal(await countRows(server, PIPELINE_TABLES), before, "the replay created nothing");

    // A push older than the newest one this workspace ran (GitHub's signed pushed_at) is refused.
    const older = newSha();
    double.setTarball(connected.repository, older, await commitTarball(connected.repository, older, { "main.tf": MAIN_TF }));
    const stale = pushPayload(connected.repository, connected.installationId, older);
    stale.repository.pushed_at = 1_700_000_000;
    const refused = await settled(server, (await deliver(server, double, "push", stale)).deliveryId);
    assert.equal([refused.status, refused.outcome], ["refused", "push_outdated"], JSON.stringify(refused));
    assert.equal(await countRows(server, PIPELINE_TABLES), before);
    // A newer one runs.
    const newer = newSha();
    double.setTarball(connected.repository, newer, await commitTarball(connected.repository, newer, { "main.tf": MAIN_TF }));
    const fresh = pushPayload(connected.repository, connected.installationId, newer);
    fresh.repository.pushed_at = 1_700_000_200;
    assert.equal(await settled(server, (await deliver(server, double, "push", fresh)).deliveryId).then((r) => [r.status, r.outcome]), ["processed", "run_created"]);
  },
  GITHUB,
);

testEachServer(
  push,
  "a pathological trigger path (twelve **/ then x) against a deep changed path is matched right while /healthz keeps answering",
  async (server) => {
    const connected = await connectWorkspace(server, double, { workingDirectory: "infra", triggerPaths: [`${"**/".repeat(12)}x`] });
    const deep = Array.from({ length: 40 }, (_, i) => `d${i}`).join("/");
    const sha = newSha();
    double.setTarball(connected.repository, sha, await commitTarball(connected.repository, sha, { "infra/main.tf": MAIN_TF, [`${deep}/x`]: "x\n" }));
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
        (await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha, { changed: [`${deep}/y`] }))).deliveryId,
      );
      assert.equal([miss.status, miss.outcome], ["ignored", "no_relevant_changes"]);
      const hit = await settled(
        server,
        (await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha, { changed: [`${deep}/x`] }))).deliveryId,
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
        [(url: string) => url.replace("://127.0.0.1:", "://localhost:"), "another host (the same server by another name)"],
        [(url: string) => url.replace("http://", "https://"), "another scheme"],
        [(url: string) => url.replace(/:(\d+)\//, (_, port) => `:${Number(port) + 1}/`), "another port"],
      ] as const) {
        const sha = newSha();
        double.setTarball(connected.repository, sha, await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }));
        double.tarballRedirect = rewrite;
        const downloadsBefore = double.requests.filter((r) => r.includes("/_codeload/")).length;
        const before = await countRows(server, PIPELINE_TABLES);
        const result = await settled(server, (await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha))).deliveryId);
        assert.equal([result.status, result.outcome], ["refused", "tarball_redirect_refused"], `${label}: ${JSON.stringify(result)}`);
        assert.is(double.requests.filter((r) => r.includes("/_codeload/")).length, downloadsBefore, `${label}: nothing was downloaded`);
        assert.equal(await countRows(server, PIPELINE_TABLES), before);
      }
    } finally {
      double.tarballRedirect = null;
    }
    const sha = newSha();
    double.setTarball(connected.repository, sha, await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }));
    assert.is((await settled(server, (await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha))).deliveryId)).status, "processed");
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
    double.setTarball(connected.repository, sha, await commitTarball(connected.repository, sha, { "infra/main.tf": MAIN_TF, "README.md": "# infra\n" }));
    const payload = pushPayload(connected.repository, connected.installationId, sha, { changed: ["infra/main.tf"], message: "Add the greeting\n\nWith a body." });
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

    const review = ((await (await fetch(`${server.baseUrl}/v1/runs/${run.id}/review`, { headers: { Authorization: `Bearer ${connected.token}` } })).json()) as any).data.attributes
      .header;
    assert.is(review.title, `GitHub ${sha}`);
    assert.is(review.title_generated, true);
    assert.equal(review.commit_sha, { state: "recorded", value: sha });
    // The double stands where a GitHub Enterprise Server would: the commit page is on its host.
    assert.equal(review.commit_url, { state: "recorded", value: `${double.url.replace(/\/+$/, "")}/${connected.repository}/commit/${sha}` });
    assert.equal(review.commit_message, { state: "recorded", value: "Add the greeting\n\nWith a body." });
    assert.equal(review.commit_author, { state: "recorded", value: "octocat" });
    assert.equal(review.source_ref, { state: "recorded", value: "refs/heads/main" });
    assert.equal(review.working_directory, { state: "recorded", value: "infra" });
    assert.is(review.source, "github_push");

    // The configuration is the commit's tree without GitHub's top-level folder.
    const cv = await server.db.knex("configuration_versions").where({ id: run.relationships.configuration_version.data.id }).first();
    assert.is(cv.source, "github");
    assert.is(cv.status, "uploaded");

    const check = await eventually("the check run", () => double.checkRuns.find((c) => c.body.external_id === run.id));
    assert.is(check.method, "POST");
    assert.is(check.body.head_sha, sha);
    assert.is(check.body.status, "queued");
    assert.is(check.body.details_url, `http://127.0.0.1:8080/runs/${run.id}`);
    assert.match(check.body.output.summary, "plan not finished");
    assert.not.ok(double.downloadSawAuthorization, "the token is never sent to the download host");

    const doc = await sourceOf(server, connected.workspaceId, connected.token);
    assert.equal(
      doc.body.meta.deliveries.map((d: any) => [d.id, d.attributes.status, d.attributes.outcome, d.attributes.run_ids]),
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
    const connected = await connectWorkspace(server, double, { workingDirectory: "infra", triggerPaths: ["modules/**"] });
    double.installations.set(connected.installationId, [connected.repository]);
    const sha = newSha();
    double.setTarball(connected.repository, sha, await commitTarball(connected.repository, sha, { "infra/main.tf": MAIN_TF, "modules/x/main.tf": "# x\n" }));
    const before = await countRows(server, PIPELINE_TABLES);
    const readme = await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha, { changed: ["README.md", "infra2/main.tf"] }));
    assert.equal(await settled(server, readme.deliveryId).then((r) => [r.status, r.outcome]), ["ignored", "no_relevant_changes"]);
    const other = await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha, { branch: "feature", changed: ["infra/main.tf"] }));
    assert.equal(await settled(server, other.deliveryId).then((r) => [r.status, r.outcome]), ["ignored", "branch_not_tracked"]);
    assert.equal(await countRows(server, PIPELINE_TABLES), before);
    assert.equal(
      (await auditOf(server, other.deliveryId)).filter((e) => e.action !== "github.delivery.received").map((e) => [e.action, e.reason]),
      [["github.delivery.ignored", "branch_not_tracked"]],
    );
    // A trigger path outside the working directory does create one.
    const module = await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha, { changed: ["modules/x/main.tf"] }));
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
    const cases: Array<{ outcome: string; payload: (sha: string) => unknown; tarball?: (sha: string) => Promise<Buffer> }> = [
      { outcome: "installation_unknown", payload: (sha) => pushPayload(connected.repository, newInstallationId(), sha) },
      { outcome: "repository_not_connected", payload: (sha) => pushPayload("someone/else", connected.installationId, sha) },
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
      double.setTarball(connected.repository, sha, c.tarball ? await c.tarball(sha) : await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }));
      const before = await countRows(server, PIPELINE_TABLES);
      const sent = await deliver(server, double, "push", c.payload(sha));
      assert.is(sent.response.status, 202);
      const result = await settled(server, sent.deliveryId);
      assert.equal([result.status, result.outcome], ["refused", c.outcome], JSON.stringify(result));
      assert.equal(await countRows(server, PIPELINE_TABLES), before, `${c.outcome} wrote rows`);
      assert.equal(
        (await auditOf(server, sent.deliveryId)).filter((e) => e.action !== "github.delivery.received").map((e) => [e.action, e.reason]),
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
    double.setTarball(connected.repository, sha, await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }));
    double.down = true;
    try {
      const sent = await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha));
      assert.is(sent.response.status, 202);
      await eventually("a failed attempt", async () => (await auditOf(server, sent.deliveryId)).some((e) => e.action === "github.delivery.attempt_failed"));
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
    const app = await connectWorkspace(server, double, { workingDirectory: "app", repository: network.repository, installationId: network.installationId, organization: network });
    // Another organization cannot connect through this installation (nor reach the repository).
    const { token: otherToken, organizationName: other } = await createOrganizationWithToken(server, "intruder", "admin");
    const otherWorkspace = await createWorkspace(server, otherToken, other);
    const before = await countRows(server, ["source_connections", "audit_events"]);
    const refused = await fetch(`${server.baseUrl}/v1/workspaces/${otherWorkspace.id}/source`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${otherToken}`, "Content-Type": "application/vnd.api+json" },
      body: JSON.stringify({ data: { type: "source-connections", attributes: { installation_id: network.installationId, repository: network.repository } } }),
    });
    assert.is(refused.status, 422);
    assert.is(((await refused.json()) as any).errors[0].code, "SOURCE_INSTALLATION_NOT_BOUND");
    assert.equal(await countRows(server, ["source_connections", "audit_events"]), before);
    double.installations.set(network.installationId, [network.repository]);
    const sha = newSha();
    double.setTarball(network.repository, sha, await commitTarball(network.repository, sha, { "network/main.tf": MAIN_TF, "app/main.tf": MAIN_TF }));
    const one = await settled(
      server,
      (await deliver(server, double, "push", pushPayload(network.repository, network.installationId, sha, { changed: ["app/main.tf"] }))).deliveryId,
    );
    assert.is(one.run_ids.length, 1);
    assert.is((await server.db.knex("runs").where({ id: one.run_ids[0] }).first()).workspace_id, app.workspaceId);
    // The next commit (a push of the same head SHA again would be a replay).
    const next = newSha();
    double.setTarball(network.repository, next, await commitTarball(network.repository, next, { "network/main.tf": MAIN_TF, "app/main.tf": MAIN_TF }));
    const both = await settled(
      server,
      (await deliver(server, double, "push", pushPayload(network.repository, network.installationId, next, { changed: ["app/main.tf", "network/main.tf"] }))).deliveryId,
    );
    const workspaces = (await server.db.knex("runs").whereIn("id", both.run_ids).select("workspace_id")).map((r) => r.workspace_id).sort();
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
    double.setTarball(connected.repository, sha, await commitTarball(connected.repository, sha, { "main.tf": MAIN_TF }));
    double.checkRunsDown = true;
    try {
      const sent = await deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha));
      const result = await settled(server, sent.deliveryId);
      assert.is(result.status, "processed", "the delivery does not wait for the check run");
      const runId = result.run_ids[0];
      await eventually("the failed check run audit", async () => (await auditOf(server, runId)).some((e) => e.action === "github.check_run.failed"));
      const run = await runOf(server, connected.token, runId);
      assert.is(run.attributes.status, "pending");
      const record = await server.db.knex("github_check_runs").where({ run_id: runId }).first();
      assert.ok(Number(record.attempts) >= 1);
      assert.is(record.check_run_id, null);
      assert.match(record.last_error, "502");
      double.checkRunsDown = false;
      const created = await eventually("the check run once GitHub is back", () => double.checkRuns.find((c) => c.body.external_id === runId), 15_000);
      assert.is(created.body.status, "queued");
      assert.is((await runOf(server, connected.token, runId)).attributes.updated_at, run.attributes.updated_at, "the run itself never changed");
    } finally {
      double.checkRunsDown = false;
    }
  },
  GITHUB,
);

// ---------------------------------------------------------------------------------------------
push.after(() => double.stop());

source.run();
webhook.run();
push.run();
