// Sign in, sign out, a session that ends mid-use, and the organization switcher, in Chromium
// against the real server.
import * as assert from "uvu/assert";
import { harnessSuite } from "../support/index.ts";

const test = harnessSuite("sign-in and session");

test("a signed-out deep link goes to sign-in, a wrong password is refused, the right one returns to the link", async ({
  h,
  acme,
}) => {
  const user = await h.user(acme, "viewer", { displayName: "Vera Viewer" });
  const { page } = await h.newPage();
  await page.goto(h.url("/runs?status=applied"));
  await page.waitForURL((u) => u.pathname === "/sign-in");
  assert.is(new URL(page.url()).searchParams.get("next"), "/runs?status=applied");
  await page.getByRole("heading", { name: "Sign in to StackShip" }).waitFor();
  // Focus starts in the email field.
  assert.is(
    await page.getByLabel("Email").evaluate((el) => (el.getRootNode() as ShadowRoot).activeElement === el),
    true,
  );
  await h.screenshot(page, "sign-in");
  await h.checkA11y(page, "sign-in page");

  await page.keyboard.type(user.email);
  await page.keyboard.press("Tab");
  await page.keyboard.type("not the password at all");
  await page.keyboard.press("Tab");
  assert.is(
    await page
      .getByRole("button", { name: "Sign in" })
      .evaluate((el) => (el.getRootNode() as ShadowRoot).activeElement === el),
    true,
    "Tab reaches Sign in",
  );
  await page.keyboard.press("Enter");
  await page.getByRole("alert").filter({ hasText: "The email or password is not right." }).waitFor();
  assert.is(
    await page.getByLabel("Password").evaluate((el) => (el.getRootNode() as ShadowRoot).activeElement === el),
    true,
    "focus returns to the password",
  );
  assert.is(new URL(page.url()).pathname, "/sign-in", "still on sign-in");
  await h.screenshot(page, "sign-in-wrong-password");
  await h.checkA11y(page, "sign-in page with an error");

  // Keyboard only: the password field, then Enter.
  await page.getByLabel("Password").focus();
  await page.keyboard.press("Control+A");
  await page.keyboard.type(user.password);
  await page.keyboard.press("Enter");
  await page.waitForURL((u) => u.pathname === "/runs");
  assert.is(new URL(page.url()).search, "?status=applied", "back to exactly where they were going");
  await page.getByText("Vera Viewer").waitFor();
  // The session cookie is HttpOnly: the page's script cannot read it.
  assert.is(await page.evaluate(() => document.cookie), "");
});

test("sign out ends the session: the dashboard returns to sign-in and stays there", async ({ h, acme }) => {
  const { page } = await h.signInAs(acme, "operator");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL((u) => u.pathname === "/sign-in");
  await page.getByText("You are signed out.").waitFor();
  await h.screenshot(page, "signed-out");
  await page.goto(h.url("/runs"));
  await page.waitForURL((u) => u.pathname === "/sign-in");
  assert.is(new URL(page.url()).searchParams.get("next"), "/runs");
});

test("a session that expires sends the person to sign-in, and signing in again returns to where they were", async ({
  h,
  acme,
}) => {
  const workspace = await h.workspace(acme, "expiry-app");
  const { page, user } = await h.signInAs(acme, "viewer");
  await page.goto(h.url(`/workspaces/${workspace.id}`));
  await page.getByRole("heading", { name: "expiry-app" }).waitFor();
  await h.expireSession(user.email);
  // The next read (here: going to the runs page through its link) answers 401.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Runs" }).click();
  await page.waitForURL((u) => u.pathname === "/sign-in");
  assert.is(new URL(page.url()).searchParams.get("next"), "/runs");
  await page.getByText("Your session has ended. Sign in again to continue where you were.").waitFor();
  await h.screenshot(page, "session-expired");
  await h.checkA11y(page, "sign-in after the session ended");
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((u) => u.pathname === "/runs");
  await page.getByRole("heading", { name: "Runs" }).waitFor();
});

test("the organization switcher appears only for a person in several organizations and changes the listed organization", async ({
  h,
  acme,
}) => {
  const { page: single } = await h.signInAs(acme, "viewer");
  await single.getByRole("heading", { name: "Runs" }).waitFor();
  assert.is(await single.getByLabel("Organization").count(), 0, "one organization: no switcher");
  assert.is(await single.locator("#organization-name").innerText(), "acme");

  const beta = await h.organization("beta");
  const user = await h.user(acme, "viewer");
  const { addMembership } = await import("../../../server/test/support/sessions.ts");
  await addMembership(h.server, "beta", user.email, "viewer");
  await h.makeRun(beta, "plan_failed", { workspace: await h.workspace(beta, "beta-app") });
  const { page } = await h.signInAs(acme, user);
  const switcher = page.getByLabel("Organization");
  await switcher.waitFor();
  assert.equal(await switcher.locator("option").allInnerTexts(), ["acme", "beta"]);
  await switcher.selectOption("beta");
  await page.getByRole("cell", { name: "beta-app" }).first().waitFor();
  await h.screenshot(page, "organization-switcher");
  await h.checkA11y(page, "runs page after switching organization");
  // The choice is remembered on reload.
  await page.reload();
  await page.getByRole("cell", { name: "beta-app" }).first().waitFor();
});

test("a person without any membership is told so after signing in, not shown an empty run history", async ({ h }) => {
  const { createUser } = await import("../../../server/test/support/sessions.ts");
  const loner = await createUser(h.server, { displayName: "Lonely Person" });
  const { page } = await h.newPage();
  await page.goto(h.url("/sign-in"));
  await page.getByLabel("Email").fill(loner.email);
  await page.getByLabel("Password").fill(loner.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((u) => u.pathname === "/runs");
  await page.getByText("You are not a member of any organization yet. Ask an organization admin to add you.").waitFor();
  assert.is(await page.locator("#runs-empty").count(), 0);
  await h.screenshot(page, "runs-page-no-organization");
  await h.checkA11y(page, "runs page without an organization");
});

test.run();
