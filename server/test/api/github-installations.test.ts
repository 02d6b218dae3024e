import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { RunRow } from "../../src/store/rows.ts";
import { firstError, jsonOf, type V1 } from "../support/documents.ts";
import { countRows } from "../support/database.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { GitHubDouble } from "../support/github-double.ts";
import {
  bindInstallation,
  connectWorkspace,
  deliver,
  newCommit,
  newInstallationId,
  newRepository,
  pushPayload,
  settled,
} from "../support/github.ts";
import { auditOf, githubServerOptions, MAIN_TF, sourceOf } from "../support/github-source.ts";
import { signedInMember, type TestSession } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

// Who owns a GitHub App installation (issue 33, parts 1 and 2): the setup flow binds one to an
// organization (a single-use state issued to an organization admin's session, an installation
// GitHub confirms was created after it), a bare id is refused to anyone but a deployment
// administrator, a connection needs an installation bound to its organization that GitHub says
// can access the repository, and another organization never reaches a bound installation's
// repositories, runs or deliveries. The GitHub API double answers GET /app/installations/{id} and
// GET /installation/repositories as GitHub does.

const double = new GitHubDouble();
const GITHUB = githubServerOptions(double);
const BINDING_TABLES = ["github_installation_bindings", "source_connections"] as const;

/** A github_installation_bindings row (the columns read here). */
interface BindingRow {
  installation_id: number | string;
  bound_by: string;
}

const test = suite("GitHub installation binding");
test.before(async () => {
  await double.start();
});
test.after(() => double.stop());

function putSource(server: TestServer, token: string, workspaceId: string, attributes: Record<string, unknown>) {
  return fetch(`${server.baseUrl}/v1/workspaces/${workspaceId}/source`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({ data: { type: "source-connections", attributes } }),
  });
}

async function issueState(session: TestSession, organizationName: string): Promise<string> {
  const response = await session.request("POST", `/v1/organizations/${organizationName}/github-installation-states`);
  assert.is(response.status, 201, await response.clone().text());
  return (await jsonOf<V1["GitHubInstallationStateDocument"]>(response)).data.attributes.state;
}

function bindWithState(session: TestSession, installationId: number, state: string) {
  return session.request("POST", "/v1/github/installations", {
    body: {
      data: {
        type: "github-installations",
        attributes: { installation_id: installationId, state, setup_action: "install" },
      },
    },
  });
}

async function errorCode(response: Response): Promise<string | undefined> {
  return firstError(await response.json()).code;
}

testEachServer(
  test,
  "the setup flow binds an installation GitHub confirms to the admin's organization; the state is single use and only for its session; then the admin connects",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "setup", "admin");
    const admin = await signedInMember(server, organizationName, "admin");
    const installationId = newInstallationId();
    const repository = newRepository();
    double.installations.set(installationId, [repository]);

    // An operator may not start the setup; an organization admin may.
    const operator = await signedInMember(server, organizationName, "operator");
    assert.is(
      (await operator.session.request("POST", `/v1/organizations/${organizationName}/github-installation-states`))
        .status,
      403,
    );
    const state = await issueState(admin.session, organizationName);
    const stored = await server.db.knex<Record<string, unknown>>("github_installation_states").first();
    assert.not.ok(JSON.stringify(stored).includes(state), "only the state's hash is stored");

    // Another session (even the same organization's other admin) cannot redeem it.
    const otherAdmin = await signedInMember(server, organizationName, "admin");
    let before = await countRows(server, BINDING_TABLES);
    const stolen = await bindWithState(otherAdmin.session, installationId, state);
    assert.is(stolen.status, 422);
    assert.is(await errorCode(stolen), "GITHUB_INSTALLATION_STATE_INVALID");
    assert.equal(await countRows(server, BINDING_TABLES), before);

    const requestsBefore = double.requests.length;
    const bound = await bindWithState(admin.session, installationId, state);
    assert.is(bound.status, 201, await bound.clone().text());
    const body = await jsonOf<V1["GitHubInstallationDocument"]>(bound);
    assert.equal(
      [body.data.attributes.installation_id, body.data.attributes.organization, body.data.attributes.account],
      [installationId, organizationName, repository.split("/")[0]],
    );
    assert.ok(
      double.requests.slice(requestsBefore).includes(`GET /app/installations/${installationId}`),
      "GitHub confirmed the installation",
    );
    assert.ok((await auditOf(server, String(installationId))).some((e) => e.action === "github.installation.bound"));

    // Single use.
    before = await countRows(server, BINDING_TABLES);
    const again = await bindWithState(admin.session, installationId, state);
    assert.is(again.status, 422);
    assert.is(await errorCode(again), "GITHUB_INSTALLATION_STATE_INVALID");
    assert.equal(await countRows(server, BINDING_TABLES), before);

    // The organization's admin connects a repository the installation can access, and not one it cannot.
    const workspace = await createWorkspace(server, token, organizationName);
    const hidden = await putSource(server, token, workspace.id, {
      installation_id: installationId,
      repository: newRepository(),
    });
    assert.is(hidden.status, 422);
    assert.is(await errorCode(hidden), "SOURCE_REPOSITORY_NOT_ACCESSIBLE");
    assert.equal(await countRows(server, BINDING_TABLES), before);
    const connected = await putSource(server, token, workspace.id, { installation_id: installationId, repository });
    assert.is(connected.status, 200, await connected.clone().text());
  },
  GITHUB,
);

