import { createHmac, randomUUID } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { firstError, jsonOf, type V1 } from "../support/documents.ts";
import { countRows } from "../support/database.ts";
import { createOrganizationWithToken, createToken, createWorkspace } from "../support/factories.ts";
import { GitHubDouble } from "../support/github-double.ts";
import { connectWorkspace, deliver } from "../support/github.ts";
import { testEachServer } from "../support/test-server.ts";
import { auditOf, githubServerOptions, PIPELINE_TABLES, sourceOf } from "../support/github-source.ts";

// The GitHub App pipeline against a local GitHub API double (no runner: runs stay pending): source
// connections and the webhook intake; pushes are github-push-runs.test.ts, pull requests and
// installations github-pull-requests.test.ts. The end-to-end case with real tofu is in
// test/lifecycle/github-push.test.ts.

// Started before the first suite and stopped after the last (uvu's -r tsx hook has no top-level await).
const double = new GitHubDouble();
const GITHUB = githubServerOptions(double);

// ---------------------------------------------------------------------------------------------
const source = suite("workspace source connection");
source.before(async () => {
  await double.start();
});

testEachServer(
  source,
  "without the GitHub variables the pipeline is off: the source document says so and the webhook answers 503, writing nothing",
  async (server) => {
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
    assert.is(firstError(body).code, "GITHUB_APP_NOT_CONFIGURED");
    assert.equal(await countRows(server, ["github_deliveries", ...PIPELINE_TABLES]), before);
  },
);

testEachServer(
  source,
  "PUT/GET/DELETE: the connection with the workspace's branch and directory, workspace:write to change, schema refusals write nothing",
  async (server) => {
    const connected = await connectWorkspace(server, double, {
      workingDirectory: "infra/",
      triggerPaths: ["modules/**", "modules/**"],
      trackedBranch: "release",
    });
    const read = await sourceOf(server, connected.workspaceId, connected.token);
    assert.is(read.status, 200);
    const attributes = read.body.data!.attributes;
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
    const workspace = await jsonOf<V1["WorkspaceDocument"]>(
      await fetch(`${server.baseUrl}/v1/workspaces/${connected.workspaceId}`, {
        headers: { Authorization: `Bearer ${connected.token}` },
      }),
    );
    assert.is(workspace.data.attributes.tracked_branch, "release");
    assert.is(workspace.data.attributes.working_directory, "infra");

    const put = (token: string, attributes: Record<string, unknown>) =>
      fetch(`${server.baseUrl}/v1/workspaces/${connected.workspaceId}/source`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({ data: { type: "source-connections", attributes } }),
      });
    const { token: viewer } = await createToken(server, server.bootstrapToken, connected.organizationName, "viewer");
    const { token: operator } = await createToken(
      server,
      server.bootstrapToken,
      connected.organizationName,
      "operator",
    );
    const before = await countRows(server, ["source_connections", "audit_events"]);
    assert.is((await put(viewer, { installation_id: 1, repository: "a/b" })).status, 403);
    // Only an organization administrator connects, changes or removes a connection.
    const byOperator = await put(operator, {
      installation_id: connected.installationId,
      repository: connected.repository,
    });
    assert.is(byOperator.status, 403);
    for (const bad of [
      { installation_id: 0, repository: "a/b" },
      { installation_id: 1, repository: "not-a-repo" },
      { installation_id: 1, repository: "a/b", working_directory: "../up" },
      { installation_id: 1, repository: "a/b", trigger_paths: ["/abs/**"] },
      { installation_id: "1", repository: "a/b" },
      // The trigger path bounds: at most 20 globs, each at most 200 characters.
      {
        installation_id: connected.installationId,
        repository: connected.repository,
        trigger_paths: Array.from({ length: 21 }, (_, i) => `m${i}/**`),
      },
      {
        installation_id: connected.installationId,
        repository: connected.repository,
        trigger_paths: [`${"a".repeat(199)}/*`, "x"],
      },
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
    assert.is(atBounds[0].length, 200);
    const bounded = await put(connected.token, {
      installation_id: connected.installationId,
      repository: connected.repository,
      trigger_paths: atBounds,
    });
    assert.is(bounded.status, 200, await bounded.clone().text());
    assert.equal((await jsonOf<V1["SourceConnectionDocument"]>(bounded)).data!.attributes.trigger_paths, atBounds);
    const byOperatorDelete = await fetch(`${server.baseUrl}/v1/workspaces/${connected.workspaceId}/source`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${operator}` },
    });
    assert.is(byOperatorDelete.status, 403);

    const del = (token: string) =>
      fetch(`${server.baseUrl}/v1/workspaces/${connected.workspaceId}/source`, {
        method: "DELETE",
        headers: { Authorization: `Bearer ${token}` },
      });
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
    assert.is(firstError(missing.body).code, "GITHUB_WEBHOOK_SIGNATURE_INVALID");
    const wrong = await deliver(server, double, "ping", ping, { signature: `sha256=${"0".repeat(64)}` });
    assert.is(wrong.response.status, 401);
    // Signed for another body: the bytes are what is verified.
    const tampered = await deliver(server, double, "ping", ping, {
      signature: await double.sign(JSON.stringify({ ...ping, zen: "x" })),
    });
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
    assert.is(firstError(over.body).code, "GITHUB_WEBHOOK_TOO_LARGE");
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
    assert.is(firstError(badId.body).code, "GITHUB_WEBHOOK_INVALID");
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
        headers: {
          "Content-Type": "application/json",
          "X-GitHub-Event": "ping",
          "X-GitHub-Delivery": randomUUID(),
          "X-Hub-Signature-256": signature,
        },
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
    assert.is(firstError(await attack.json()).code, "GITHUB_WEBHOOK_SIGNATURE_INVALID");
    // Bytes that are not UTF-8, even when signed over exactly, are refused once verified.
    const invalid = await post(
      tampered,
      `sha256=${createHmac("sha256", double.webhookSecret).update(tampered).digest("hex")}`,
    );
    assert.is(invalid.status, 400);
    assert.is(firstError(await invalid.json()).code, "GITHUB_WEBHOOK_INVALID");
    assert.equal(await countRows(server, tables), before);
    // The signed bytes themselves are accepted.
    const genuine = await post(signed, signature);
    assert.is(genuine.status, 202);
  },
  GITHUB,
);

// ---------------------------------------------------------------------------------------------
webhook.after(() => double.stop());

source.run();
webhook.run();
