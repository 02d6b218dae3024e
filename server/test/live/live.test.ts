import { execFile } from "node:child_process";
import { get as httpGet } from "node:http";
import { promisify } from "node:util";
import { join } from "node:path";
import knex from "knex";
import { REPO_ROOT } from "../../src/config.ts";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { recordRunEvent } from "../../src/commands/run-transitions.ts";
import type { LiveHelloMessage, LiveLogMessage, LiveRunMessage } from "../../src/live/messages.ts";
import { createStores, inTransaction } from "../../src/store/index.ts";
import { connectLive, disconnect, openLive, type LiveClient } from "../support/live.ts";
import { createOrganizationWithToken, createWorkspace, DEFAULT_CONFIGURATION } from "../support/factories.ts";
import { readLog, startRun } from "../support/runs.ts";
import { signedInMember } from "../support/sessions.ts";
import { testDialects } from "../support/databases.ts";
import { testEachServer, withTestServer, type TestServer } from "../support/test-server.ts";

/** An organization, a pending run in it, and a signed-in viewer of the organization. */
async function setUp(server: TestServer, name = "acme") {
  const { organizationName, token } = await createOrganizationWithToken(server, name, "admin");
  const workspace = await createWorkspace(server, token, organizationName);
  const run = await startRun(server, token, workspace.id, DEFAULT_CONFIGURATION);
  const viewer = await signedInMember(server, organizationName, "viewer");
  return { organizationName, token, workspace, run, viewer };
}

/** Appends a chunk exactly as the runner's phase log does. */
function append(
  server: TestServer,
  runId: string,
  phase: "plan" | "policy" | "apply",
  text: string,
  final = false,
): Promise<number> {
  return server.services.stores.logs.append(runId, phase, text, final, server.services.clock());
}

async function hello(client: LiveClient): Promise<LiveHelloMessage> {
  return client.waitFor<LiveHelloMessage>((m) => m.type === "hello");
}

function assertContiguous(logs: LiveLogMessage[], fromSeq: number, fromOffset: number): void {
  let offset = fromOffset;
  logs.forEach((message, i) => {
    assert.is(message.seq, fromSeq + i, `seq of message ${i}`);
    assert.is(message.offset, offset, `offset of seq ${message.seq}`);
    assert.is(message.next_offset, message.offset + message.text.length);
    offset = message.next_offset;
  });
}

// ---------------------------------------------------------------------------------------------
const refusals = suite("live: refused before the handshake");