let clockOffsetMs = 0;

testEachServer(
  test,
  "a setup state lives ten minutes: redeemed just before it expires it binds, just after it is refused",
  async (server) => {
    clockOffsetMs = 0;
    try {
      const { organizationName } = await createOrganizationWithToken(server, "expiry", "admin");
      const admin = await signedInMember(server, organizationName, "admin");
      const [early, late] = [newInstallationId(), newInstallationId()];
      for (const id of [early, late]) double.installations.set(id, [newRepository()]);
      const first = await issueState(admin.session, organizationName);
      const second = await issueState(admin.session, organizationName);
      clockOffsetMs = 10 * 60_000 - 1000;
      assert.is((await bindWithState(admin.session, early, first)).status, 201);
      clockOffsetMs = 10 * 60_000 + 1000;
      const before = await countRows(server, BINDING_TABLES);
      const expired = await bindWithState(admin.session, late, second);
      assert.is(expired.status, 422);
      assert.is(await errorCode(expired), "GITHUB_INSTALLATION_STATE_INVALID");
      assert.equal(await countRows(server, BINDING_TABLES), before);
    } finally {
      clockOffsetMs = 0;
    }
  },
  { ...GITHUB, clock: () => new Date(Date.now() + clockOffsetMs) },
);

testEachServer(
  test,
  "a bare installation id is refused to organization admins; an installation older than the state cannot be claimed; GitHub must know it",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "bare", "admin");
    const admin = await signedInMember(server, organizationName, "admin");
    const installationId = newInstallationId();
    double.installations.set(installationId, [newRepository()]);
    const before = await countRows(server, BINDING_TABLES);

    // An organization admin's token or session naming an id without a state: refused.
    const byToken = await fetch(`${server.baseUrl}/v1/github/installations`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
      body: JSON.stringify({
        data: {
          type: "github-installations",
          attributes: { installation_id: installationId, organization: organizationName },
        },
      }),
    });
    assert.is(byToken.status, 403);
    assert.is(await errorCode(byToken), "GITHUB_INSTALLATION_SETUP_REQUIRED");
    const bySession = await admin.session.request("POST", "/v1/github/installations", {
      body: { data: { type: "github-installations", attributes: { installation_id: installationId } } },
    });
    assert.is(bySession.status, 403);
    assert.is(await errorCode(bySession), "GITHUB_INSTALLATION_SETUP_REQUIRED");

    // Someone else's installation, created long before this setup began, cannot be claimed by quoting its id.
    double.installationCreatedAt.set(installationId, "2020-01-01T00:00:00Z");
    const old = await bindWithState(admin.session, installationId, await issueState(admin.session, organizationName));
    assert.is(old.status, 422);
    assert.is(await errorCode(old), "GITHUB_INSTALLATION_PREDATES_STATE");

    // An id GitHub does not know.
    const unknown = await bindWithState(
      admin.session,
      newInstallationId(),
      await issueState(admin.session, organizationName),
    );
    assert.is(unknown.status, 422);
    assert.is(await errorCode(unknown), "GITHUB_INSTALLATION_NOT_FOUND");
    assert.equal(await countRows(server, BINDING_TABLES), before, "nothing bound, nothing connected");

    // A deployment administrator may bind it (GitHub confirms it first).
    await bindInstallation(server, double, organizationName, installationId, []);
    assert.is(
      (await server.db
        .knex<BindingRow>("github_installation_bindings")
        .where({ installation_id: installationId })
        .first())!.bound_by,
      "prn-bootstrap0000000",
    );
  },
  GITHUB,
);

