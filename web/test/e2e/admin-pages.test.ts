// The administration pages in Chromium against the real server. API tokens: an organization admin
// creates a token (the secret shown once, working at once), sees it listed without its secret, and
// revokes it (401 at once). Members: add an existing user with a workspace scope, change the role,
// remove; a deployment administrator creates a user. The navigation offers these pages only to
// admins, and an operator who types a URL is told plainly.
import * as assert from "uvu/assert";
import { createUser } from "../../../server/test/support/sessions.ts";
import { harnessSuite, type Harness } from "../support/index.ts";

const test = harnessSuite("administration pages");

const workspacesWith = (h: Harness, secret: string) =>
  fetch(h.url("/v1/organizations/acme/workspaces"), { headers: { Authorization: `Bearer ${secret}` } });

test("an admin creates a token shown once, lists it without its secret, and revokes it", async ({ h, acme }) => {
  const { page } = await h.signInAs(acme, "admin");
  const nav = page.getByRole("navigation", { name: "Main" });
  await nav.getByRole("link", { name: "API tokens" }).click();
  await page.waitForURL((u) => u.pathname === "/tokens");
  await page.getByRole("heading", { name: "API tokens", level: 1 }).waitFor();
  assert.is(await page.title(), "API tokens · StackShip");
  assert.is(await nav.getByRole("link", { name: "API tokens" }).getAttribute("aria-current"), "page");

  await page.getByLabel("Role").selectOption("viewer");
  await page.getByLabel("Description").fill("CI pipeline");
  await page.getByRole("button", { name: "Create token" }).click();
  const secret = (await page.locator("#token-secret").innerText()).trim();
  assert.match(await page.locator("#token-created").innerText(), /will never show it again/);
  assert.is((await workspacesWith(h, secret)).status, 200, "the new token works at once");
  const row = page.locator("tr[data-token-id]").filter({ hasText: "CI pipeline" });
  await row.waitFor();
  assert.match(await row.innerText(), /viewer/);
  await h.screenshot(page, "tokens-created");
  await h.checkA11y(page, "tokens page with a new token");

  // Shown once: after a reload the secret is nowhere on the page.
  await page.reload();
  await row.waitFor();
  assert.not.ok(
    (await page.locator("ss-tokens-page").evaluate((el) => el.shadowRoot!.textContent ?? "")).includes(secret),
    "the secret is shown again",
  );
  assert.is(await page.locator("#token-secret").count(), 0);

  await row.getByRole("button", { name: /^Revoke/ }).click();
  await row.getByRole("button", { name: "Revoke token" }).click();
  await row.waitFor({ state: "detached" });
  assert.is((await workspacesWith(h, secret)).status, 401, "a revoked token gets 401 at once");
});

