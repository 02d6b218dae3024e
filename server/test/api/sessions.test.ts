import { suite } from "uvu";
import * as assert from "uvu/assert";
import { applicationTables, databaseText, expectNothingWritten, leakForms } from "../support/database.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { addMembership, createUser, signIn, signedInMember } from "../support/sessions.ts";
import { testEachServer, withTestServer, type TestServer } from "../support/test-server.ts";
import { testDialects } from "../support/databases.ts";
import { jsonOf, type V1 } from "../support/documents.ts";
import type { AuditEventRow } from "../../src/store/rows.ts";

const ADMIN = { email: "Admin@Example.com", password: "correct horse battery staple" };

async function errorOf(response: Response, status: number, code: string) {
  const body = (await response.json()) as {
    errors: Array<{ code: string; status: string; detail?: string; source?: Record<string, string> }>;
  };
  assert.is(response.status, status, JSON.stringify(body));
  assert.is(body.errors[0].code, code);
  return body.errors[0];
}

const signInPost = (server: TestServer, email: string, password: string) =>
  fetch(`${server.baseUrl}/v1/auth/sessions`, {
    method: "POST",
    headers: { "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({ data: { type: "sessions", attributes: { email, password } } }),
  });

// Failed password attempts write exactly two things: their audit event and the throttle counts.
const writeTables = async (server: TestServer) =>
  (await applicationTables(server)).filter((table) => table !== "audit_events" && table !== "auth_throttles");

const failureAudits = (server: TestServer) =>
  server.db
    .knex("audit_events")
    .select<AuditEventRow[]>("*")
    .whereIn("action", ["session.sign_in_failed", "session.step_up_failed"])
    .orderBy("created_at")
    .orderBy("id");

/** The refusal code a failure audit event records in its data. */
const refusalOf = (row: AuditEventRow) => (JSON.parse(row.data) as { refusal?: string }).refusal;

// ---------------------------------------------------------------------------------------------
const bootstrap = suite("bootstrap administrator and sign-in");

testEachServer(
  bootstrap,
  "STACKSHIP_BOOTSTRAP_ADMIN_* creates a site admin who signs in (email case-insensitively) and creates organizations; the password is stored only hashed",
  async (server) => {
    const session = await signIn(server, "admin@example.COM", ADMIN.password);
    const created = await session.request("POST", "/v1/organizations", {
      body: { data: { type: "organizations", attributes: { name: "acme" } } },
    });
    assert.is(created.status, 201);
    const text = await databaseText(server);
    for (const form of leakForms(ADMIN.password)) assert.not.ok(text.includes(form), "the password is stored");
    assert.not.ok(text.includes(session.cookie.split("=")[1]), "the session secret is stored");
    assert.not.ok(text.includes(session.csrfToken), "the CSRF token is stored");
  },
  { config: { bootstrapAdmin: ADMIN } },
);

testEachServer(
  bootstrap,
  "a wrong password and an unknown email get the same 401 CREDENTIALS_INVALID, write nothing but their audit events, and the audit names no unknown email",
  async (server) => {
    const { email, userId } = await createUser(server, { password: "a long enough password" });
    const tables = await writeTables(server);
    const wrong = await expectNothingWritten(server, () => signInPost(server, email, "a long enough passworD"), tables);
    const unknown = await expectNothingWritten(
      server,
      () => signInPost(server, "nobody@example.com", "a long enough password"),
      tables,
    );
    const a = await errorOf(wrong, 401, "CREDENTIALS_INVALID");
    const b = await errorOf(unknown, 401, "CREDENTIALS_INVALID");
    assert.is(a.detail, b.detail);
    assert.equal(a.source, b.source);
    assert.is(wrong.headers.get("set-cookie"), null);
    const audits = await failureAudits(server);
    assert.equal(
      audits.map((row) => [row.action, row.actor_id, refusalOf(row)]),
      [
        ["session.sign_in_failed", userId, "CREDENTIALS_INVALID"],
        ["session.sign_in_failed", null, "CREDENTIALS_INVALID"],
      ],
    );
    assert.not.ok(JSON.stringify(audits).includes("nobody@example.com"));
  },
);

testEachServer(
  bootstrap,
  "the cookie is HttpOnly, SameSite=Strict, Path=/ and not Secure over plain HTTP",
  async (server) => {
    const { email, password } = await createUser(server);
    const session = await signIn(server, email, password);
    assert.match(session.cookie, /^stackship_session=sss\.[A-Za-z0-9_-]{43}$/);
    for (const attribute of ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"])
      assert.ok(session.setCookie.includes(attribute), session.setCookie);
    assert.not.ok(session.setCookie.includes("Secure"));
  },
);

bootstrap("the cookie is Secure when clients reach StackShip over TLS", async () => {
  await withTestServer(
    testDialects()[0],
    async (server) => {
      const { email, password } = await createUser(server);
      const session = await signIn(server, email, password);
      assert.ok(/;\s*Secure/.test(session.setCookie), session.setCookie);
    },
    { config: { publicUrl: "https://stackship.example" } },
  );
});

testEachServer(
  bootstrap,
  "users need 12+ character passwords and unique emails (any case); only deployment administrators create them",
  async (server) => {
    const post = (token: string, attributes: Record<string, unknown>) =>
      fetch(`${server.baseUrl}/v1/users`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({ data: { type: "users", attributes } }),
      });
    const tables = await writeTables(server);
    await errorOf(
      await expectNothingWritten(
        server,
        () => post(server.bootstrapToken, { email: "a@example.com", password: "x".repeat(11) }),
        tables,
      ),
      422,
      "DOCUMENT_INVALID",
    );
    assert.is((await post(server.bootstrapToken, { email: "a@example.com", password: "x".repeat(12) })).status, 201);
    await errorOf(
      await expectNothingWritten(
        server,
        () => post(server.bootstrapToken, { email: "A@EXAMPLE.com", password: "y".repeat(12) }),
        tables,
      ),
      409,
      "USER_EMAIL_TAKEN",
    );
    const org = await createOrganizationWithToken(server, "acme", "admin");
    await errorOf(
      await expectNothingWritten(
        server,
        () => post(org.token, { email: "b@example.com", password: "y".repeat(12) }),
        tables,
      ),
      403,
      "FORBIDDEN",
    );
  },
);

// ---------------------------------------------------------------------------------------------
const csrf = suite("CSRF and origins");

testEachServer(
  csrf,
  "a cookie-authenticated change needs the session's X-CSRF-Token and an allowed Origin; reads do not; nothing is written when refused",
  async (server) => {
    const org = await createOrganizationWithToken(server, "acme", "admin");
    const member = await signedInMember(server, "acme", "admin");
    const body = { data: { type: "workspaces", attributes: { name: "ws-1" } } };
    const path = "/v1/organizations/acme/workspaces";
    const tables = await writeTables(server);
    const refused = [
      await expectNothingWritten(server, () => member.session.request("POST", path, { body, csrf: false }), tables),
      await expectNothingWritten(
        server,
        () => member.session.request("POST", path, { body, headers: { "X-CSRF-Token": "x".repeat(43) } }),
        tables,
      ),
      await expectNothingWritten(
        server,
        () =>
          member.session.request("POST", path, {
            body,
            headers: { "X-CSRF-Token": member.session.csrfToken.slice(0, -1) },
          }),
        tables,
      ),
      await expectNothingWritten(
        server,
        () => member.session.request("POST", path, { body, headers: { Origin: "https://evil.example" } }),
        tables,
      ),
    ];
    for (const response of refused) await errorOf(response, 403, "SESSION_CSRF_INVALID");
    // Another session's token does not fit this session.
    const other = await signedInMember(server, "acme", "admin");
    await errorOf(
      await member.session.request("POST", path, { body, headers: { "X-CSRF-Token": other.session.csrfToken } }),
      403,
      "SESSION_CSRF_INVALID",
    );
    assert.is((await member.session.request("GET", path)).status, 200);
    assert.is(
      (await member.session.request("POST", path, { body, headers: { Origin: new URL(server.baseUrl).origin } }))
        .status,
      201,
    );
    // An API token needs no CSRF token.
    const viaToken = await fetch(`${server.baseUrl}${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${org.token}`, "Content-Type": "application/vnd.api+json" },
      body: JSON.stringify({ data: { type: "workspaces", attributes: { name: "ws-2" } } }),
    });
    assert.is(viaToken.status, 201);
  },
);