testEachServer(
  test,
  "attack: another organization's admin cannot connect to a bound installation, bind it or reach its pushes; the owner still connects; moving it needs a release",
  async (server) => {
    const victim = await connectWorkspace(server, double);
    const { token: attackerToken, organizationName: attackerOrg } = await createOrganizationWithToken(
      server,
      "attacker",
      "admin",
    );
    const attackerAdmin = await signedInMember(server, attackerOrg, "admin");
    const attackerWorkspace = await createWorkspace(server, attackerToken, attackerOrg);
    const tables = [...BINDING_TABLES, "runs"];

    // Connect a workspace to the victim's installation and repository: refused, nothing written.
    let before = await countRows(server, tables);
    const refused = await putSource(server, attackerToken, attackerWorkspace.id, {
      installation_id: victim.installationId,
      repository: victim.repository,
    });
    assert.is(refused.status, 422);
    assert.is(await errorCode(refused), "SOURCE_INSTALLATION_NOT_BOUND");
    // Bind it through the setup flow with the attacker's own state: refused.
    const claimed = await bindWithState(
      attackerAdmin.session,
      victim.installationId,
      await issueState(attackerAdmin.session, attackerOrg),
    );
    assert.is(claimed.status, 409);
    assert.is(await errorCode(claimed), "SOURCE_INSTALLATION_IN_USE");
    // Even a deployment administrator cannot move it while it is bound.
    const moved = await fetch(`${server.baseUrl}/v1/github/installations`, {
      method: "POST",
      headers: { Authorization: `Bearer ${server.bootstrapToken}`, "Content-Type": "application/vnd.api+json" },
      body: JSON.stringify({
        data: {
          type: "github-installations",
          attributes: { installation_id: victim.installationId, organization: attackerOrg },
        },
      }),
    });
    assert.is(moved.status, 409);
    assert.equal((await countRows(server, tables)).source_connections, before.source_connections);
    assert.equal((await countRows(server, tables)).github_installation_bindings, before.github_installation_bindings);
    assert.is((await sourceOf(server, attackerWorkspace.id, attackerToken)).body.data, null);

    // The victim still connects another workspace through it.
    const second = await createWorkspace(server, victim.token, victim.organizationName);
    assert.is(
      (
        await putSource(server, victim.token, second.id, {
          installation_id: victim.installationId,
          repository: victim.repository,
          working_directory: "app",
        })
      ).status,
      200,
    );

    // A connection row of the attacker's through the victim's installation (as the old code let
    // anyone write) still never gets a run: deliveries reach only the bound organization.
    const attackerRecord = (await server.services.stores.workspaces.getById(attackerWorkspace.id))!;
    await server.services.stores.github.putConnection({
      workspaceId: attackerWorkspace.id,
      organizationId: attackerRecord.organizationId,
      installationId: victim.installationId,
      repository: victim.repository,
      triggerPaths: [],
      now: new Date(),
    });
    const sha = await newCommit(double, victim.repository, { "main.tf": MAIN_TF, "app/main.tf": MAIN_TF });
    const result = await settled(
      server,
      (
        await deliver(
          server,
          double,
          "push",
          pushPayload(victim.repository, victim.installationId, sha, { changed: ["main.tf"] }),
        )
      ).deliveryId,
    );
    assert.is(result.status, "processed", JSON.stringify(result));
    const workspaces = (await server.db.knex<RunRow>("runs").whereIn("id", result.run_ids).select("workspace_id")).map(
      (r) => r.workspace_id,
    );
    assert.equal(workspaces, [victim.workspaceId]);
    assert.is(
      (await server.db.knex("runs").where({ workspace_id: attackerWorkspace.id })).length,
      0,
      "no run in the attacker's workspace",
    );
    await server.services.stores.github.deleteConnection(attackerWorkspace.id);

    // Release: refused while the victim's workspaces connect through it, then allowed; then the
    // other organization may bind it.
    const release = () =>
      fetch(
        `${server.baseUrl}/v1/organizations/${victim.organizationName}/github-installations/${victim.installationId}`,
        {
          method: "DELETE",
          headers: { Authorization: `Bearer ${victim.token}` },
        },
      );
    const busy = await release();
    assert.is(busy.status, 409);
    assert.is(await errorCode(busy), "GITHUB_INSTALLATION_HAS_CONNECTIONS");
    const byAttacker = await fetch(
      `${server.baseUrl}/v1/organizations/${victim.organizationName}/github-installations/${victim.installationId}`,
      {
        method: "DELETE",
        headers: { Authorization: `Bearer ${attackerToken}` },
      },
    );
    assert.is(byAttacker.status, 404, "another organization cannot even see it");
    for (const workspaceId of [victim.workspaceId, second.id])
      assert.is(
        (
          await fetch(`${server.baseUrl}/v1/workspaces/${workspaceId}/source`, {
            method: "DELETE",
            headers: { Authorization: `Bearer ${victim.token}` },
          })
        ).status,
        204,
      );
    assert.is((await release()).status, 204);
    assert.ok(
      (await auditOf(server, String(victim.installationId))).some((e) => e.action === "github.installation.released"),
    );
    before = await countRows(server, tables);
    await bindInstallation(server, double, attackerOrg, victim.installationId, []);
    assert.is((await countRows(server, tables)).github_installation_bindings, before.github_installation_bindings + 1);
    // The installation's new organization sees nothing of what it delivered to its previous owner.
    assert.is(
      (
        await putSource(server, attackerToken, attackerWorkspace.id, {
          installation_id: victim.installationId,
          repository: victim.repository,
        })
      ).status,
      200,
    );
    assert.equal(
      (await sourceOf(server, attackerWorkspace.id, attackerToken)).body.meta.deliveries,
      [],
      "no delivery from before the move",
    );
  },
  GITHUB,
);

testEachServer(
  test,
  "deliveries are per organization: naming another organization's repository shows none of its deliveries",
  async (server) => {
    const victim = await connectWorkspace(server, double);
    const sha = await newCommit(double, victim.repository, { "main.tf": MAIN_TF });
    const pushed = await deliver(server, double, "push", pushPayload(victim.repository, victim.installationId, sha));
    await settled(server, pushed.deliveryId);
    const own = await sourceOf(server, victim.workspaceId, victim.token);
    assert.equal(
      own.body.meta.deliveries.map((d) => d.id),
      [pushed.deliveryId],
    );

    // The attacker's own installation, which GitHub says can see a repository of the same name
    // (a transferred or re-created repository, a GitHub Enterprise mirror), connects to it.
    const { token, organizationName } = await createOrganizationWithToken(server, "peek", "admin");
    const attacker = await connectWorkspace(server, double, {
      organization: { organizationName, token },
      repository: victim.repository,
    });
    assert.is.not(attacker.installationId, victim.installationId);
    const seen = await sourceOf(server, attacker.workspaceId, attacker.token);
    assert.is(seen.status, 200);
    assert.equal(seen.body.meta.deliveries, [], "none of the victim's deliveries");
  },
  GITHUB,
);

test.run();
