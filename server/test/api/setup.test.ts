import { suite } from "uvu";
import * as assert from "uvu/assert";
import { issueSetupToken, SETUP_LINK_TTL_MS } from "../../src/commands/setup.ts";
import { applicationTables, databaseText, expectNothingWritten, leakForms } from "../support/database.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

// The first run: the one-time setup link npm start prints while no deployment administrator exists.

const PASSWORD = "twelve chars"; // exactly 12

const post = (server: TestServer, path: string, document: unknown, cookie?: string) =>
  fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/vnd.api+json", ...(cookie ? { Cookie: cookie } : {}) },
    body: JSON.stringify(document),
  });

const setupDocument = (token: string, overrides: Record<string, unknown> = {}) => ({
  data: {
    type: "setups",
    attributes: {
      token,
      email: "first@example.com",
      display_name: "First Admin",
      password: PASSWORD,
      organization_name: "acme",
      ...overrides,
    },
  },
});
const completeSetup = (server: TestServer, token: string, overrides: Record<string, unknown> = {}) =>
  post(server, "/v1/setup", setupDocument(token, overrides));
const checkToken = (server: TestServer, token: string) =>
  post(server, "/v1/setup/token-checks", { data: { type: "setup-token-checks", attributes: { token } } });

async function errorCode(response: Response, status: number): Promise<string> {
  const body = (await response.json()) as { errors: Array<{ code: string }> };
  assert.is(response.status, status, JSON.stringify(body));
  return body.errors[0].code;
}

async function issued(server: TestServer): Promise<string> {
  const link = await issueSetupToken(server.services);
  assert.ok(link, "no setup link was issued on a deployment without an administrator");
  return link.token;
}

// Everything but the audit trail (events and chain heads): a refused setup creates no user, organization, session or token.
const writeTables = async (server: TestServer) =>
  (await applicationTables(server)).filter((table) => !table.startsWith("audit_"));

const refusals = async (server: TestServer) =>
  (await server.db.knex("audit_events").where({ action: "setup.refused" }).select("data")).length;

const sessionCookieOf = (response: Response) => (response.headers.get("set-cookie") ?? "").split(";")[0];

// ---------------------------------------------------------------------------------------------
const setup = suite("one-time setup link");

testEachServer(
  setup,
  "the link creates the deployment administrator, the first organization and a session; its token is stored only hashed",
  async (server) => {
    const token = await issued(server);
    const check = await checkToken(server, token);
    assert.is(check.status, 200);
    const response = await completeSetup(server, token);
    assert.is(response.status, 201, await response.clone().text());
    const body = (await response.json()) as {
      data: { attributes: { user: { email: string; site_admin: boolean }; csrf_token: string } };
    };
    assert.is(body.data.attributes.user.email, "first@example.com");
    assert.ok(body.data.attributes.user.site_admin);
    const cookie = sessionCookieOf(response);
    assert.match(cookie, /^stackship_session=sss\./);
    // Signed in: the session reads itself and, as a deployment administrator, sees the new organization.
    const current = await fetch(`${server.baseUrl}/v1/auth/sessions/current`, { headers: { Cookie: cookie } });
    assert.is(current.status, 200);
    const organizations = await fetch(`${server.baseUrl}/v1/organizations`, { headers: { Cookie: cookie } });
    const listed = (await organizations.json()) as { data: Array<{ attributes: { name: string } }> };
    assert.equal(
      listed.data.map((o) => o.attributes.name),
      ["acme"],
    );
    const text = await databaseText(server);
    for (const form of leakForms(token)) assert.not.ok(text.includes(form), "the setup token is stored in clear");
    for (const form of leakForms(PASSWORD)) assert.not.ok(text.includes(form), "the password is stored in clear");
    const completed = await server.db.knex("audit_events").where({ action: "setup.completed" });
    assert.is(completed.length, 1);
  },
);

testEachServer(setup, "the organization is optional", async (server) => {
  const token = await issued(server);
  const response = await completeSetup(server, token, { organization_name: undefined });
  assert.is(response.status, 201);
  const [counted] = await server.db.knex("organizations").count({ n: "*" });
  assert.is(String(counted?.n), "0");
});

