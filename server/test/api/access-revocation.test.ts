// Access can be taken away, at once: memberships removed or re-roled, tokens revoked or expired,
// users disabled, passwords changed, sessions ended everywhere, and sessions per user capped.
// Each case performs what the attacker (or the removed member) would try next and checks it fails.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { MAX_SESSIONS_PER_USER } from "../../src/domain/sessions.ts";
import { expectNothingWritten } from "../support/database.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { signIn, signedInMember, createUser, type TestSession } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const test = suite("access revocation");

const JSON_API = { "Content-Type": "application/vnd.api+json" };

function bearer(server: TestServer, token: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : JSON_API) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { errors: Array<{ code: string }> }).errors[0].code;
}

async function audited(server: TestServer, action: string, targetId: string): Promise<boolean> {
  return (await server.db.knex("audit_events").where({ action, target_id: targetId }).first()) !== undefined;
}

async function membershipIdOf(server: TestServer, token: string, userId: string): Promise<string> {
  const list = (await (await bearer(server, token, "GET", "/v1/organizations/acme/memberships")).json()) as {
    data: Array<{ id: string; attributes: { user_id: string } }>;
  };
  return list.data.find((m) => m.attributes.user_id === userId)!.id;
}

const variable = (key: string) => ({ data: { type: "variables", attributes: { key, value: "v" } } });

testEachServer(
  test,
  "a removed member loses the organization on the next request; a changed role applies on the next request; both audited",
  async (server) => {
    const org = await createOrganizationWithToken(server, "acme", "admin");
    await createOrganizationWithToken(server, "other", "admin");
    const workspace = await createWorkspace(server, org.token, "acme", { name: "app" });
    const member = await signedInMember(server, "acme", "viewer");
    const membershipId = await membershipIdOf(server, org.token, member.userId);

    // Viewer → operator: the same session may now write.
    assert.is(
      (await member.session.request("POST", `/v1/workspaces/${workspace.id}/variables`, { body: variable("a") }))
        .status,
      403,
    );
    const patched = await bearer(server, org.token, "PATCH", `/v1/organizations/acme/memberships/${membershipId}`, {
      data: { type: "memberships", attributes: { role: "operator" } },
    });
    assert.is(patched.status, 200, await patched.clone().text());
    assert.is(((await patched.json()) as { data: { attributes: { role: string } } }).data.attributes.role, "operator");
    assert.is(
      (await member.session.request("POST", `/v1/workspaces/${workspace.id}/variables`, { body: variable("b") }))
        .status,
      201,
    );
    assert.ok(await audited(server, "membership.role_changed", membershipId));

    // Only an organization admin: the operator itself, and another organization's admin, may not.
    const self = await member.session.request("DELETE", `/v1/organizations/acme/memberships/${membershipId}`);
    assert.is(self.status, 403);
    const otherAdmin = await signedInMember(server, "other", "admin");
    assert.is(
      (await otherAdmin.session.request("DELETE", `/v1/organizations/acme/memberships/${membershipId}`)).status,
      404,
    );
    assert.is(
      (await bearer(server, org.token, "DELETE", "/v1/organizations/acme/memberships/mbr-0000000000000000")).status,
      404,
    );

    // Removed: the member's very next request sees nothing of acme.
    assert.is((await member.session.request("GET", `/v1/workspaces/${workspace.id}`)).status, 200);
    assert.is(
      (await bearer(server, org.token, "DELETE", `/v1/organizations/acme/memberships/${membershipId}`)).status,
      204,
    );
    assert.is((await member.session.request("GET", `/v1/workspaces/${workspace.id}`)).status, 404);
    assert.is(
      (await member.session.request("POST", `/v1/workspaces/${workspace.id}/variables`, { body: variable("c") }))
        .status,
      403,
    );
    assert.ok(await audited(server, "membership.removed", membershipId));
    assert.is(
      (await bearer(server, org.token, "DELETE", `/v1/organizations/acme/memberships/${membershipId}`)).status,
      404,
      "removing twice: gone",
    );
  },
);