testEachServer(
  refusals,
  "wrong or missing Origin 403, no or bad cookie 401, API token 401, other organization's run and unknown run 404, terminal run 409",
  async (server) => {
    const { token, run, viewer } = await setUp(server);
    const other = await setUp(server, "globex");

    const wrongOrigin = await openLive(server, run.id, {
      cookie: viewer.session.cookie,
      origin: "https://evil.example",
    });
    assert.is(wrongOrigin.refusal?.status, 403);
    assert.is(wrongOrigin.refusal?.body?.errors[0].code, "FORBIDDEN");
    const noOrigin = await openLive(server, run.id, { cookie: viewer.session.cookie, origin: null });
    assert.is(noOrigin.refusal?.status, 403);

    const noCookie = await openLive(server, run.id);
    assert.is(noCookie.refusal?.status, 401);
    assert.is(noCookie.refusal?.body?.errors[0].code, "UNAUTHENTICATED");
    const badCookie = await openLive(server, run.id, { cookie: `stackship_session=sss.${"A".repeat(43)}` });
    assert.is(badCookie.refusal?.status, 401);
    const bearer = await openLive(server, run.id, { headers: { Authorization: `Bearer ${token}` } });
    assert.is(bearer.refusal?.status, 401, "API tokens do not open live sockets");
    const signedOut = await signedInMember(server, "acme", "viewer");
    assert.is((await signedOut.session.request("DELETE", "/v1/auth/sessions/current")).status, 204);
    assert.is(
      (await openLive(server, run.id, { cookie: signedOut.session.cookie })).refusal?.status,
      401,
      "a signed-out session",
    );

    const foreign = await openLive(server, run.id, { cookie: other.viewer.session.cookie });
    assert.is(foreign.refusal?.status, 404);
    assert.is(foreign.refusal?.body?.errors[0].code, "NOT_FOUND");
    const missing = await openLive(server, "run-doesnotexist000000", { cookie: viewer.session.cookie });
    assert.is(missing.refusal?.status, 404);
    assert.is(
      foreign.refusal?.body?.errors[0].detail?.replace(run.id, "X"),
      missing.refusal?.body?.errors[0].detail?.replace("run-doesnotexist000000", "X"),
      "hidden reads exactly like missing",
    );
    assert.is(
      (await openLive(server, run.id, { cookie: viewer.session.cookie })).client?.ws.terminate(),
      undefined,
      "the same viewer is accepted",
    );

    const cancel = await fetch(`${server.baseUrl}/v1/runs/${run.id}/actions/cancel`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.is(cancel.status, 202);
    const terminal = await openLive(server, run.id, { cookie: viewer.session.cookie });
    assert.is(terminal.refusal?.status, 409);
    assert.is(terminal.refusal?.body?.errors[0].code, "RUN_TRANSITION_INVALID");
    assert.match(terminal.refusal?.body?.errors[0].detail ?? "", /canceled/);
    assert.match(terminal.refusal?.body?.errors[0].detail ?? "", /\/logs\/\{phase\}/);
  },
);

testEachServer(
  refusals,
  "requests upgrading to anything but a WebSocket (curl --http2's h2c) are served as ordinary requests; a WebSocket elsewhere is 404",
  async (server) => {
    const h2c = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpGet(
        `${server.baseUrl}/healthz`,
        {
          headers: {
            Connection: "Upgrade, HTTP2-Settings",
            Upgrade: "h2c",
            "HTTP2-Settings": "AAMAAABkAAQCAAAAAAIAAAAA",
          },
        },
        (res) => {
          let body = "";
          res.on("data", (chunk) => (body += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      request.on("upgrade", () => reject(new Error("upgraded")));
      request.on("error", reject);
    });
    assert.is(h2c.status, 200, h2c.body);
    assert.match(h2c.body, /"status"/);
    const elsewhere = await openLive(server, "x/../../v1/organizations");
    assert.is(elsewhere.refusal?.status, 404);
  },
);

testEachServer(
  refusals,
  "STACKSHIP_PUBLIC_URL's origin and STACKSHIP_ALLOWED_ORIGINS are accepted; anything else is not",
  async (server) => {
    const { run, viewer } = await setUp(server);
    // Set only now: the set-up's upload goes to the public URL, which nothing serves here.
    (server.services.config as { publicUrl: string | null }).publicUrl = "https://stackship.example/app";
    for (const origin of ["https://stackship.example", "https://dash.example:8443"]) {
      const opened = await openLive(server, run.id, { cookie: viewer.session.cookie, origin });
      assert.ok(opened.client, `${origin}: ${JSON.stringify(opened.refusal)}`);
      await hello(opened.client);
      await disconnect(opened.client);
    }
    for (const origin of ["https://stackship.example.evil", "http://stackship.example", "null"]) {
      assert.is(
        (await openLive(server, run.id, { cookie: viewer.session.cookie, origin })).refusal?.status,
        403,
        origin,
      );
    }
  },
  { config: { allowedOrigins: ["https://dash.example:8443"] } },
);

// ---------------------------------------------------------------------------------------------
const events = suite("live: events");

testEachServer(
  events,
  "1,000 log chunks appended through the runner's path arrive in order, with the HTTP route's offsets",
  async (server) => {
    const { token, run, viewer } = await setUp(server);
    await append(server, run.id, "plan", "before the socket\n");
    const client = await connectLive(server, run.id, { cookie: viewer.session.cookie });
    const first = await hello(client);
    assert.is(first.version, 1);
    assert.is(first.run.status, "pending");
    assert.equal(first.logs.plan, { next_seq: 1, next_offset: "before the socket\n".length, complete: false });
    assert.equal(first.logs.apply, { next_seq: 0, next_offset: 0, complete: false });
    for (let i = 1; i <= 1000; i++)
      await append(server, run.id, "plan", `line ${i} ✓ ${"x".repeat(i % 7)}\n`, i === 1000);
    await client.waitFor((m) => m.type === "log" && m.final);
    const logs = client.logs("plan");
    assert.is(logs.length, 1000);
    assertContiguous(logs, 1, first.logs.plan.next_offset);
    const http = await readLog(server, token, run.id, "plan");
    assert.is(
      "before the socket\n" + logs.map((m) => m.text).join(""),
      http,
      "the socket delivers exactly what the HTTP route serves",
    );
    await disconnect(client);
  },
);

testEachServer(events, "a dropped connection resumes from the HTTP route: no gaps, no duplicates", async (server) => {
  const { run, viewer } = await setUp(server);
  const a = await connectLive(server, run.id, { cookie: viewer.session.cookie });
  await hello(a);
  for (let i = 0; i < 50; i++) await append(server, run.id, "plan", `a${i}\n`);
  await a.waitFor((m) => m.type === "log" && m.seq === 49);
  const seen = a.logs("plan");
  assertContiguous(seen, 0, 0);
  await disconnect(a);

  for (let i = 50; i < 100; i++) await append(server, run.id, "plan", `b${i}\n`);
  // The client re-reads the HTTP route from the last offset it saw.
  const last = seen[seen.length - 1];
  const response = await viewer.session.request("GET", `/v1/runs/${run.id}/logs/plan?offset=${last.next_offset}`);
  assert.is(response.status, 200);
  const window = ((await response.json()) as { data: { attributes: { text: string; next_offset: number } } }).data
    .attributes;
  assert.is(window.text, Array.from({ length: 50 }, (_, i) => `b${i + 50}\n`).join(""));

  const b = await connectLive(server, run.id, { cookie: viewer.session.cookie });
  const resumed = await hello(b);
  assert.equal(
    resumed.logs.plan,
    { next_seq: 100, next_offset: window.next_offset, complete: false },
    "the live stream continues exactly where the HTTP read ended",
  );
  for (let i = 100; i < 150; i++) await append(server, run.id, "plan", `c${i}\n`, i === 149);
  await b.waitFor((m) => m.type === "log" && m.final);
  assertContiguous(b.logs("plan"), 100, window.next_offset);
  const assembled =
    seen.map((m) => m.text).join("") +
    window.text +
    b
      .logs("plan")
      .map((m) => m.text)
      .join("");
  assert.is(assembled, Array.from({ length: 150 }, (_, i) => `${i < 50 ? "a" : i < 100 ? "b" : "c"}${i}\n`).join(""));
  await disconnect(b);
});

testEachServer(
  events,
  "stage and status changes are sent; the socket closes normally when the run becomes terminal, after the last chunks",
  async (server) => {
    const { token, run, viewer } = await setUp(server);
    const client = await connectLive(server, run.id, { cookie: viewer.session.cookie });
    await hello(client);
    const current = (await server.services.stores.runs.getById(run.id))!;
    await inTransaction(server.services.db, (stores) =>
      recordRunEvent(stores, current, { type: "plan_started" }, { now: server.services.clock() }),
    );
    const started = await client.waitFor<LiveRunMessage>((m) => m.type === "run");
    assert.is(started.run.status, "planning");
    assert.is(started.run.plan_status, "running");
    assert.is(started.run.terminal, false);
    assert.equal(started.changed.sort(), ["plan_status", "status"]);
    for (let i = 0; i < 5; i++) await append(server, run.id, "plan", `plan ${i}\n`);
    const cancel = await fetch(`${server.baseUrl}/v1/runs/${run.id}/actions/cancel`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.is(cancel.status, 202);
    const closed = await client.closed;
    assert.is(closed.code, 1000);
    assert.match(closed.reason, /canceled/);
    const last = client.messages[client.messages.length - 1] as LiveRunMessage;
    assert.is(last.type, "run");
    assert.is(last.run.status, "canceled");
    assert.is(last.run.terminal, true);
    assert.is(
      client.logs("plan").length,
      5,
      "every chunk stored before the run ended went out before the terminal status",
    );
    await disconnect(client);
  },
);

testEachServer(
  events,
  "a client that stops reading is dropped instead of buffering without bound",
  async (server) => {
    const { run, viewer } = await setUp(server);
    const slow = await connectLive(server, run.id, { cookie: viewer.session.cookie });
    await hello(slow);
    const fast = await connectLive(server, run.id, { cookie: viewer.session.cookie });
    await hello(fast);
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const chunk = "y".repeat(16 * 1024) + "\n";
    let appended = 0;
    while (server.live.hub.stats().viewers > 1 && appended < 2000) {
      const seq = await append(server, run.id, "plan", chunk);
      appended++;
      // The other viewer reads everything as it comes.
      await fast.waitFor((m) => m.type === "log" && m.seq === seq);
    }
    assert.is(server.live.hub.stats().viewers, 1, `the slow viewer is dropped (after ${appended} chunks of 16 KiB)`);
    await fast.waitFor((m) => m.type === "log" && m.seq === appended - 1);
    assert.is(fast.logs("plan").length, appended, "the other viewer keeps receiving everything");
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await slow.closed;
    assert.ok(closed.code === 1013 || closed.code === 1006, `closed ${closed.code}`);
    await disconnect(fast);
  },
  { live: { maxBufferedBytes: 256 * 1024, closeGraceMs: 200 } },
);

testEachServer(
  events,
  "a socket whose session is signed out, or whose user lost run:read, is closed (1008)",
  async (server) => {
    const { run, viewer } = await setUp(server);
    const client = await connectLive(server, run.id, { cookie: viewer.session.cookie });
    await hello(client);
    assert.is((await viewer.session.request("DELETE", "/v1/auth/sessions/current")).status, 204);
    const closed = await client.closed;
    assert.is(closed.code, 1008);
    assert.match(closed.reason, /session/);

    // A user who loses access to the run (no membership left) is cut off too.
    const other = await signedInMember(server, "acme", "viewer");
    const watching = await connectLive(server, run.id, { cookie: other.session.cookie });
    await hello(watching);
    await server.db.knex("memberships").where({ user_id: other.userId }).del();
    const cut = await watching.closed;
    assert.is(cut.code, 1008);
    assert.match(cut.reason, /may no longer read/);
  },
  { live: { heartbeatMs: 100 } },
);

// ---------------------------------------------------------------------------------------------
const postgres = suite("live: PostgreSQL LISTEN/NOTIFY");

if (testDialects().includes("postgres")) {
  postgres(
    "events written through another database connection (a runner in another process) reach the client [postgres]",
    () =>
      withTestServer("postgres", async (server) => {
        const { run, viewer } = await setUp(server);
        const client = await connectLive(server, run.id, { cookie: viewer.session.cookie });
        await hello(client);
        // A separate pool on the same database: nothing in-process connects it to this server.
        const runnerKnex = knex({ client: "pg", connection: server.databaseUrl, pool: { min: 0, max: 2 } });
        try {
          const stores = createStores(runnerKnex, "postgres");
          await stores.logs.append(run.id, "plan", "small chunk\n", false, new Date());
          const big = "z".repeat(20_000) + "\n";
          await stores.logs.append(run.id, "plan", big, false, new Date());
          await runnerKnex.transaction(async (trx) => {
            await createStores(trx, "postgres").logs.append(run.id, "plan", "committed\n", false, new Date());
          });
          await runnerKnex
            .transaction(async (trx) => {
              await createStores(trx, "postgres").logs.append(run.id, "apply", "rolled back\n", false, new Date());
              throw new Error("roll back");
            })
            .catch(() => undefined);
          const current = (await stores.runs.getById(run.id))!;
          await recordRunEvent(stores, current, { type: "plan_started" }, { now: new Date() });
          const changed = await client.waitFor<LiveRunMessage>((m) => m.type === "run");
          assert.is(changed.run.status, "planning");
          const logs = client.logs("plan");
          assert.is(logs.length, 3);
          assert.equal(
            logs.map((m) => m.text),
            ["small chunk\n", big, "committed\n"],
            "a chunk too big for NOTIFY is read from the database",
          );
          assertContiguous(logs, 0, 0);
          assert.is(client.logs("apply").length, 0, "a rolled-back write announces nothing");
        } finally {
          await runnerKnex.destroy();
        }
        await disconnect(client);
      }),
  );

  postgres("chunks appended by another process reach the client [postgres]", () =>
    withTestServer("postgres", async (server) => {
      const { run, viewer } = await setUp(server);
      const client = await connectLive(server, run.id, { cookie: viewer.session.cookie });
      await hello(client);
      // Asynchronously: this process keeps serving the socket while the other one writes.
      await promisify(execFile)(
        process.execPath,
        ["--import", "tsx", join(REPO_ROOT, "server/test/support/live-publisher.ts"), server.databaseUrl, run.id, "20"],
        {
          cwd: REPO_ROOT,
        },
      );
      await client.waitFor((m) => m.type === "log" && m.final, 10_000);
      assertContiguous(client.logs("policy"), 0, 0);
      assert.equal(
        client.logs("policy").map((m) => m.text),
        Array.from({ length: 20 }, (_, i) => `from another process ${i}\n`),
      );
      await disconnect(client);
    }),
  );

  postgres(
    "a lost LISTEN connection is reopened and what was written meanwhile is read from the database [postgres]",
    () =>
      withTestServer("postgres", async (server) => {
        const { run, viewer } = await setUp(server);
        const client = await connectLive(server, run.id, { cookie: viewer.session.cookie });
        await hello(client);
        await append(server, run.id, "plan", "before\n");
        await client.waitFor((m) => m.type === "log" && m.seq === 0);
        const listeners = async () =>
          (
            await server.db.knex.raw<{ rows: Array<{ pid: number }> }>(
              "select pid from pg_stat_activity where datname = current_database() and query ilike 'LISTEN%'",
            )
          ).rows.map((r) => r.pid);
        const [listener, ...others] = await listeners();
        assert.ok(listener && others.length === 0, "one LISTEN connection per process");
        await server.db.knex.raw("select pg_terminate_backend(?)", [listener]);
        for (let i = 1; i <= 3; i++) await append(server, run.id, "plan", `while reconnecting ${i}\n`);
        await client.waitFor((m) => m.type === "log" && m.seq === 3, 10_000);
        await append(server, run.id, "plan", "after\n", true);
        await client.waitFor((m) => m.type === "log" && m.final, 10_000);
        const [relistened] = await listeners();
        assert.ok(relistened !== undefined && relistened !== listener, "LISTEN is back on a new connection");
        assertContiguous(client.logs("plan"), 0, 0);
        assert.equal(
          client.logs("plan").map((m) => m.text),
          ["before\n", "while reconnecting 1\n", "while reconnecting 2\n", "while reconnecting 3\n", "after\n"],
        );
        await disconnect(client);
      }),
  );
}

refusals.run();
events.run();
postgres.run();
