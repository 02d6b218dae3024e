// The workspace pages the run page links to, in Chromium against real runs: overview (settings,
// runs, current state version, lock), state (published versions with serial, time and digest),
// cloud access and source settings (what exists, and plainly what is not configured; their
// controls are in workspace-settings.test.ts).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { StateVersionRow, WorkspaceVariableRow } from "../../../server/src/store/rows.ts";
import { until } from "../../../server/test/support/poll.ts";
import {
  hook,
  responseBodies,
  startHarness,
  type Harness,
  type HarnessOrganization,
  type MadeRun,
} from "../support/index.ts";

const test = suite<{ h: Harness; acme: HarnessOrganization; applied: MadeRun; awaiting: MadeRun }>("workspace pages");

test.before(
  hook(async (ctx) => {
    const h = (ctx.h = await startHarness());
    ctx.acme = await h.organization("acme");
    const workspace = await h.workspace(ctx.acme, "web-frontend", { tracked_branch: "release" });
    ctx.applied = await h.makeRun(ctx.acme, "applied", { workspace, message: "First apply" });
    // Awaiting approval, it holds the workspace lock.
    const changed = { "main.tf": 'resource "terraform_data" "greeting" {\n  input = "hello again"\n}\n' };
    ctx.awaiting = await h.makeRun(ctx.acme, "awaiting_approval", {
      workspace,
      message: "Second change",
      files: changed,
    });
  }),
);
test.after(
  hook(async (ctx) => {
    await ctx.h?.stop();
  }),
);

test("overview: settings, the workspace's runs, the current state version and who holds the lock", async ({
  h,
  acme,
  applied,
  awaiting,
}) => {
  const { page } = await h.signInAs(acme, "viewer");
  await page.goto(h.url(`/workspaces/${applied.workspace.id}`));
  await page.getByRole("heading", { name: "web-frontend" }).waitFor();
  const text = async () =>
    (await page.locator("ss-workspace-page dl.facts").innerText()) +
    (await page.locator("ss-workspace-page table").innerText());
  await page.locator("#current-state").waitFor();
  await page.getByRole("cell", { name: /Second change/ }).waitFor();
  const body = await text();
  for (const fact of [
    "Tracked branch",
    "release",
    "Working directory",
    "OpenTofu version",
    applied.run.attributes.opentofu_version,
    "acme",
  ])
    assert.match(body, fact);
  assert.match(await page.locator("#current-state").innerText(), /Current state: serial 1, published .* by run run-/);
  assert.is(await page.locator("#current-state a").getAttribute("href"), `/runs/${applied.run.id}`);
  assert.match(await page.locator("#lock-state").innerText(), `Locked by run ${awaiting.run.id}`);
  assert.match(body, "First apply");
  const crumbs = (await page.getByRole("navigation", { name: "Breadcrumb" }).innerText()).replace(/\s+/g, " ").trim();
  assert.is(crumbs, "acme › Workspaces › Workspace web-frontend");
  assert.match(body, "Second change");
  await h.screenshot(page, "workspace-overview");
  await h.checkA11y(page, "workspace overview");

  // The tabs reach the other pages without a reload.
  await page.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: "State" }).click();
  await page.waitForURL((u) => u.pathname === `/workspaces/${applied.workspace.id}/state`);
});

test("state page: published versions with serial, publication time and digest; the current one; the lock", async ({
  h,
  acme,
  applied,
  awaiting,
}) => {
  const version = await h.server.db
    .knex("state_versions")
    .where({ run_id: applied.run.id, status: "finalized" })
    .first<StateVersionRow>();
  const { page } = await h.signInAs(acme, "viewer");
  await page.goto(h.url(`/workspaces/${applied.workspace.id}/state`));
  const row = page.locator(`tr[data-state-version-id="${version.id}"]`);
  await row.waitFor();
  const cells = await row.locator("td").allInnerTexts();
  assert.is(cells[0], "1 (current)");
  assert.is(cells[1], `${new Date(version.published_at!).toISOString().slice(0, 19).replace("T", " ")} UTC`);
  assert.is(cells[2], version.sha256);
  assert.is(cells[4], applied.run.id);
  assert.match(await page.locator("#lock-state").innerText(), awaiting.run.id);
  await h.screenshot(page, "workspace-state");
  await h.checkA11y(page, "workspace state page");
});

