import { request as httpRequest } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openApiChannel, SANDBOX_API_URL } from "../../src/runner/api-channel.ts";
import { runCollecting } from "../../src/runner/sandbox-test-support.ts";
import { createUser } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { AuditEventRow } from "../../src/store/rows.ts";

// Which address the sign-in throttle counts a failure against (domain/auth-throttle.ts: an
// address's 20th failure blocks it for every account): the connection's peer, or, only when that
// peer is listed in STACKSHIP_TRUSTED_PROXIES, the client X-Forwarded-For names. And a sandbox,
// whose API channel reaches the API from the host's loopback, cannot sign in at all: the channel
// forwards only what a run token may call, so it cannot lock out people behind 127.0.0.1.

interface Via {
  /** The local address to connect from (127.0.0.x all reach the server on 127.0.0.1). */
  localAddress?: string;
  forwardedFor?: string;
  /** Send through this Unix socket (a sandbox's API channel) instead of TCP. */
  socketPath?: string;
}

function signIn(server: TestServer, email: string, password: string, via: Via = {}): Promise<number> {
  const body = JSON.stringify({ data: { type: "sessions", attributes: { email, password } } });
  const headers: Record<string, string | number> = {
    "Content-Type": "application/vnd.api+json",
    "Content-Length": Buffer.byteLength(body),
  };
  if (via.forwardedFor) headers["X-Forwarded-For"] = via.forwardedFor;
  const target = via.socketPath
    ? { socketPath: via.socketPath, path: "/v1/auth/sessions", headers: { ...headers, Host: "127.0.0.1:7480" } }
    : {
        host: "127.0.0.1",
        port: Number(new URL(server.baseUrl).port),
        path: "/v1/auth/sessions",
        localAddress: via.localAddress ?? "127.0.0.1",
        headers,
      };
  return new Promise((resolve, reject) => {
    const req = httpRequest({ ...target, method: "POST", agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Twenty failed sign-ins for unknown accounts: the address they count against is then blocked. */
async function spray(server: TestServer, via: Via, label: string): Promise<void> {
  for (let i = 1; i <= 20; i++)
    assert.is(
      await signIn(server, `spray-${label}-${i}@example.com`, "Winter2026!", via),
      401,
      `${label} failure ${i}`,
    );
}

const T0 = Date.parse("2026-12-04T09:00:00.000Z");
// The clock stands still: a block lasts until the test moves it, however slow the machine is.
const clock = () => new Date(T0);

const address = suite("sign-in throttle: the client address");

testEachServer(
  address,
  "X-Forwarded-For from a peer that is not a listed proxy is ignored: spoofing it neither escapes the address block nor moves it onto someone else",
  async (server) => {
    const victim = await createUser(server);
    // The attacker at 127.0.0.2 names a fresh client in every request…
    for (let i = 1; i <= 20; i++) {
      assert.is(
        await signIn(server, `spray-${i}@example.com`, "Winter2026!", {
          localAddress: "127.0.0.2",
          forwardedFor: `198.51.100.${i}`,
        }),
        401,
      );
    }
    // …but every failure counted against 127.0.0.2: blocked, whatever it claims next.
    assert.is(
      await signIn(server, victim.email, victim.password, { localAddress: "127.0.0.2", forwardedFor: "203.0.113.77" }),
      429,
    );
    // The addresses it named were not charged: a person there (behind no proxy: 127.0.0.3) signs in.
    assert.is(await signIn(server, victim.email, victim.password, { localAddress: "127.0.0.3" }), 201);
    const failure = await server.db
      .knex("audit_events")
      .where({ action: "session.sign_in_failed" })
      .first<AuditEventRow>();
    assert.is((JSON.parse(failure.data) as { client_address?: string }).client_address, "127.0.0.2");
  },
  { clock, config: { trustedProxies: ["127.0.0.9", "10.0.0.0/8"] } },
);

testEachServer(
  address,
  "behind a listed proxy the client is X-Forwarded-For's right-most address that is not a listed proxy: one client's failures block that client, not everyone behind the proxy",
  async (server) => {
    const bystander = await createUser(server);
    const proxy = { localAddress: "127.0.0.5" };
    await spray(server, { ...proxy, forwardedFor: "198.51.100.7" }, "behind-proxy");
    // The attacker is blocked however it dresses up the header (the proxy appends the real peer).
    assert.is(
      await signIn(server, bystander.email, bystander.password, { ...proxy, forwardedFor: "198.51.100.7" }),
      429,
    );
    assert.is(
      await signIn(server, bystander.email, bystander.password, { ...proxy, forwardedFor: "192.0.2.1, 198.51.100.7" }),
      429,
    );
    // A chain of listed proxies (10.0.0.0/8) is walked through to the client.
    assert.is(
      await signIn(server, bystander.email, bystander.password, { ...proxy, forwardedFor: "198.51.100.7, 10.1.2.3" }),
      429,
    );
    // Everyone else behind the same proxy still signs in.
    assert.is(
      await signIn(server, bystander.email, bystander.password, { ...proxy, forwardedFor: "198.51.100.8" }),
      201,
    );
    const failure = await server.db
      .knex("audit_events")
      .where({ action: "session.sign_in_failed" })
      .first<AuditEventRow>();
    assert.is((JSON.parse(failure.data) as { client_address?: string }).client_address, "198.51.100.7");
  },
  { clock, config: { trustedProxies: ["127.0.0.5", "10.0.0.0/8"] } },
);

const channel = suite("sign-in throttle: the sandbox's API channel");

testEachServer(
  channel,
  "25 wrong passwords through a sandbox's API channel are refused 403 at the channel and do not lock out a person's correct sign-in from the same host",
  async (server) => {
    const person = await createUser(server);
    const dir = await mkdtemp(join(tmpdir(), "ss-channel-"));
    const api = await openApiChannel({
      socketPath: join(dir, "api.sock"),
      target: { host: "127.0.0.1", port: Number(new URL(server.baseUrl).port) },
    });
    try {
      for (let i = 1; i <= 25; i++) {
        assert.is(await signIn(server, person.email, `guess ${i}`, { socketPath: api.socketPath }), 403, `guess ${i}`);
        assert.is(
          await signIn(server, `spray-${i}@example.com`, "Winter2026!", { socketPath: api.socketPath }),
          403,
          `spray ${i}`,
        );
      }
      assert.is(
        await signIn(server, person.email, person.password, { socketPath: api.socketPath }),
        403,
        "not even the right password: signing in is not a run's operation",
      );
      // The channel's peer is the host's loopback, like a person's browser on this machine.
      assert.is(await signIn(server, person.email, person.password, { localAddress: "127.0.0.1" }), 201);
      assert.equal(
        await server.db.knex("audit_events").where({ action: "session.sign_in_failed" }),
        [],
        "the guesses never reached the API",
      );
    } finally {
      await api.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
  { clock },
);

testEachServer(
  channel,
  "a configuration's program in a real sandbox sprays 25 sign-ins at the API: each is 403 at the channel, and the person on this host still signs in",
  async (server) => {
    const person = await createUser(server);
    const dir = await mkdtemp(join(tmpdir(), "ss-sandbox-spray-"));
    // What a provider, an `external` program or a local-exec could run during a plan.
    const program = `
      const body = (password) => JSON.stringify({ data: { type: "sessions", attributes: { email: ${JSON.stringify(person.email)}, password } } });
      (async () => {
        const statuses = [];
        for (let i = 1; i <= 25; i++) {
          const response = await fetch("${SANDBOX_API_URL}/v1/auth/sessions", { method: "POST", headers: { "Content-Type": "application/vnd.api+json" }, body: body("guess " + i) });
          statuses.push(response.status);
        }
        console.log(JSON.stringify(statuses));
      })();
    `;
    try {
      const result = await runCollecting({
        argv: [process.execPath, "-e", program],
        tmpDir: dir,
        api: { host: "127.0.0.1", port: Number(new URL(server.baseUrl).port) },
      });
      assert.is(result.exitCode, 0, result.stderr);
      assert.equal(
        JSON.parse(result.stdout),
        Array.from({ length: 25 }, () => 403),
      );
      assert.is(await signIn(server, person.email, person.password, { localAddress: "127.0.0.1" }), 201);
      assert.equal(await server.db.knex("audit_events").where({ action: "session.sign_in_failed" }), []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
  { clock },
);

address.run();
channel.run();