testEachServer(
  test,
  "a revoked token gets 401 at once; tokens are listed without secrets; revoking is audited and org-admin only",
  async (server) => {
    const org = await createOrganizationWithToken(server, "acme", "admin");
    const other = await createOrganizationWithToken(server, "other", "admin");
    const created = await bearer(server, org.token, "POST", "/v1/organizations/acme/tokens", {
      data: { type: "tokens", attributes: { role: "operator", description: "ci" } },
    });
    assert.is(created.status, 201);
    const { id, attributes } = (
      (await created.json()) as { data: { id: string; attributes: { secret: string; expires_at: string | null } } }
    ).data;
    assert.is(attributes.expires_at, null);
    assert.is((await bearer(server, attributes.secret, "GET", "/v1/organizations/acme")).status, 200);

    const listed = await bearer(server, org.token, "GET", "/v1/organizations/acme/tokens");
    assert.is(listed.status, 200);
    const text = await listed.text();
    assert.not.ok(text.includes(attributes.secret), "the list never carries a secret");
    assert.ok((JSON.parse(text) as { data: Array<{ id: string }> }).data.some((t) => t.id === id));
    // The operator token itself may not revoke, nor may another organization's admin.
    assert.is((await bearer(server, attributes.secret, "DELETE", `/v1/organizations/acme/tokens/${id}`)).status, 403);
    assert.is((await bearer(server, other.token, "DELETE", `/v1/organizations/acme/tokens/${id}`)).status, 404);

    assert.is((await bearer(server, org.token, "DELETE", `/v1/organizations/acme/tokens/${id}`)).status, 204);
    const refused = await bearer(server, attributes.secret, "GET", "/v1/organizations/acme");
    assert.is(refused.status, 401);
    assert.is(await errorCode(refused), "UNAUTHENTICATED");
    assert.ok(await audited(server, "token.revoked", id));
    const after = (await (await bearer(server, org.token, "GET", "/v1/organizations/acme/tokens")).json()) as {
      data: Array<{ id: string }>;
    };
    assert.not.ok(
      after.data.some((t) => t.id === id),
      "a revoked token leaves the list",
    );
    assert.is(
      (await bearer(server, org.token, "DELETE", `/v1/organizations/acme/tokens/${id}`)).status,
      404,
      "revoking twice: gone",
    );
  },
);

let now = Date.parse("2026-12-04T12:00:00.000Z");

testEachServer(
  test,
  "a token's expires_at must be in the future (422 TOKEN_EXPIRY_INVALID, nothing written), is listed, and the token gets 401 from then on",
  async (server) => {
    now = Date.parse("2026-12-04T12:00:00.000Z");
    const org = await createOrganizationWithToken(server, "acme", "admin");
    const body = (expiresAt: string) => ({
      data: { type: "tokens", attributes: { role: "viewer", expires_at: expiresAt } },
    });
    for (const past of ["2026-12-04T12:00:00.000Z", "2026-12-04T11:00:00.000Z"]) {
      const refused = await expectNothingWritten(
        server,
        () => bearer(server, org.token, "POST", "/v1/organizations/acme/tokens", body(past)),
        ["api_tokens", "principals", "permission_grants"],
      );
      assert.is(refused.status, 422);
      assert.is(await errorCode(refused), "TOKEN_EXPIRY_INVALID");
    }
    const created = await bearer(
      server,
      org.token,
      "POST",
      "/v1/organizations/acme/tokens",
      body("2026-12-04T13:00:00.000Z"),
    );
    assert.is(created.status, 201);
    const token = (
      (await created.json()) as { data: { id: string; attributes: { secret: string; expires_at: string } } }
    ).data;
    assert.is(token.attributes.expires_at, "2026-12-04T13:00:00.000Z");
    const listed = async () =>
      (
        (await (await bearer(server, org.token, "GET", "/v1/organizations/acme/tokens")).json()) as {
          data: Array<{
            id: string;
            attributes: { expires_at: string; expired: boolean; last_used_at: string | null };
          }>;
        }
      ).data.find((t) => t.id === token.id)!.attributes;
    assert.equal(await listed(), { ...(await listed()), expires_at: "2026-12-04T13:00:00.000Z", expired: false });

    // One millisecond before: works (and is shown as the last use). At the expiry: 401.
    now = Date.parse("2026-12-04T12:59:59.999Z");
    assert.is((await bearer(server, token.attributes.secret, "GET", "/v1/organizations/acme")).status, 200);
    assert.is((await listed()).last_used_at, "2026-12-04T12:59:59.999Z");
    now = Date.parse("2026-12-04T13:00:00.000Z");
    const expired = await bearer(server, token.attributes.secret, "GET", "/v1/organizations/acme");
    assert.is(expired.status, 401);
    assert.is(await errorCode(expired), "UNAUTHENTICATED");
    assert.is((await listed()).expired, true);
  },
  { clock: () => new Date(now) },
);

testEachServer(
  test,
  "a disabled user's sessions end at once and sign-in is refused like a wrong password; enabled again, it signs in",
  async (server) => {
    await createOrganizationWithToken(server, "acme", "admin");
    const member = await signedInMember(server, "acme", "viewer");
    const second = await signIn(server, member.email, member.password);
    const patch = (token: string, disabled: boolean) =>
      bearer(server, token, "PATCH", `/v1/users/${member.userId}`, {
        data: { type: "users", attributes: { disabled } },
      });

    // Only a deployment administrator.
    const orgAdmin = await signedInMember(server, "acme", "admin");
    assert.is(
      (
        await orgAdmin.session.request("PATCH", `/v1/users/${member.userId}`, {
          body: { data: { type: "users", attributes: { disabled: true } } },
        })
      ).status,
      403,
    );

    const disabled = await patch(server.bootstrapToken, true);
    assert.is(disabled.status, 200, await disabled.clone().text());
    assert.is(
      ((await disabled.json()) as { data: { attributes: { disabled: boolean } } }).data.attributes.disabled,
      true,
    );
    for (const session of [member.session, second])
      assert.is((await session.request("GET", "/v1/auth/sessions/current")).status, 401);
    const signInAgain = await fetch(`${server.baseUrl}/v1/auth/sessions`, {
      method: "POST",
      headers: JSON_API,
      body: JSON.stringify({
        data: { type: "sessions", attributes: { email: member.email, password: member.password } },
      }),
    });
    assert.is(signInAgain.status, 401);
    assert.is(await errorCode(signInAgain), "CREDENTIALS_INVALID");
    assert.ok(await audited(server, "user.disabled", member.userId));
    assert.ok(await audited(server, "user.sessions_ended", member.userId));

    assert.is((await patch(server.bootstrapToken, false)).status, 200);
    const back = await signIn(server, member.email, member.password);
    assert.is((await back.request("GET", "/v1/auth/sessions/current")).status, 200);
    assert.is(
      (
        await bearer(server, server.bootstrapToken, "PATCH", "/v1/users/usr-0000000000000000", {
          data: { type: "users", attributes: { disabled: true } },
        })
      ).status,
      404,
    );
  },
);