test("cloud access and source settings say what exists and, plainly, what is not configured", async ({
  h,
  acme,
  applied,
}) => {
  const { page } = await h.signInAs(acme, "operator");
  await page.goto(h.url(`/workspaces/${applied.workspace.id}/cloud-access`));
  await page.locator("#workload-identity-off").waitFor();
  assert.match(
    await page.locator("#workload-identity-off").innerText(),
    "Workload identity is off on this deployment.",
  );
  assert.match(await page.locator("#profiles-empty").innerText(), "This workspace has no federation profile");
  await h.screenshot(page, "workspace-cloud-access");
  await h.checkA11y(page, "cloud access page");

  await page.goto(h.url(`/workspaces/${applied.workspace.id}/source`));
  await page.getByText("No Git repository is connected to this workspace.").waitFor();
  assert.is(await page.locator("#tracked-branch").innerText(), "release");
  assert.is(
    await page.locator("#working-directory").innerText(),
    applied.workspace.attributes.working_directory || "/",
  );
  await h.screenshot(page, "workspace-source");
  await h.checkA11y(page, "source settings page");
});

test("a workspace that does not exist (or may not be seen) is said to be unavailable, on every workspace page", async ({
  h,
  acme,
}) => {
  const { page } = await h.signInAs(acme, "viewer");
  for (const suffix of ["", "/state", "/cloud-access", "/source"]) {
    await page.goto(h.url(`/workspaces/ws-0000000000000000${suffix}`));
    const alert = page.locator("#workspace-unavailable");
    await alert.waitFor();
    assert.match(await alert.innerText(), "There is no such workspace, or you may not see it.");
  }
  await h.screenshot(page, "workspace-missing");
  await h.checkA11y(page, "missing workspace");
});

test("the workspaces list: latest run, lock and state per workspace, a name filter, and New workspace", async ({
  h,
  acme,
  awaiting,
}) => {
  const { page } = await h.signInAs(acme, "operator");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Workspaces" }).click();
  await page.waitForURL((u) => u.pathname === "/workspaces");
  assert.is(await page.title(), "Workspaces · StackShip");
  const row = page.locator("tr[data-workspace-id]").filter({ hasText: "web-frontend" });
  await row.waitFor();
  const [lock, serial] = [row.locator("ss-workspace-state-cell").nth(0), row.locator("ss-workspace-state-cell").nth(1)];
  await lock.getByRole("link", { name: awaiting.run.id }).waitFor();
  const shown = (cell: typeof lock) =>
    cell.evaluate((el) => (el.shadowRoot?.textContent ?? "").replace(/\s+/g, " ").trim());
  assert.is(await shown(lock), `locked by ${awaiting.run.id}`);
  await until(async () => (await shown(serial)) !== "…", "the serial cell to load", 30_000, 100);
  assert.is(await shown(serial), "serial 1");
  assert.match(await row.innerText(), /Default Project/);
  assert.match(await row.locator("ss-status-badge span").first().innerText(), /Awaiting approval/);
  assert.is(
    await row.getByRole("link", { name: /Awaiting approval/ }).getAttribute("href"),
    `/runs/${awaiting.run.id}`,
  );
  await h.screenshot(page, "workspaces-list");
  await h.checkA11y(page, "workspaces list");

  await page.getByLabel("Filter by name").fill("zzz");
  await page.getByText("No workspace name contains “zzz”.").waitFor();
  await page.getByLabel("Filter by name").fill("web");
  await page.locator("#workspaces-count").filter({ hasText: "whose name contains “web”" }).waitFor();
  assert.is(await page.locator("tr[data-workspace-id]").count(), 1);

  await page.getByRole("button", { name: "New workspace" }).click();
  const form = page.locator("#new-workspace-form");
  await form.getByLabel("Name").fill("made-in-the-dashboard");
  await form.getByLabel("Working directory (optional)").fill("infra/prod");
  await form.getByLabel("Description (optional)").fill("from the list page");
  await form.getByRole("button", { name: "Create workspace" }).click();
  await page.waitForURL((u) => /^\/workspaces\/ws-/.test(u.pathname));
  await page.getByRole("heading", { name: "made-in-the-dashboard" }).waitFor();
  assert.match(await page.locator("ss-workspace-page dl.facts").innerText(), /infra\/prod/);
});