testEachServer(
  setup,
  "a password of 11 characters is refused and creates nothing; the token stays usable for 12",
  async (server) => {
    const token = await issued(server);
    const tables = await writeTables(server);
    const short = await expectNothingWritten(
      server,
      () => completeSetup(server, token, { password: "eleven char" }),
      tables,
    );
    assert.is(await errorCode(short, 422), "DOCUMENT_INVALID");
    assert.is((await completeSetup(server, token)).status, 201);
  },
);

testEachServer(
  setup,
  "a used token is refused with SETUP_TOKEN_INVALID, creates nothing and is audited",
  async (server) => {
    const token = await issued(server);
    assert.is((await completeSetup(server, token)).status, 201);
    const tables = await writeTables(server);
    // The attack: replay the printed link to create a second administrator.
    const replay = await expectNothingWritten(
      server,
      () => completeSetup(server, token, { email: "attacker@example.com", organization_name: "evil" }),
      tables,
    );
    assert.is(await errorCode(replay, 422), "SETUP_TOKEN_INVALID");
    assert.is(sessionCookieOf(replay), "");
    assert.is(await errorCode(await checkToken(server, token), 422), "SETUP_TOKEN_INVALID");
    assert.is(await refusals(server), 2);
    assert.is((await server.db.knex("users").where({ email: "attacker@example.com" })).length, 0);
  },
);

testEachServer(setup, "a wrong token is refused, creates nothing and is audited without its text", async (server) => {
  const token = await issued(server);
  const wrong = `${token.slice(0, -2)}${token.endsWith("xx") ? "yy" : "xx"}`;
  const tables = await writeTables(server);
  const response = await expectNothingWritten(server, () => completeSetup(server, wrong), tables);
  assert.is(await errorCode(response, 422), "SETUP_TOKEN_INVALID");
  assert.is(await errorCode(await checkToken(server, wrong), 422), "SETUP_TOKEN_INVALID");
  assert.is(await refusals(server), 2);
  const audit = JSON.stringify(await server.db.knex("audit_events").where({ action: "setup.refused" }));
  assert.not.ok(audit.includes(wrong), "the refused token is in the audit trail");
  // The real link still works.
  assert.is((await completeSetup(server, token)).status, 201);
});

let now = new Date("2026-12-04T12:00:00Z");
testEachServer(
  setup,
  "a link expires after one hour",
  async (server) => {
    now = new Date("2026-12-04T12:00:00Z");
    const token = await issued(server);
    now = new Date(now.getTime() + SETUP_LINK_TTL_MS - 1000);
    assert.is((await checkToken(server, token)).status, 200);
    now = new Date(now.getTime() + 1000);
    const tables = await writeTables(server);
    const late = await expectNothingWritten(server, () => completeSetup(server, token), tables);
    assert.is(await errorCode(late, 422), "SETUP_TOKEN_INVALID");
  },
  { clock: () => now },
);

testEachServer(setup, "each start's new link retires the one before", async (server) => {
  const first = await issued(server);
  const second = await issued(server);
  assert.is(await errorCode(await completeSetup(server, first), 422), "SETUP_TOKEN_INVALID");
  assert.is((await completeSetup(server, second)).status, 201);
});

testEachServer(setup, "two setups racing on one token: exactly one administrator", async (server) => {
  const token = await issued(server);
  const answers = await Promise.all([
    completeSetup(server, token, { email: "a@example.com", organization_name: "org-a" }),
    completeSetup(server, token, { email: "b@example.com", organization_name: "org-b" }),
  ]);
  assert.equal(answers.map((a) => a.status).sort(), [201, 422]);
  assert.is((await server.db.knex("users").where({ site_admin: true })).length, 1);
});

testEachServer(
  setup,
  "once an administrator exists no link is issued, and a link issued before is refused",
  async (server) => {
    assert.is(await issueSetupToken(server.services), null);
    // A link from before the administrator existed (e.g. the environment variables were set on a later start).
    await server.db.knex("users").update({ site_admin: false });
    const token = await issued(server);
    await server.db.knex("users").update({ site_admin: true });
    const tables = await writeTables(server);
    const late = await expectNothingWritten(server, () => completeSetup(server, token), tables);
    assert.is(await errorCode(late, 422), "SETUP_TOKEN_INVALID");
    assert.is(await errorCode(await checkToken(server, token), 422), "SETUP_TOKEN_INVALID");
  },
  { config: { bootstrapAdmin: { email: "env-admin@example.com", password: "a long enough password" } } },
);

setup.run();