testEachServer(
  csrf,
  "STACKSHIP_ALLOWED_ORIGINS admits a separate dashboard origin",
  async (server) => {
    await createOrganizationWithToken(server, "acme", "admin");
    const member = await signedInMember(server, "acme", "admin");
    const body = { data: { type: "workspaces", attributes: { name: "ws-1" } } };
    assert.is(
      (
        await member.session.request("POST", "/v1/organizations/acme/workspaces", {
          body,
          headers: { Origin: "https://dash.example" },
        })
      ).status,
      201,
    );
  },
  { config: { allowedOrigins: ["https://dash.example"] } },
);

testEachServer(
  csrf,
  "sessions are for the native API only: the compatibility surface ignores the cookie",
  async (server) => {
    await createOrganizationWithToken(server, "acme", "admin");
    const member = await signedInMember(server, "acme", "admin");
    const response = await member.session.request("GET", "/api/v2/organizations/acme/entitlement-set");
    assert.is(response.status, 401);
  },
);

// ---------------------------------------------------------------------------------------------
const lifecycle = suite("session lifecycle and step-up");

testEachServer(
  lifecycle,
  "GET current returns the user and the same CSRF token; sign-out ends the session and clears the cookie",
  async (server) => {
    const { email, password, userId } = await createUser(server, { displayName: "Dana Reviewer" });
    const session = await signIn(server, email, password);
    const current = await session.request("GET", "/v1/auth/sessions/current");
    assert.is(current.status, 200);
    assert.is(current.headers.get("cache-control"), "no-store");
    const body = await jsonOf<V1["SessionDocument"]>(current);
    assert.is(body.data.attributes.csrf_token, session.csrfToken);
    assert.equal(body.data.attributes.user, { id: userId, email, display_name: "Dana Reviewer", site_admin: false });
    await errorOf(
      await session.request("DELETE", "/v1/auth/sessions/current", { csrf: false }),
      403,
      "SESSION_CSRF_INVALID",
    );
    const out = await session.request("DELETE", "/v1/auth/sessions/current");
    assert.is(out.status, 204);
    assert.match(
      out.headers.get("set-cookie") ?? "",
      /^stackship_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/,
    );
    await errorOf(await session.request("GET", "/v1/auth/sessions/current"), 401, "UNAUTHENTICATED");
  },
);