testEachServer(
  test,
  "changing the password needs the current one, ends the user's other sessions and keeps this one",
  async (server) => {
    const user = await createUser(server);
    const here = await signIn(server, user.email, user.password);
    const elsewhere = await signIn(server, user.email, user.password);
    const change = (session: TestSession, current: string, next: string) =>
      session.request("POST", "/v1/auth/password", {
        body: { data: { type: "password-changes", attributes: { current_password: current, new_password: next } } },
      });

    const wrong = await change(here, "not the password at all", "a brand new password");
    assert.is(wrong.status, 403);
    assert.is(await errorCode(wrong), "PASSWORD_CURRENT_INVALID");
    assert.ok(
      await server.db
        .knex("audit_events")
        .where({ action: "user.password_change_failed", target_id: user.userId })
        .first(),
    );
    const same = await change(here, user.password, user.password);
    assert.is(same.status, 422);
    assert.is(await errorCode(same), "PASSWORD_UNCHANGED");
    assert.is((await elsewhere.request("GET", "/v1/auth/sessions/current")).status, 200, "refusals change nothing");

    const changed = await change(here, user.password, "a brand new password");
    assert.is(changed.status, 200, await changed.clone().text());
    assert.is((await here.request("GET", "/v1/auth/sessions/current")).status, 200, "this session stays");
    assert.is((await elsewhere.request("GET", "/v1/auth/sessions/current")).status, 401, "the other session ended");
    assert.match(
      String(await signIn(server, user.email, user.password).catch((error: unknown) => error)),
      /signIn: 401/,
      "the old password is refused",
    );
    await signIn(server, user.email, "a brand new password");
    assert.ok(await audited(server, "user.password_changed", user.userId));
  },
);

testEachServer(
  test,
  "sign out everywhere: the user itself (clears the cookie) or a deployment administrator for another user",
  async (server) => {
    const user = await createUser(server);
    const one = await signIn(server, user.email, user.password);
    const two = await signIn(server, user.email, user.password);
    const out = await one.request("DELETE", "/v1/auth/sessions");
    assert.is(out.status, 204);
    assert.match(out.headers.get("set-cookie") ?? "", /Max-Age=0/);
    for (const session of [one, two])
      assert.is((await session.request("GET", "/v1/auth/sessions/current")).status, 401);

    const three = await signIn(server, user.email, user.password);
    const other = await createUser(server);
    const otherSession = await signIn(server, other.email, other.password);
    assert.is(
      (await otherSession.request("DELETE", `/v1/users/${user.userId}/sessions`)).status,
      403,
      "not a deployment administrator",
    );
    assert.is((await bearer(server, server.bootstrapToken, "DELETE", `/v1/users/${user.userId}/sessions`)).status, 204);
    assert.is((await three.request("GET", "/v1/auth/sessions/current")).status, 401);
    assert.is((await otherSession.request("GET", "/v1/auth/sessions/current")).status, 200, "other users keep theirs");
    assert.is(
      (await bearer(server, server.bootstrapToken, "DELETE", "/v1/users/usr-0000000000000000/sessions")).status,
      404,
    );
  },
);

testEachServer(
  test,
  `a user holds at most ${MAX_SESSIONS_PER_USER} sessions: up to the cap all live, one more ends exactly the oldest (audited)`,
  async (server) => {
    assert.is(MAX_SESSIONS_PER_USER, 10);
    const user = await createUser(server);
    const sessions: TestSession[] = [];
    for (let i = 0; i < MAX_SESSIONS_PER_USER; i++) sessions.push(await signIn(server, user.email, user.password));
    for (const session of sessions)
      assert.is(
        (await session.request("GET", "/v1/auth/sessions/current")).status,
        200,
        "at the cap every session lives",
      );
    sessions.push(await signIn(server, user.email, user.password));
    assert.is((await sessions[0].request("GET", "/v1/auth/sessions/current")).status, 401, "the oldest ended");
    for (const session of sessions.slice(1))
      assert.is((await session.request("GET", "/v1/auth/sessions/current")).status, 200);
    const ended = await server.db.knex("audit_events").where({ action: "session.ended" });
    assert.ok(ended.some((event: { data: unknown }) => String(event.data).includes("session_limit")));
  },
);

test.run();