test("variables: an operator adds a plain and a sensitive one (never shown again, in no answer), edits and deletes; a viewer sees no control", async ({
  h,
  acme,
}) => {
  const CANARY = "CANARY-s3cr3t-value-7q2x";
  const workspace = await h.workspace(acme, "with-variables");
  const { page } = await h.signInAs(acme, "operator");
  const bodies = responseBodies(page);
  await page.goto(h.url(`/workspaces/${workspace.id}`));
  await page.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: "Variables" }).click();
  await page.waitForURL((u) => u.pathname === `/workspaces/${workspace.id}/variables`);
  await page.getByText("No variables yet.").waitFor();

  const add = async (key: string, value: string, sensitive: boolean) => {
    await page.getByRole("button", { name: "Add variable" }).click();
    const form = page.locator("#new-variable");
    await form.getByText("A sensitive value is write-only").waitFor();
    await form.getByLabel("Key").fill(key);
    await form.getByLabel("Value").fill(value);
    if (sensitive) await form.getByLabel("Sensitive").check();
    await form.getByRole("button", { name: "Add variable" }).click();
    await page.locator("tr[data-variable-key]").filter({ hasText: key }).waitFor();
  };
  await add("region", "eu-west-1", false);
  await add("db_password", CANARY, true);
  const secretRow = page.locator("tr[data-variable-key=db_password]");
  assert.match(await secretRow.innerText(), /sensitive: write-only/);
  assert.match(await page.locator("tr[data-variable-key=region]").innerText(), /eu-west-1/);
  await h.screenshot(page, "workspace-variables");
  await h.checkA11y(page, "workspace variables");

  // Editing the sensitive one shows no old value and keeps it when the value is left empty.
  await secretRow.getByRole("button", { name: "Edit db_password" }).click();
  const edit = page.locator("#edit-variable");
  assert.is(await edit.getByLabel("Value").inputValue(), "");
  await edit.getByLabel("Description").fill("the database password");
  await edit.getByRole("button", { name: "Save variable" }).click();
  await page.locator("#variables-notice").filter({ hasText: "db_password was saved." }).waitFor();
  const stored = await h.server.db
    .knex("workspace_variables")
    .where({ workspace_id: workspace.id, key: "db_password" })
    .first<WorkspaceVariableRow | undefined>();
  assert.ok(stored, "the sensitive variable still exists");

  await page.locator("tr[data-variable-key=region]").getByRole("button", { name: "Edit region" }).click();
  await page.locator("#edit-variable").getByLabel("Value").fill("us-east-1");
  await page.locator("#edit-variable").getByRole("button", { name: "Save variable" }).click();
  await page.locator("tr[data-variable-key=region]").filter({ hasText: "us-east-1" }).waitFor();
  await page.locator("tr[data-variable-key=region]").getByRole("button", { name: "Delete region" }).click();
  await page.getByRole("button", { name: "Delete variable" }).click();
  await page.locator("tr[data-variable-key=region]").waitFor({ state: "detached" });

  await page.reload();
  await secretRow.waitFor();
  assert.not.ok((await page.content()).includes(CANARY), "the sensitive value is on the page");
  assert.ok(
    bodies.length > 0 && !bodies.some((body) => body.includes(CANARY)),
    "the sensitive value came back in a response",
  );

  const viewer = await h.signInAs(acme, "viewer");
  await viewer.page.goto(h.url(`/workspaces/${workspace.id}/variables`));
  await viewer.page.locator("tr[data-variable-key=db_password]").waitFor();
  assert.is(await viewer.page.getByRole("button", { name: "Add variable" }).count(), 0);
  assert.is(await viewer.page.getByRole("button", { name: /^Edit|^Delete/ }).count(), 0);
});