test("the navigation offers API tokens only to admins; an operator typing the URL is told plainly", async ({
  h,
  acme,
}) => {
  const { page } = await h.signInAs(acme, "operator");
  await page.getByRole("heading", { name: "Runs" }).waitFor();
  assert.is(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API tokens" }).count(), 0);
  await page.goto(h.url("/tokens"));
  await page.locator("#tokens-not-allowed").waitFor();
  assert.match(
    await page.locator("#tokens-not-allowed").innerText(),
    /Only an administrator of acme manages its API tokens/,
  );
  assert.is(await page.getByRole("button", { name: "Create token" }).count(), 0);
  await h.screenshot(page, "tokens-not-allowed");
  await h.checkA11y(page, "tokens page for an operator");
});

const membershipsOf = (h: Harness, userId: string) =>
  h.server.db.knex("memberships").where({ user_id: userId }).select("role", "scope_kind");

test("an admin adds a member with a workspace scope, changes the role and removes them; an unknown email is explained", async ({
  h,
  acme,
}) => {
  await h.workspace(acme, "app");
  const newcomer = await createUser(h.server, { displayName: "Nora Newcomer" });
  const { page } = await h.signInAs(acme, "admin");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Members" }).click();
  await page.waitForURL((u) => u.pathname === "/members");
  await page.getByRole("heading", { name: "Members", level: 1 }).waitFor();
  assert.is(await page.title(), "Members · StackShip");

  const add = page.locator("#add-member");
  await add.getByLabel("Email").fill("nobody-here@example.com");
  await add.getByRole("button", { name: "Add member" }).click();
  assert.match(await page.getByRole("alert").innerText(), /No user has this email/);

  await add.getByLabel("Email").fill(newcomer.email);
  await add.getByLabel("Role").selectOption("viewer");
  await add.getByLabel("Scope").selectOption({ label: "workspace app" });
  await add.getByRole("button", { name: "Add member" }).click();
  const row = page.locator("tr[data-membership-id]").filter({ hasText: newcomer.email });
  await row.waitFor();
  assert.match(await row.innerText(), /Nora Newcomer .*workspace app/s);
  assert.equal(await membershipsOf(h, newcomer.userId), [{ role: "viewer", scope_kind: "workspace" }]);
  await h.screenshot(page, "members");
  await h.checkA11y(page, "members page");

  await row.getByLabel(`Role of ${newcomer.email}`).selectOption("operator");
  await page.locator("#members-notice").filter({ hasText: "is now operator" }).waitFor();
  assert.equal(await membershipsOf(h, newcomer.userId), [{ role: "operator", scope_kind: "workspace" }]);

  await row.getByRole("button", { name: `Remove ${newcomer.email}` }).click();
  await row.getByRole("button", { name: "Remove member" }).click();
  await row.waitFor({ state: "detached" });
  assert.equal(await membershipsOf(h, newcomer.userId), []);
});

test("a deployment administrator creates a user from the members page", async ({ h, acme }) => {
  const admin = await createUser(h.server, { siteAdmin: true, displayName: "Site Admin" });
  const { page } = await h.signInAs(acme, { ...admin, displayName: "Site Admin", role: "admin" });
  await page.goto(h.url("/members"));
  await page.getByText("Create a user (deployment administrators)").click();
  const form = page.locator("#create-user");
  await form.getByLabel("Email").fill("made-here@example.com");
  await form.getByLabel("Display name").fill("Made Here");
  await form.getByLabel(/Password/).fill("eleven char");
  await form.getByRole("button", { name: "Create user" }).click();
  assert.match(await page.getByRole("alert").innerText(), /at least 12 characters/);
  await form.getByLabel(/Password/).fill("twelve chars");
  await form.getByRole("button", { name: "Create user" }).click();
  await page.locator("#members-notice").filter({ hasText: "The user made-here@example.com exists" }).waitFor();
  assert.is((await h.server.db.knex("users").where({ email: "made-here@example.com" })).length, 1);
});

test("the audit history lists what the earlier scenarios did, names the person, and filters by action and target", async ({
  h,
  acme,
}) => {
  const { page } = await h.signInAs(acme, "admin");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit" }).click();
  await page.waitForURL((u) => u.pathname === "/audit");
  await page.getByRole("heading", { name: "Audit history" }).waitFor();
  const rows = page.locator("tr[data-audit-id]");
  await rows.first().waitFor();
  // The chain starts with the organization itself.
  assert.match(await rows.first().innerText(), /^0\s.*organization\.created/s);
  await page.getByLabel("Action").selectOption("token.revoked");
  assert.is(await rows.count(), 1, "the revoked token of the first scenario");
  assert.match(await rows.first().innerText(), /tokens at-/);
  await page.getByLabel("Action").selectOption("");
  await page.getByLabel("Target").fill("memberships");
  const actions = await rows.evaluateAll((trs) => trs.map((tr) => tr.children[3].textContent));
  assert.ok(actions.length >= 3 && actions.every((a) => a?.startsWith("membership.")), actions.join(", "));
  assert.ok(actions.includes("membership.role_changed") && actions.includes("membership.removed"), actions.join(", "));
  assert.is(await page.title(), "Audit history · StackShip");
  await h.screenshot(page, "audit-history");
  await h.checkA11y(page, "audit history");
  // The person who changed the role is named, not shown as an id.
  await page.getByLabel("Target").fill("");
  await page.getByLabel("Action").selectOption("membership.role_changed");
  const who = await rows.first().evaluate((tr) => tr.children[2].textContent ?? "");
  assert.match(who, /^Admin /);
});

const rego = (pkg: string) =>
  Buffer.from(
    `package ${pkg}\n\nviolations contains {"title": "Never", "message": "never flagged"} if {\n  false\n}\n`,
  );

test("policy sets: an admin creates a global set from .rego files and publishes a new version; a viewer only reads", async ({
  h,
  acme,
}) => {
  const { page } = await h.signInAs(acme, "admin");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Policy sets" }).click();
  await page.waitForURL((u) => u.pathname === "/policy-sets");
  await page.getByText("No policy sets yet").waitFor();
  await page.getByRole("button", { name: "New policy set" }).click();
  const form = page.locator("#new-policy-set-form");
  await form.getByLabel("Name").fill("guardrails");
  await form
    .getByLabel(/Policies/)
    .setInputFiles([{ name: "no-public-buckets.rego", mimeType: "text/plain", buffer: rego("buckets") }]);
  await form.getByLabel("Enforcement level").selectOption("hard_mandatory");
  await form.getByRole("button", { name: "Create policy set" }).click();
  const set = page.locator("article[data-policy-set=guardrails]");
  await set.waitFor();
  assert.match(await set.innerText(), /Applies to every workspace \(global\)/);
  assert.match(await set.innerText(), /Version 1,/);
  assert.match(await set.locator("tbody").innerText(), /no-public-buckets\s+hard-mandatory\s+buckets/);

  await set.getByRole("button", { name: "New version of guardrails" }).click();
  await set.getByLabel(/Policies of the new version/).setInputFiles([
    { name: "no-public-buckets.rego", mimeType: "text/plain", buffer: rego("buckets") },
    { name: "tagging.rego", mimeType: "text/plain", buffer: rego("tagging") },
  ]);
  await set.getByLabel("Enforcement level").selectOption("advisory");
  await set.getByRole("button", { name: "Publish version" }).click();
  await page.locator("#policy-sets-notice").filter({ hasText: "guardrails has a new version" }).waitFor();
  await set.getByText("Version 2,").waitFor();
  assert.is(await set.locator("tbody tr").count(), 2);
  await h.screenshot(page, "policy-sets");
  await h.checkA11y(page, "policy sets");

  // Not Rego: the server's refusal, and no new version.
  await set.getByRole("button", { name: "New version of guardrails" }).click();
  await set
    .getByLabel(/Policies of the new version/)
    .setInputFiles([{ name: "broken.rego", mimeType: "text/plain", buffer: Buffer.from("this is not rego") }]);
  await set.getByRole("button", { name: "Publish version" }).click();
  await page.locator("#policy-sets-error").waitFor();
  await set.getByText("Version 2,").waitFor();

  const viewer = await h.signInAs(acme, "viewer");
  await viewer.page.goto(h.url("/policy-sets"));
  await viewer.page.locator("article[data-policy-set=guardrails]").waitFor();
  assert.is(await viewer.page.getByRole("button", { name: /New policy set|New version/ }).count(), 0);
});

test("organizations: a deployment administrator creates one and the switcher shows it; others are told plainly", async ({
  h,
  acme,
}) => {
  const admin = await createUser(h.server, { siteAdmin: true, displayName: "Deploy Admin" });
  const { page } = await h.signInAs(acme, { ...admin, displayName: "Deploy Admin", role: "admin" });
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Organizations" }).click();
  await page.waitForURL((u) => u.pathname === "/organizations");
  await page.locator("tr[data-organization=acme]").waitFor();
  await page.getByLabel("New organization").fill("second-org");
  await page.getByRole("button", { name: "Create organization" }).click();
  await page.locator("tr[data-organization=second-org]").waitFor();
  await page.getByLabel("Organization").locator("option", { hasText: "second-org" }).waitFor({ state: "attached" });
  assert.is((await h.server.db.knex("organizations").where({ name: "second-org" })).length, 1);
  await h.screenshot(page, "organizations");
  await h.checkA11y(page, "organizations page");
  await page.getByLabel("New organization").fill("second-org");
  await page.getByRole("button", { name: "Create organization" }).click();
  await page.locator("#organizations-error").waitFor();

  const other = await h.signInAs(acme, "admin");
  assert.is(
    await other.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Organizations" }).count(),
    0,
  );
  await other.page.goto(h.url("/organizations"));
  await other.page.locator("#organizations-not-allowed").waitFor();
});

test("an operator sees neither Members, API tokens nor Audit, and is told plainly on the URL", async ({ h, acme }) => {
  const { page } = await h.signInAs(acme, "operator");
  await page.getByRole("heading", { name: "Runs" }).waitFor();
  assert.is(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Members" }).count(), 0);
  await page.goto(h.url("/members"));
  await page.locator("#members-not-allowed").waitFor();
  assert.is(await page.getByRole("button", { name: "Add member" }).count(), 0);
  await page.goto(h.url("/audit"));
  await page.locator("#audit-not-allowed").waitFor();
  assert.is(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit" }).count(), 0);
});

test.run();
