// The first run in Chromium against the real server: the one-time setup link `npm start` prints
// (issued here the way main.ts issues it) creates the deployment administrator and the first
// organization, signs in, and the next steps hand out a CLI token once with the exact cloud block.
// A wrong or used link explains itself and creates nothing.
import type { Locator } from "playwright-core";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { issueSetupToken } from "../../../server/src/commands/setup.ts";
import { hook, responseBodies, startHarness, type Harness } from "../support/index.ts";

const test = suite<{ h: Harness; token: string; cliToken: string }>("first-run setup page");

test.before(
  hook(async (ctx) => {
    ctx.h = await startHarness();
    const link = await issueSetupToken(ctx.h.server.services);
    if (!link) throw new Error("the harness's server already has a deployment administrator");
    ctx.token = link.token;
  }),
);
test.after(
  hook(async (ctx) => {
    await ctx.h?.stop();
  }),
);

const administrators = async (h: Harness) => (await h.server.db.knex("users").where({ site_admin: true })).length;
const focused = (locator: Locator) => locator.evaluate((el) => (el.getRootNode() as ShadowRoot).activeElement === el);

test("a wrong link explains what to do and creates nothing", async ({ h, token }) => {
  const { page } = await h.newPage();
  await page.goto(h.url(`/setup?token=${token.slice(0, -3)}${token.endsWith("abc") ? "xyz" : "abc"}`));
  await page.getByRole("heading", { name: "This setup link cannot be used" }).waitFor();
  assert.match(await page.getByRole("alert").innerText(), /unknown, has expired .* or was already used/);
  assert.ok(
    await page.getByText(/restart StackShip and open the link it prints/).isVisible(),
    "says how to get a new link",
  );
  assert.is(await page.getByRole("link", { name: "sign in" }).getAttribute("href"), "/sign-in");
  assert.is(await page.title(), "Set up · StackShip");
  assert.is(await administrators(h), 0);
  await h.screenshot(page, "setup-link-refused");
  await h.checkA11y(page, "setup link refused");
  await page.goto(h.url("/setup"));
  await page.getByRole("heading", { name: "This setup link cannot be used" }).waitFor();
});

test("the link creates the administrator and the organization, signs in, and hands out a CLI token once", async (ctx) => {
  const { h, token } = ctx;
  const { page } = await h.newPage();
  await page.goto(h.url(`/setup?token=${token}`));
  await page.getByRole("heading", { name: "Set up StackShip" }).waitFor();
  assert.ok(await focused(page.getByLabel("Email")), "focus starts in the email field");
  await h.screenshot(page, "setup-form");
  await h.checkA11y(page, "setup form");

  await page.getByLabel("Email").fill("first.admin@example.com");
  await page.getByLabel("Display name").fill("Ada Admin");
  await page.getByLabel("Password").fill("eleven char"); // 11
  await page.getByLabel("First organization (optional)").fill("acme-setup");
  await page.getByRole("button", { name: "Create administrator" }).click();
  assert.is(await page.getByRole("alert").innerText(), "The password needs at least 12 characters.");
  assert.ok(await focused(page.getByLabel("Password")), "focus returns to the password");
  assert.is(await administrators(h), 0, "nothing created for a short password");

  await page.getByLabel("Password").fill("twelve chars"); // 12
  await page.getByRole("button", { name: "Create administrator" }).click();
  await page.getByRole("heading", { name: "StackShip is ready" }).waitFor();
  assert.match(await page.locator("#setup-done").innerText(), /deployment administrator of organization acme-setup/);
  await page.getByText("Ada Admin").waitFor(); // signed in: the header names them
  assert.is(await administrators(h), 1);

  await page.getByRole("button", { name: "Create CLI token" }).click();
  const secret = (await page.locator("#cli-token").innerText()).trim();
  ctx.cliToken = secret;
  assert.ok(secret.length > 20, secret);
  assert.match(await page.locator("#cli-token-note").innerText(), /never show it again/);
  assert.ok((await page.locator("#credentials-snippet").innerText()).includes(`token = "${secret}"`));
  const cloud = await page.locator("#cloud-snippet").innerText();
  assert.match(cloud, /hostname\s+= "localhost:8443"/);
  assert.match(cloud, /organization = "acme-setup"/);
  await h.screenshot(page, "setup-next-steps");
  await h.checkA11y(page, "setup next steps");
  // The token works for the organization it names.
  const workspaces = await fetch(h.url("/api/v2/organizations/acme-setup/workspaces"), {
    headers: { Authorization: `Bearer ${secret}` },
  });
  assert.is(workspaces.status, 200);
  // …including what `tofu init` does on first use: create the workspace the cloud block names.
  const created = await fetch(h.url("/api/v2/organizations/acme-setup/workspaces"), {
    method: "POST",
    headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({ data: { type: "workspaces", attributes: { name: "app" } } }),
  });
  assert.is(created.status, 201, await created.text());

  await page.getByRole("link", { name: "Go to the runs page" }).click();
  await page.waitForURL((u) => u.pathname === "/runs");
  await page.getByRole("heading", { name: "Runs" }).waitFor();
  assert.is(await page.locator("#organization-name").innerText(), "acme-setup");
  assert.is(await page.title(), "Runs · StackShip");

  // The link was spent: opening it again explains, and nothing more is created.
  const { page: again } = await h.newPage();
  await again.goto(h.url(`/setup?token=${token}`));
  await again.getByRole("heading", { name: "This setup link cannot be used" }).waitFor();
  assert.is(await administrators(h), 1);
});