test("start a run from the workspace page: a speculative plan on the newest run's configuration, and a plan from an uploaded .tar.gz", async ({
  h,
  acme,
}) => {
  const { makeConfigurationTarball } = await import("../../../server/test/support/factories.ts");
  const made = await h.makeRun(acme, "applied", { workspace: await h.workspace(acme, "start-here") });
  const { page } = await h.signInAs(acme, "operator");
  await page.goto(h.url(`/workspaces/${made.workspace.id}`));
  await page.getByRole("button", { name: "Start a run" }).click();
  const form = page.locator("#start-run-form");
  await form.getByLabel("Speculative plan (never applies)").check();
  assert.ok(
    await form.getByLabel(/The configuration of the newest run/).isChecked(),
    "the newest run's configuration is the default",
  );
  await form.getByLabel("Message (optional)").fill("from the dashboard");
  await h.screenshot(page, "workspace-start-run");
  await h.checkA11y(page, "start a run");
  await form.getByRole("button", { name: "Start run" }).click();
  await page.waitForURL((u) => /^\/runs\/run-/.test(u.pathname));
  const first = new URL(page.url()).pathname.split("/").pop()!;
  const done = await h.waitForStatus(acme, first, ["planned_and_finished", "errored"]);
  assert.is(done.attributes.status, "planned_and_finished");
  assert.is(done.attributes.kind, "speculative");
  assert.is(done.attributes.message, "from the dashboard");

  // An uploaded archive: a new configuration version, then the run on it.
  await page.goto(h.url(`/workspaces/${made.workspace.id}`));
  await page.getByRole("button", { name: "Start a run" }).click();
  await form.getByLabel("Speculative plan (never applies)").check();
  await form.getByLabel(/Upload a/).check();
  await form.getByLabel("Configuration archive").setInputFiles({
    name: "config.tar.gz",
    mimeType: "application/gzip",
    buffer: makeConfigurationTarball({
      "main.tf": 'resource "terraform_data" "uploaded" {\n  input = "from the browser"\n}\n',
    }),
  });
  await form.getByRole("button", { name: "Start run" }).click();
  await page.waitForURL((u) => /^\/runs\/run-/.test(u.pathname) && !u.pathname.endsWith(first));
  const second = new URL(page.url()).pathname.split("/").pop()!;
  const planned = await h.waitForStatus(acme, second, ["planned_and_finished", "errored"]);
  assert.is(planned.attributes.status, "planned_and_finished");
  assert.is.not(
    planned.relationships.configuration_version.data.id,
    done.relationships.configuration_version.data.id,
    "a new configuration version",
  );

  // Not a .tar.gz: the server's refusal, in its words, and no run.
  await page.goto(h.url(`/workspaces/${made.workspace.id}`));
  await page.getByRole("button", { name: "Start a run" }).click();
  await form.getByLabel(/Upload a/).check();
  await form
    .getByLabel("Configuration archive")
    .setInputFiles({ name: "notes.tar.gz", mimeType: "application/gzip", buffer: Buffer.from("not gzip at all") });
  await form.getByRole("button", { name: "Start run" }).click();
  await page.locator("#start-run-error").waitFor();
  assert.match(await page.locator("#start-run-error").innerText(), /CONFIGURATION_UPLOAD_INVALID/);
});

