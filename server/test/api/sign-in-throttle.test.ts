import { request as httpRequest } from "node:http";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createUser, signIn } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import { firstError, jsonOf, type V1 } from "../support/documents.ts";
import type { AuditEventRow } from "../../src/store/rows.ts";

// Failed sign-ins and step-ups: throttled per account and per client address with exponential
// backoff (domain/auth-throttle.ts: an account's 5th failure in a row blocks it 1 s, then 2 s,
// 4 s, …; an address's 20th), 429 AUTH_THROTTLED with Retry-After, the same for unknown emails,
// every failure audited. Time is the test server's injected clock: no sleeps.

interface Answer {
  status: number;
  retryAfter: string | null;
  code: string | null;
  /** The error object without its request id, to compare answers. */
  error: unknown;
  setCookie: string | null;
}

/** POST /v1/auth/sessions from a chosen local address (127.0.0.x all reach the server on 127.0.0.1). */
function signInFrom(
  server: TestServer,
  email: string,
  password: string,
  options: { localAddress?: string; cookie?: string } = {},
): Promise<Answer> {
  const body = JSON.stringify({ data: { type: "sessions", attributes: { email, password } } });
  const headers: Record<string, string | number> = {
    "Content-Type": "application/vnd.api+json",
    "Content-Length": Buffer.byteLength(body),
  };
  if (options.cookie) headers.Cookie = options.cookie;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${server.baseUrl}/v1/auth/sessions`,
      { method: "POST", headers, localAddress: options.localAddress ?? "127.0.0.1", agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
            errors?: Array<{ code: string; meta?: Record<string, unknown> }>;
          };
          const error = parsed.errors?.[0];
          if (error?.meta) delete error.meta.request_id;
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers["retry-after"] ?? null,
            code: error?.code ?? null,
            error: error ?? null,
            setCookie: (res.headers["set-cookie"] ?? [null])[0],
          });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const failureAudits = async (server: TestServer) =>
  (
    await server.db
      .knex("audit_events")
      .whereIn("action", ["session.sign_in_failed", "session.step_up_failed"])
      .orderBy("created_at")
      .orderBy("id")
      .select<AuditEventRow[]>("*")
  ).map((row) => [row.action, (JSON.parse(row.data) as { refusal?: string }).refusal]);

const T0 = Date.parse("2026-12-03T09:00:00.000Z");
let nowMs = T0;
const clock = () => new Date(nowMs);
const at = (offsetMs: number) => {
  nowMs = T0 + offsetMs;
};

const throttle = suite("sign-in throttle");

testEachServer(
  throttle,
  "an account: 4 failures are free, the 5th blocks it for exactly 1 s (429 AUTH_THROTTLED, Retry-After: 1, even with the right password), the 6th for 2 s; a success clears the count",
  async (server) => {
    at(0);
    const { email, password } = await createUser(server);
    for (let i = 1; i <= 4; i++) assert.is((await signInFrom(server, email, `wrong ${i}`)).status, 401, `failure ${i}`);
    // After 4 failures the 5th attempt is still checked (and fails: the 5th failure).
    const fifth = await signInFrom(server, email, "wrong 5");
    assert.is(fifth.status, 401);
    assert.is(fifth.code, "CREDENTIALS_INVALID");
    // Now blocked for 1 s: the right password is not even checked.
    const blocked = await signInFrom(server, email, password);
    assert.equal(
      [blocked.status, blocked.code, blocked.retryAfter, blocked.setCookie],
      [429, "AUTH_THROTTLED", "1", null],
    );
    assert.equal((blocked.error as { meta: unknown }).meta, { retry_after_seconds: 1 });
    at(999);
    assert.equal([(await signInFrom(server, email, password)).status], [429]);
    // 1000 ms after the 5th failure the block is over; the 6th failure blocks for 2 s.
    at(1000);
    assert.is((await signInFrom(server, email, "wrong 6")).status, 401);
    const twice = await signInFrom(server, email, password);
    assert.equal([twice.status, twice.retryAfter], [429, "2"]);
    at(2999);
    assert.equal(
      [(await signInFrom(server, email, password)).status, (await signInFrom(server, email, password)).retryAfter],
      [429, "1"],
    );
    at(3000);
    const success = await signInFrom(server, email, password);
    assert.is(success.status, 201);
    assert.ok(success.setCookie?.startsWith("stackship_session=sss."));
    // The success cleared the account: four failures are free again.
    for (let i = 1; i <= 4; i++) assert.is((await signInFrom(server, email, `again ${i}`)).status, 401);
    assert.is((await signInFrom(server, email, password)).status, 201);
    // Every failure and every throttled attempt is audited: 6 + 4 failures, 5 refusals.
    const audits = await failureAudits(server);
    assert.is(audits.filter(([, refusal]) => refusal === "CREDENTIALS_INVALID").length, 10);
    assert.is(audits.filter(([, refusal]) => refusal === "AUTH_THROTTLED").length, 5);
  },
  { clock },
);

testEachServer(
  throttle,
  "an unknown email gets exactly the answers of an existing one, step by step (401s, then 429 with the same Retry-After)",
  async (server) => {
    at(0);
    const { email } = await createUser(server);
    const sequence = async (who: string) => {
      const answers: unknown[] = [];
      for (const [offset, password] of [
        [0, "a"],
        [0, "b"],
        [0, "c"],
        [0, "d"],
        [0, "e"],
        [0, "f"],
        [500, "g"],
        [1000, "h"],
        [1000, "i"],
      ] as const) {
        at(offset);
        const { status, retryAfter, error, setCookie } = await signInFrom(server, who, password);
        answers.push({ status, retryAfter, error, setCookie });
      }
      return answers;
    };
    const known = await sequence(email);
    const unknown = await sequence("nobody-at-all@example.com");
    assert.equal(unknown, known);
    assert.equal(
      (known as Answer[]).map((a) => a.status),
      [401, 401, 401, 401, 401, 429, 429, 401, 429],
    );
  },
  { clock },
);

testEachServer(
  throttle,
  "per account across addresses, per address across accounts: the 20th failure from one address blocks it for every account, not other addresses",
  async (server) => {
    at(0);
    const victim = await createUser(server);
    const bystander = await createUser(server);
    // Five failures for the victim from 127.0.0.2: the account is blocked from 127.0.0.3 too.
    for (let i = 0; i < 5; i++)
      assert.is((await signInFrom(server, victim.email, `guess ${i}`, { localAddress: "127.0.0.2" })).status, 401);
    assert.is((await signInFrom(server, victim.email, victim.password, { localAddress: "127.0.0.3" })).status, 429);
    // …while the bystander signs in from there (and from .2, whose address count is only 5).
    assert.is(
      (await signInFrom(server, bystander.email, bystander.password, { localAddress: "127.0.0.3" })).status,
      201,
    );
    assert.is(
      (await signInFrom(server, bystander.email, bystander.password, { localAddress: "127.0.0.2" })).status,
      201,
    );
    // Spraying: failures 6..19 from .2 over many unknown accounts keep being checked…
    for (let i = 6; i <= 19; i++)
      assert.is(
        (await signInFrom(server, `spray-${i}@example.com`, "Winter2026!", { localAddress: "127.0.0.2" })).status,
        401,
        `failure ${i}`,
      );
    // …the bystander's success gave its attempt back, so .2 has 19 failures: the 20th is checked…
    assert.is(
      (await signInFrom(server, "spray-20@example.com", "Winter2026!", { localAddress: "127.0.0.2" })).status,
      401,
    );
    // …and blocks the address for every account, the bystander's right password included.
    const blocked = await signInFrom(server, bystander.email, bystander.password, { localAddress: "127.0.0.2" });
    assert.equal([blocked.status, blocked.retryAfter], [429, "1"]);
    assert.is(
      (await signInFrom(server, bystander.email, bystander.password, { localAddress: "127.0.0.4" })).status,
      201,
    );
    at(1000);
    assert.is(
      (await signInFrom(server, bystander.email, bystander.password, { localAddress: "127.0.0.2" })).status,
      201,
    );
  },
  { clock },
);

testEachServer(
  throttle,
  "failures are forgotten an hour after the last one: at exactly 60 min they still count, 1 ms later they do not",
  async (server) => {
    at(0);
    const a = await createUser(server);
    const b = await createUser(server);
    for (let i = 0; i < 4; i++) {
      await signInFrom(server, a.email, "wrong");
      await signInFrom(server, b.email, "wrong");
    }
    at(60 * 60 * 1000);
    assert.is((await signInFrom(server, a.email, "wrong")).status, 401);
    assert.is((await signInFrom(server, a.email, a.password)).status, 429, "the 4 earlier failures still counted");
    at(60 * 60 * 1000 + 1);
    assert.is((await signInFrom(server, b.email, "wrong")).status, 401);
    assert.is((await signInFrom(server, b.email, b.password)).status, 201, "the 4 earlier failures were forgotten");
  },
  { clock },
);

testEachServer(
  throttle,
  "ten concurrent wrong guesses at one instant: exactly five are checked, five are refused 429 (the count is taken before the password check)",
  async (server) => {
    at(0);
    const { email } = await createUser(server);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => signInFrom(server, email, `parallel ${i}`)));
    const statuses = answers.map((a) => a.status).sort();
    assert.equal(statuses, [401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
  },
  { clock },
);

testEachServer(
  throttle,
  "step-up shares the throttle: 4 wrong step-ups are free, the 5th blocks the account 1 s for step-up and sign-in alike, 429 with Retry-After",
  async (server) => {
    at(0);
    const { email, password } = await createUser(server);
    const session = await signIn(server, email, password);
    const stepUp = (pw: string) =>
      session.request("POST", "/v1/auth/step-up", {
        body: { data: { type: "step-ups", attributes: { password: pw } } },
      });
    for (let i = 1; i <= 5; i++) {
      const response = await stepUp(`wrong ${i}`);
      assert.is(response.status, 403, `failure ${i}`);
      assert.is(firstError(await response.json()).code, "STEP_UP_PASSWORD_INVALID");
    }
    const blocked = await stepUp(password);
    assert.is(blocked.status, 429);
    assert.is(blocked.headers.get("retry-after"), "1");
    assert.is(firstError(await blocked.json()).code, "AUTH_THROTTLED");
    assert.is((await signInFrom(server, email, password)).status, 429);
    at(1000);
    assert.is((await stepUp(password)).status, 200);
    // The clock stood still, so the events are compared as a set of counts rather than in order.
    const counts: Record<string, number> = {};
    for (const [action, refusal] of await failureAudits(server))
      counts[`${action} ${refusal}`] = (counts[`${action} ${refusal}`] ?? 0) + 1;
    assert.equal(counts, {
      "session.step_up_failed STEP_UP_PASSWORD_INVALID": 5,
      "session.step_up_failed AUTH_THROTTLED": 1,
      "session.sign_in_failed AUTH_THROTTLED": 1,
    });
  },
  { clock },
);

const rotation = suite("session rotation");

testEachServer(
  rotation,
  "a sign-in starts a new session: the cookie sent with it is revoked (audited), the new one works",
  async (server) => {
    const { email, password } = await createUser(server);
    const first = await signIn(server, email, password);
    const again = await signInFrom(server, email, password, { cookie: first.cookie });
    assert.is(again.status, 201);
    const second = again.setCookie!.split(";")[0];
    assert.is.not(second, first.cookie);
    const old = await first.request("GET", "/v1/auth/sessions/current");
    assert.is(old.status, 401);
    assert.match(firstError(await old.json()).detail!, /signed out/);
    const current = await fetch(`${server.baseUrl}/v1/auth/sessions/current`, { headers: { Cookie: second } });
    assert.is(current.status, 200);
    const ended = await server.db.knex("audit_events").where({ action: "session.ended" }).select<AuditEventRow[]>("*");
    assert.is(ended.length, 1);
    const endedData = JSON.parse(ended[0].data) as { reason?: string; replaced_by?: string };
    assert.is(endedData.reason, "replaced_by_sign_in");
    assert.is(endedData.replaced_by, (await jsonOf<V1["SessionDocument"]>(current)).data.id);
    // A failed sign-in leaves the presented session alone.
    assert.is((await signInFrom(server, email, "wrong", { cookie: second })).status, 401);
    assert.is((await fetch(`${server.baseUrl}/v1/auth/sessions/current`, { headers: { Cookie: second } })).status, 200);
  },
);

throttle.run();
rotation.run();
