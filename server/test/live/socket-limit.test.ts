import { request } from "node:http";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { DEFAULT_LIVE_SOCKETS_PER_SESSION, loadConfig } from "../../src/config.ts";
import { createOrganizationWithToken, createWorkspace, DEFAULT_CONFIGURATION } from "../support/factories.ts";
import { openLive, type LiveClient } from "../support/live.ts";
import { startRun } from "../support/runs.ts";
import { signIn, signedInMember } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const LIMIT = 3;

async function open(server: TestServer, runId: string, cookie: string) {
  const opened = await openLive(server, runId, { cookie });
  return opened;
}

/** Opens sockets until one is accepted; the server frees a place when it sees the close, which takes a moment. */
async function openWhenFreed(server: TestServer, runId: string, cookie: string): Promise<LiveClient> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const opened = await open(server, runId, cookie);
    if (opened.client) return opened.client;
    assert.is(opened.refusal.status, 429);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("the place of a closed socket was never given back");
}

const limit = suite("live: sockets per session");

limit("STACKSHIP_LIVE_SOCKETS_PER_SESSION: 8 by default, any positive integer, refused otherwise", () => {
  assert.is(DEFAULT_LIVE_SOCKETS_PER_SESSION, 8);
  assert.is(loadConfig({}).liveSocketsPerSession, 8);
  assert.is(loadConfig({ STACKSHIP_LIVE_SOCKETS_PER_SESSION: "1" }).liveSocketsPerSession, 1);
  assert.throws(() => loadConfig({ STACKSHIP_LIVE_SOCKETS_PER_SESSION: "0" }), /STACKSHIP_LIVE_SOCKETS_PER_SESSION/);
  assert.throws(() => loadConfig({ STACKSHIP_LIVE_SOCKETS_PER_SESSION: "many" }), /STACKSHIP_LIVE_SOCKETS_PER_SESSION/);
});

testEachServer(
  limit,
  `a session holds at most ${LIMIT} sockets (the limit accepted, one more refused 429 LIVE_SOCKET_LIMIT with Retry-After); other sessions are unaffected; a close frees a place`,
  async (server) => {
    const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
    const workspace = await createWorkspace(server, token, organizationName);
    const run = await startRun(server, token, workspace.id, DEFAULT_CONFIGURATION);
    const viewer = await signedInMember(server, organizationName, "viewer");
    const clients: LiveClient[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const opened = await open(server, run.id, viewer.session.cookie);
      assert.ok(opened.client, `socket ${i + 1} of ${LIMIT}: ${JSON.stringify(opened.refusal)}`);
      clients.push(opened.client);
    }
    const over = await openLive(server, run.id, { cookie: viewer.session.cookie });
    assert.is(over.refusal?.status, 429);
    assert.is(over.refusal?.body?.errors[0].code, "LIVE_SOCKET_LIMIT");
    assert.match(over.refusal?.body?.errors[0].detail ?? "", /limit is 3/);
    // The same user signed in a second time is another session, with its own places.
    const second = await signIn(server, viewer.email, viewer.password);
    const other = await open(server, run.id, second.cookie);
    assert.ok(other.client, "another session is not limited by the first");
    other.client.ws.terminate();
    // Closing one of the first session's sockets gives its place back; then it is full again.
    clients.pop()!.ws.close(1000, "bye");
    clients.push(await openWhenFreed(server, run.id, viewer.session.cookie));
    assert.is((await open(server, run.id, viewer.session.cookie)).refusal?.status, 429);
    for (const client of clients) client.ws.terminate();
  },
  { config: { liveSocketsPerSession: LIMIT } },
);

testEachServer(
  limit,
  "the refusal carries Retry-After",
  async (server) => {
    const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
    const workspace = await createWorkspace(server, token, organizationName);
    const run = await startRun(server, token, workspace.id, DEFAULT_CONFIGURATION);
    const viewer = await signedInMember(server, organizationName, "viewer");
    const first = await open(server, run.id, viewer.session.cookie);
    assert.ok(first.client);
    // A raw upgrade request, to read the refusal's headers.
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = request(`${server.baseUrl}/live/runs/${run.id}`, {
        headers: {
          Connection: "Upgrade",
          Upgrade: "websocket",
          "Sec-WebSocket-Version": "13",
          "Sec-WebSocket-Key": Buffer.alloc(16, 1).toString("base64"),
          Origin: server.baseUrl,
          Cookie: viewer.session.cookie,
        },
      });
      req.on("response", (res) => {
        res.resume();
        resolve({ status: res.statusCode, retryAfter: res.headers["retry-after"] });
      });
      req.on("upgrade", (_res, socket) => {
        socket.destroy();
        reject(new Error("the second socket was accepted"));
      });
      req.on("error", reject);
      req.end();
    });
    assert.equal(headers, { status: 429, retryAfter: "5" });
    first.client.ws.terminate();
  },
  { config: { liveSocketsPerSession: 1 } },
);

limit.run();