test("a viewer's New workspace is refused in the server's words, and nothing is created", async ({ h, acme }) => {
  const { page } = await h.signInAs(acme, "viewer");
  await page.goto(h.url("/workspaces"));
  await page.getByRole("button", { name: "New workspace" }).click();
  await page.locator("#new-workspace-form").getByLabel("Name").fill("not-allowed-here");
  await page.getByRole("button", { name: "Create workspace" }).click();
  await page.locator("#new-workspace-error").waitFor();
  assert.is((await h.server.db.knex("workspaces").where({ name: "not-allowed-here" })).length, 0);
});

test("lock and unlock from the workspace page with a reason; an administrator force-unlocks, renames, then deletes it by typing its name", async ({
  h,
  acme,
}) => {
  const workspace = await h.workspace(acme, "lockable");
  const operator = await h.signInAs(acme, "operator");
  const page = operator.page;
  await page.goto(h.url(`/workspaces/${workspace.id}`));
  await page.locator("#lock-state").waitFor();
  assert.match(await page.locator("#lock-state").innerText(), "not locked");
  await page.getByRole("button", { name: "Lock workspace" }).click();
  assert.ok(await page.getByText("Say why the workspace is locked").isVisible(), "no reason, no lock");
  await page.getByLabel("Lock reason").fill("rotating the provider credentials");
  await page.getByRole("button", { name: "Lock workspace" }).click();
  await page.getByRole("button", { name: "Unlock workspace" }).waitFor();
  assert.match(await page.locator("#lock-state").innerText(), /Locked by .*\(rotating the provider credentials\)/);
  await h.screenshot(page, "workspace-locked");
  await h.checkA11y(page, "workspace locked by its operator");

  // A viewer reads the lock and has nothing to press.
  const viewer = await h.signInAs(acme, "viewer");
  await viewer.page.goto(h.url(`/workspaces/${workspace.id}`));
  await viewer.page.locator("#lock-state").waitFor();
  assert.match(await viewer.page.locator("#lock-state").innerText(), "rotating the provider credentials");
  assert.is(await viewer.page.locator("ss-workspace-lock").getByRole("button").count(), 0);

  // The administrator releases it, after confirming.
  const admin = await h.signInAs(acme, "admin");
  await admin.page.goto(h.url(`/workspaces/${workspace.id}`));
  await admin.page.getByRole("button", { name: "Force unlock" }).click();
  await admin.page.getByRole("button", { name: "Yes, force unlock" }).click();
  await admin.page.getByRole("button", { name: "Lock workspace" }).waitFor();
  assert.match(await admin.page.locator("#lock-state").innerText(), "not locked");

  // The operator's page, reloaded, offers the lock again; deleting is not theirs to see.
  await page.reload();
  await page.getByRole("button", { name: "Lock workspace" }).waitFor();
  assert.is(await page.getByTestId("delete-workspace").count(), 0, "an operator has no delete control");

  // The administrator renames it, then deletes it by typing the new name; the list no longer has it.
  await admin.page.getByTestId("general-settings").locator("summary").click();
  await admin.page.getByLabel("Name", { exact: true }).fill("lockable-renamed");
  await admin.page.getByLabel("Description").fill("renamed from the dashboard");
  await admin.page.getByRole("button", { name: "Save settings" }).click();
  await admin.page.getByRole("heading", { name: "lockable-renamed" }).waitFor();
  await admin.page.getByTestId("delete-workspace").locator("summary").click();
  const remove = admin.page.getByRole("button", { name: "Delete workspace" });
  assert.not.ok(await remove.isEnabled(), "nothing typed, nothing to press");
  await admin.page.getByLabel(/Type lockable-renamed to confirm/).fill("lockable-renamed");
  await remove.click();
  await admin.page.waitForURL((u) => u.pathname === "/workspaces");
  await admin.page.locator("#workspaces-count").waitFor();
  assert.is(await admin.page.locator("tr[data-workspace-id]").filter({ hasText: "lockable-renamed" }).count(), 0);
});

test.run();