testEachServer(lifecycle, "malformed and unknown cookies are 401 UNAUTHENTICATED", async (server) => {
  for (const cookie of ["stackship_session=abc", `stackship_session=sss.${"A".repeat(43)}`, "stackship_session="]) {
    const response = await fetch(`${server.baseUrl}/v1/auth/sessions/current`, { headers: { Cookie: cookie } });
    const error = await errorOf(response, 401, "UNAUTHENTICATED");
    if (cookie !== "stackship_session=") assert.is(error.source?.header, "Cookie");
  }
});

{
  let now = new Date("2026-12-02T10:00:00.000Z");
  const clock = () => now;
  testEachServer(
    lifecycle,
    "a session expires after 12 hours; step-up re-checks the password and stamps the session; tokens cannot step up",
    async (server) => {
      now = new Date("2026-12-02T10:00:00.000Z");
      const org = await createOrganizationWithToken(server, "acme", "admin");
      const { email, password } = await createUser(server);
      const session = await signIn(server, email, password);
      const first = await jsonOf<V1["SessionDocument"]>(await session.request("GET", "/v1/auth/sessions/current"));
      assert.is(first.data.attributes.stepped_up_at, "2026-12-02T10:00:00.000Z");
      assert.is(first.data.attributes.step_up_fresh_until, "2026-12-02T10:15:00.000Z");

      now = new Date("2026-12-02T10:40:00.000Z");
      const tables = await writeTables(server);
      const wrong = await expectNothingWritten(
        server,
        () =>
          session.request("POST", "/v1/auth/step-up", {
            body: { data: { type: "step-ups", attributes: { password: "not it at all" } } },
          }),
        tables,
      );
      await errorOf(wrong, 403, "STEP_UP_PASSWORD_INVALID");
      assert.equal(
        (await failureAudits(server)).map((row) => [row.action, row.actor_id, refusalOf(row)]),
        [["session.step_up_failed", session.userId, "STEP_UP_PASSWORD_INVALID"]],
      );
      const ok = await session.request("POST", "/v1/auth/step-up", {
        body: { data: { type: "step-ups", attributes: { password } } },
      });
      assert.is(ok.status, 200);
      const stepped = await jsonOf<V1["SessionDocument"]>(ok);
      assert.is(stepped.data.attributes.stepped_up_at, "2026-12-02T10:40:00.000Z");
      assert.is(stepped.data.attributes.step_up_fresh_until, "2026-12-02T10:55:00.000Z");

      const viaToken = await fetch(`${server.baseUrl}/v1/auth/step-up`, {
        method: "POST",
        headers: { Authorization: `Bearer ${org.token}`, "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({ data: { type: "step-ups", attributes: { password } } }),
      });
      await errorOf(viaToken, 403, "SESSION_REQUIRED");

      now = new Date("2026-12-02T21:59:59.999Z");
      assert.is((await session.request("GET", "/v1/auth/sessions/current")).status, 200);
      now = new Date("2026-12-02T22:00:00.000Z");
      await errorOf(await session.request("GET", "/v1/auth/sessions/current"), 401, "UNAUTHENTICATED");
    },
    { clock },
  );
}

// ---------------------------------------------------------------------------------------------
const memberships = suite("memberships");

testEachServer(
  memberships,
  "a role applies at its scope: viewers read, operators create runs, a workspace member sees only that workspace, other organizations are 404",
  async (server) => {
    const acme = await createOrganizationWithToken(server, "acme", "admin");
    await createOrganizationWithToken(server, "other", "admin");
    const ws1 = await createWorkspace(server, acme.token, "acme", { name: "one" });
    const ws2 = await createWorkspace(server, acme.token, "acme", { name: "two" });
    const viewer = await signedInMember(server, "acme", "viewer");
    const scoped = await signedInMember(server, "acme", "operator", { workspace_id: ws1.id });

    assert.is((await viewer.session.request("GET", `/v1/workspaces/${ws2.id}`)).status, 200);
    await errorOf(
      await viewer.session.request("POST", `/v1/workspaces/${ws2.id}/variables`, {
        body: { data: { type: "variables", attributes: { key: "k", value: "v" } } },
      }),
      403,
      "FORBIDDEN",
    );
    await errorOf(await viewer.session.request("GET", "/v1/organizations/other"), 404, "NOT_FOUND");

    assert.is((await scoped.session.request("GET", `/v1/workspaces/${ws1.id}`)).status, 200);
    assert.is(
      (
        await scoped.session.request("POST", `/v1/workspaces/${ws1.id}/variables`, {
          body: { data: { type: "variables", attributes: { key: "k", value: "v" } } },
        })
      ).status,
      201,
    );
    await errorOf(await scoped.session.request("GET", `/v1/workspaces/${ws2.id}`), 404, "NOT_FOUND");
  },
);

testEachServer(
  memberships,
  "only organization admins add members; duplicates, unknown users and foreign scopes are refused and write nothing",
  async (server) => {
    await createOrganizationWithToken(server, "acme", "admin");
    const other = await createOrganizationWithToken(server, "other", "admin");
    const foreign = await createWorkspace(server, other.token, "other", { name: "theirs" });
    const user = await createUser(server);
    const operator = await signedInMember(server, "acme", "operator");
    const admin = await signedInMember(server, "acme", "admin");
    const post = (attributes: Record<string, unknown>, session = admin.session) =>
      session.request("POST", "/v1/organizations/acme/memberships", {
        body: { data: { type: "memberships", attributes } },
      });

    const tables = await writeTables(server);
    await errorOf(
      await expectNothingWritten(server, () => post({ email: user.email, role: "viewer" }, operator.session), tables),
      403,
      "FORBIDDEN",
    );
    await errorOf(
      await expectNothingWritten(server, () => post({ email: "ghost@example.com", role: "viewer" }), tables),
      422,
      "MEMBERSHIP_USER_UNKNOWN",
    );
    await errorOf(
      await expectNothingWritten(
        server,
        () => post({ email: user.email, role: "viewer", workspace_id: foreign.id }),
        tables,
      ),
      422,
      "MEMBERSHIP_SCOPE_INVALID",
    );
    await errorOf(
      await expectNothingWritten(server, () => post({ email: user.email, role: "owner" }), tables),
      422,
      "DOCUMENT_INVALID",
    );
    const created = await post({ email: user.email.toUpperCase(), role: "viewer" });
    assert.is(created.status, 201);
    const membership = (await jsonOf<V1["MembershipDocument"]>(created)).data;
    assert.equal(
      { ...membership.attributes, created_at: undefined },
      {
        user_id: user.userId,
        email: user.email,
        display_name: user.email.split("@")[0],
        role: "viewer",
        scope_kind: "organization",
        scope_id: membership.attributes.scope_id,
        created_at: undefined,
      },
    );
    await errorOf(
      await expectNothingWritten(server, () => post({ email: user.email, role: "admin" }), await writeTables(server)),
      409,
      "MEMBERSHIP_EXISTS",
    );

    const list = await admin.session.request("GET", "/v1/organizations/acme/memberships");
    const ids = (await jsonOf<V1["MembershipListDocument"]>(list)).data.map((m) => m.attributes.user_id);
    assert.ok(ids.includes(user.userId) && ids.includes(admin.userId) && ids.includes(operator.userId));
    // Organization B's admin token cannot even see A's memberships.
    const hidden = await fetch(`${server.baseUrl}/v1/organizations/acme/memberships`, {
      headers: { Authorization: `Bearer ${other.token}` },
    });
    await errorOf(hidden, 404, "NOT_FOUND");
    await addMembership(server, "other", user.email, "viewer");
  },
);

bootstrap.run();
csrf.run();
lifecycle.run();
memberships.run();