test("from the first sign-in to an applied run without curl: workspace, two variables, a run started from the page, approved", async ({
  h,
  cliToken,
}) => {
  const CANARY = "CANARY-first-run-9k3v";
  const { makeConfigurationTarball } = await import("../../../server/test/support/factories.ts");
  const org = { name: "acme-setup", id: "", token: cliToken };
  const { page } = await h.newPage();
  const bodies = responseBodies(page);
  await page.goto(h.url("/sign-in"));
  await page.getByLabel("Email").fill("first.admin@example.com");
  await page.getByLabel("Password").fill("twelve chars");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((u) => u.pathname === "/runs");

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Workspaces" }).click();
  await page.getByRole("button", { name: "New workspace" }).click();
  await page.locator("#new-workspace-form").getByLabel("Name").fill("first-app");
  await page.locator("#new-workspace-form").getByRole("button", { name: "Create workspace" }).click();
  await page.getByRole("heading", { name: "first-app" }).waitFor();

  await page.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: "Variables" }).click();
  for (const [key, value, sensitive] of [
    ["greeting", "hello from the first run", false],
    ["api_key", CANARY, true],
  ] as const) {
    await page.getByRole("button", { name: "Add variable" }).click();
    const form = page.locator("#new-variable");
    await form.getByLabel("Key").fill(key);
    await form.getByLabel("Value").fill(value);
    if (sensitive) await form.getByLabel("Sensitive").check();
    await form.getByRole("button", { name: "Add variable" }).click();
    await page.locator(`tr[data-variable-key=${key}]`).waitFor();
  }

  await page.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: "Overview" }).click();
  await page.getByRole("button", { name: "Start a run" }).click();
  const start = page.locator("#start-run-form");
  await start.getByLabel("Configuration archive").setInputFiles({
    name: "first.tar.gz",
    mimeType: "application/gzip",
    buffer: makeConfigurationTarball({
      "main.tf":
        'variable "greeting" {}\nvariable "api_key" {\n  sensitive = true\n}\nresource "terraform_data" "hello" {\n  input = var.greeting\n}\nresource "terraform_data" "key" {\n  input = var.api_key\n}\n',
    }),
  });
  await start.getByLabel("Message (optional)").fill("The first run");
  await start.getByRole("button", { name: "Start run" }).click();
  await page.waitForURL((u) => /^\/runs\/run-/.test(u.pathname));
  const runId = new URL(page.url()).pathname.split("/").pop()!;
  await h.waitForStatus(org, runId, ["awaiting_approval"]);
  await page.getByTestId("run-status").filter({ hasText: "Awaiting approval" }).waitFor();
  await page.getByRole("button", { name: "Approve plan" }).click();
  await page.getByTestId("attention-strip").waitFor({ state: "detached" });
  const applied = await h.waitForStatus(org, runId, ["applied", "errored", "needs_recovery"]);
  assert.is(applied.attributes.status, "applied");
  await page.getByTestId("run-status").filter({ hasText: "Applied" }).waitFor();
  await h.screenshot(page, "first-run-applied");
  assert.ok(
    bodies.length > 0 && !bodies.some((body) => body.includes(CANARY)),
    "the sensitive variable came back in a response",
  );
});

test.run();
