// The API tokens page in Chromium against the real server: an organization admin creates a token
// (the secret shown once, working at once), sees it listed without its secret, and revokes it
// (401 at once); the navigation offers the page only to admins, and an operator who types the URL
// is told plainly.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { hook, startHarness, type Harness, type HarnessOrganization } from "../support/index.ts";

const test = suite<{ h: Harness; acme: HarnessOrganization }>("API tokens page");

test.before(
  hook(async (ctx) => {
    ctx.h = await startHarness();
    ctx.acme = await ctx.h.organization("acme");
  }),
);
test.after(
  hook(async (ctx) => {
    await ctx.h?.stop();
  }),
);

const workspacesWith = (h: Harness, secret: string) => fetch(h.url("/v1/organizations/acme/workspaces"), { headers: { Authorization: `Bearer ${secret}` } });

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
  assert.not.ok((await page.locator("ss-tokens-page").evaluate((el) => el.shadowRoot!.textContent ?? "")).includes(secret), "the secret is shown again");
  assert.is(await page.locator("#token-secret").count(), 0);

  await row.getByRole("button", { name: /^Revoke/ }).click();
  await row.getByRole("button", { name: "Revoke token" }).click();
  await row.waitFor({ state: "detached" });
  assert.is((await workspacesWith(h, secret)).status, 401, "a revoked token gets 401 at once");
});

test("the navigation offers API tokens only to admins; an operator typing the URL is told plainly", async ({ h, acme }) => {
  const { page } = await h.signInAs(acme, "operator");
  await page.getByRole("heading", { name: "Runs" }).waitFor();
  assert.is(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API tokens" }).count(), 0);
  await page.goto(h.url("/tokens"));
  await page.locator("#tokens-not-allowed").waitFor();
  assert.match(await page.locator("#tokens-not-allowed").innerText(), /Only an administrator of acme manages its API tokens/);
  assert.is(await page.getByRole("button", { name: "Create token" }).count(), 0);
  await h.screenshot(page, "tokens-not-allowed");
  await h.checkA11y(page, "tokens page for an operator");
});

test.run();
