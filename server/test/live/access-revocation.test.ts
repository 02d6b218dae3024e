// Live sockets follow access changes at once: a removed member, a signed-out session, a disabled
// user and the other sessions of a password change lose their open sockets (1008) as soon as the
// change commits. The heartbeat here is an hour, so only the access-change signal (LISTEN/NOTIFY on
// PostgreSQL, the in-process bus on SQLite) can close them; before it, a socket streamed on until
// the next heartbeat (30 s by default).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { LIVE_CLOSE } from "../../src/live/messages.ts";
import { createOrganizationWithToken, createWorkspace, DEFAULT_CONFIGURATION } from "../support/factories.ts";
import { connectLive, type LiveClient } from "../support/live.ts";
import { startRun } from "../support/runs.ts";
import { signIn, signedInMember } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const test = suite("live: access changes close sockets");

/** The close of a socket, or a failure if it stays open (far longer than any signal takes). */
function closeOf(client: LiveClient, what: string): Promise<{ code: number; reason: string }> {
  return Promise.race([
    client.closed,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: the socket stayed open`)), 15_000).unref(),
    ),
  ]);
}

async function watching(server: TestServer, runId: string, cookie: string): Promise<LiveClient> {
  const client = await connectLive(server, runId, { cookie });
  await client.waitFor((m) => m.type === "hello");
  return client;
}

testEachServer(
  test,
  "membership removal, sign-out, disabling and a password change close the affected sockets at once; others stay open",
  async (server) => {
    const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
    const workspace = await createWorkspace(server, token, organizationName);
    const run = await startRun(server, token, workspace.id, DEFAULT_CONFIGURATION);
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${server.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    // An unaffected viewer watches throughout.
    const bystander = await signedInMember(server, organizationName, "viewer");
    const bystanderSocket = await watching(server, run.id, bystander.session.cookie);

    // 1. The membership is removed: the socket closes, the next request sees nothing.
    const removed = await signedInMember(server, organizationName, "viewer");
    const removedSocket = await watching(server, run.id, removed.session.cookie);
    const memberships = (await (await api("GET", `/v1/organizations/${organizationName}/memberships`)).json()) as {
      data: Array<{ id: string; attributes: { user_id: string } }>;
    };
    const membershipId = memberships.data.find((m) => m.attributes.user_id === removed.userId)!.id;
    assert.is((await api("DELETE", `/v1/organizations/${organizationName}/memberships/${membershipId}`)).status, 204);
    assert.is((await closeOf(removedSocket, "membership removed")).code, LIVE_CLOSE.SESSION_ENDED);
    assert.is((await removed.session.request("GET", `/v1/runs/${run.id}`)).status, 404);

    // 2. Sign-out: that session's socket closes.
    const leaving = await signedInMember(server, organizationName, "viewer");
    const leavingSocket = await watching(server, run.id, leaving.session.cookie);
    assert.is((await leaving.session.request("DELETE", "/v1/auth/sessions/current")).status, 204);
    assert.is((await closeOf(leavingSocket, "signed out")).code, LIVE_CLOSE.SESSION_ENDED);

    // 3. Disabled by a deployment administrator.
    const disabled = await signedInMember(server, organizationName, "viewer");
    const disabledSocket = await watching(server, run.id, disabled.session.cookie);
    const patch = await fetch(`${server.baseUrl}/v1/users/${disabled.userId}`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${server.bootstrapToken}`, "Content-Type": "application/vnd.api+json" },
      body: JSON.stringify({ data: { type: "users", attributes: { disabled: true } } }),
    });
    assert.is(patch.status, 200);
    assert.is((await closeOf(disabledSocket, "user disabled")).code, LIVE_CLOSE.SESSION_ENDED);

    // 4. A password change: the other session's socket closes, this session's stays.
    const changer = await signedInMember(server, organizationName, "viewer");
    const other = await signIn(server, changer.email, changer.password);
    const keptSocket = await watching(server, run.id, changer.session.cookie);
    const otherSocket = await watching(server, run.id, other.cookie);
    const changed = await changer.session.request("POST", "/v1/auth/password", {
      body: {
        data: {
          type: "password-changes",
          attributes: { current_password: changer.password, new_password: "a brand new password" },
        },
      },
    });
    assert.is(changed.status, 200);
    assert.is((await closeOf(otherSocket, "password changed elsewhere")).code, LIVE_CLOSE.SESSION_ENDED);

    // The sockets nobody took anything from are still open (the change signals were all heard by now).
    assert.is(keptSocket.ws.readyState, keptSocket.ws.OPEN);
    assert.is(bystanderSocket.ws.readyState, bystanderSocket.ws.OPEN);
    keptSocket.ws.terminate();
    bystanderSocket.ws.terminate();
  },
  { live: { heartbeatMs: 3_600_000 } },
);

test.run();
