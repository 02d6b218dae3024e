// /runs in Chromium against the real server and real runs: every rule of the runs paragraph.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Page } from "playwright-core";
import { addMembership } from "../../../server/test/support/sessions.ts";
import { hook, startHarness, type Harness, type HarnessOrganization, type MadeRun } from "../support/index.ts";

interface Context {
  h: Harness;
  acme: HarnessOrganization;
  awaiting: MadeRun;
  applied: MadeRun;
  failed: MadeRun;
  running: MadeRun;
}

const test = suite<Context>("runs page");

test.before(
  hook(async (ctx) => {
    const h = (ctx.h = await startHarness());
    ctx.acme = await h.organization("acme");
    ctx.applied = await h.makeRun(ctx.acme, "applied", {
      message: "Ship the greeting",
      workspace: await h.workspace(ctx.acme, "web-frontend"),
    });
    ctx.awaiting = await h.makeRun(ctx.acme, "awaiting_approval", {
      message: "Rotate the database password",
      workspace: await h.workspace(ctx.acme, "billing-db"),
    });
    ctx.failed = await h.makeRun(ctx.acme, "plan_failed", {
      message: "Broken numbers",
      workspace: await h.workspace(ctx.acme, "numbers"),
    });
    ctx.running = await h.makeRun(ctx.acme, "plan_running", {
      message: "A very large plan",
      workspace: await h.workspace(ctx.acme, "big-fleet"),
    });
  }),
);
test.after(
  hook(async (ctx) => {
    await ctx.h?.stop();
  }),
);

const rows = (page: Page) => page.locator("ss-runs-page tbody tr");
const rowOf = (page: Page, runId: string) => page.locator(`ss-runs-page tr[data-run-id="${runId}"]`);

test("the header links the API reference, which the server serves outside the dashboard", async ({ h, acme }) => {
  const { page } = await h.signInAs(acme, "viewer");
  const link = page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API reference" });
  assert.is(await link.getAttribute("href"), "/docs");
  await link.click();
  await page.waitForURL("**/docs");
  assert.is(await page.title(), "StackShip API");
});

test("every listed run: message, id, workspace name, status in words, duration final or ticking, relative time with the UTC time as tooltip", async (ctx) => {
  const { h, acme, applied, awaiting, failed, running } = ctx;
  const { page } = await h.signInAs(acme, "viewer");
  await rows(page).first().waitFor();
  assert.is(await rows(page).count(), 4);
  // Newest first.
  assert.equal(await rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run-id"))), [
    running.run.id,
    failed.run.id,
    awaiting.run.id,
    applied.run.id,
  ]);

  const done = rowOf(page, applied.run.id);
  assert.match(await done.innerText(), "Ship the greeting");
  assert.match(await done.innerText(), applied.run.id);
  assert.match(await done.innerText(), "web-frontend");
  assert.match(await done.locator("ss-status-badge span").innerText(), "Applied");
  assert.is(
    await done.getByRole("link", { name: "Ship the greeting" }).getAttribute("href"),
    `/runs/${applied.run.id}`,
  );
  assert.is(
    await done.getByRole("link", { name: "web-frontend" }).getAttribute("href"),
    `/workspaces/${applied.workspace.id}`,
  );
  assert.match(await rowOf(page, awaiting.run.id).locator("ss-status-badge span").innerText(), "Awaiting approval");
  assert.match(await rowOf(page, failed.run.id).locator("ss-status-badge span").innerText(), "Errored");
  assert.match(await rowOf(page, running.run.id).locator("ss-status-badge span").innerText(), "Planning");

  // A terminal run's duration is final: its finish minus its creation, and it does not move.
  const finalDuration = done.locator("td.duration");
  assert.is(await finalDuration.getAttribute("data-final"), "true");
  const a = applied.run.attributes;
  const seconds = Math.floor((Date.parse(a.finished_at!) - Date.parse(a.created_at)) / 1000);
  const expected =
    seconds >= 60
      ? `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s`
      : seconds === 0
        ? "<1 s"
        : `${seconds}s`;
  assert.is((await finalDuration.locator("span").first().innerText()).trim(), expected);

  // A run still planning ticks.
  const ticking = rowOf(page, running.run.id).locator("td.duration");
  assert.is(await ticking.getAttribute("data-final"), "false");
  const before = await ticking.locator("span").first().innerText();
  await page.waitForFunction(
    ([id, text]) => {
      const cell = document
        .querySelector("ss-app")
        ?.shadowRoot?.querySelector("ss-runs-page")
        ?.shadowRoot?.querySelector(`tr[data-run-id="${id}"] td.duration span`);
      return cell !== null && cell !== undefined && cell.textContent !== text;
    },
    [running.run.id, before] as const,
    { timeout: 30_000 },
  );
  assert.is(
    (await finalDuration.locator("span").first().innerText()).trim(),
    expected,
    "the final duration did not move",
  );

  // Relative created time, absolute UTC as its tooltip.
  const time = done.locator("time");
  assert.match(await time.innerText(), /^(just now|\d+ seconds? ago|\d+ minutes? ago)$/);
  assert.is(
    await time.getAttribute("title"),
    `${new Date(a.created_at).toISOString().slice(0, 19).replace("T", " ")} UTC`,
  );
  assert.is(await time.getAttribute("datetime"), a.created_at);

  await h.screenshot(page, "runs-page");
  await h.checkA11y(page, "runs page");

  // The dark tokens keep the same page readable (axe checks contrast too).
  const { page: dark } = await h.signInAs(acme, "viewer", { colorScheme: "dark" });
  await rows(dark).first().waitFor();
  assert.is(
    await dark.evaluate(() => getComputedStyle(document.querySelector("ss-app")!).backgroundColor),
    "rgb(16, 19, 23)",
  );
  await h.screenshot(dark, "runs-page-dark");
  await h.checkA11y(dark, "runs page, dark");
  await h.cancel(acme, running.run.id);
});

test("the free-text filter matches run id, message and workspace name; status and workspace filters narrow the loaded rows", async (ctx) => {
  const { h, acme, applied, awaiting, failed, running } = ctx;
  const { page } = await h.signInAs(acme, "viewer");
  await rows(page).first().waitFor();
  const filter = page.getByLabel("Filter");
  const ids = () => rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run-id")));

  await filter.fill("billing");
  assert.equal(await ids(), [awaiting.run.id], "by workspace name");
  await filter.fill("GREETING");
  assert.equal(await ids(), [applied.run.id], "by message, case-insensitive");
  await filter.fill(failed.run.id.slice(-8));
  assert.equal(await ids(), [failed.run.id], "by run id");
  await filter.fill("nothing matches this");
  await page.getByText("No loaded runs match these filters.").waitFor();
  await h.screenshot(page, "runs-page-no-match");
  await filter.fill("");

  await page.getByLabel("Status").selectOption("errored");
  assert.equal(await ids(), [failed.run.id]);
  assert.is(new URL(page.url()).search, "?status=errored", "the status filter is in the URL");
  await page.getByLabel("Status").selectOption("");
  assert.is(new URL(page.url()).search, "");

  await page.getByLabel("Workspace").selectOption({ label: "big-fleet" });
  assert.equal(await ids(), [running.run.id]);
  await page.getByLabel("Status").selectOption("applied");
  await page.getByText("No loaded runs match these filters.").waitFor();
  await h.checkA11y(page, "runs page filtered to nothing");
});

test("?status= initialises the status filter (a link to /runs?status=awaiting_approval lists only those)", async ({
  h,
  acme,
  awaiting,
}) => {
  const { page } = await h.signInAs(acme, "operator");
  await page.goto(h.url("/runs?status=awaiting_approval"));
  await rows(page).first().waitFor();
  assert.equal(await rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run-id"))), [
    awaiting.run.id,
  ]);
  assert.is(await page.getByLabel("Status").inputValue(), "awaiting_approval");
  await h.screenshot(page, "runs-page-awaiting-approval");

  // An unknown status in the link is said, not guessed at.
  await page.goto(h.url("/runs?status=teleporting"));
  await page.getByText("“teleporting” is not a run status, so the list is not filtered by status.").waitFor();
  assert.is(await rows(page).count(), 4);
  assert.is(await page.getByLabel("Status").inputValue(), "");
});

test("while a listed run is not terminal the first page is re-read and merged: the canceled plan turns Canceled without a reload", async ({
  h,
  acme,
}) => {
  const running = await h.makeRun(acme, "plan_running", {
    message: "Another large plan",
    workspace: await h.workspace(acme, "big-fleet-2"),
  });
  const { page } = await h.signInAs(acme, "viewer");
  const badge = rowOf(page, running.run.id).locator("ss-status-badge span");
  await badge.waitFor();
  assert.match(await badge.innerText(), "Planning");
  await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
  await h.cancel(acme, running.run.id);
  await h.waitForStatus(acme, running.run.id, ["canceled"]);
  await page.waitForFunction(
    (id) =>
      document
        .querySelector("ss-app")
        ?.shadowRoot?.querySelector("ss-runs-page")
        ?.shadowRoot?.querySelector(`tr[data-run-id="${id}"]`)
        ?.getAttribute("data-status") === "canceled",
    running.run.id,
    { timeout: 15_000 },
  );
  assert.match(await badge.innerText(), "Canceled");
  assert.is(
    await rowOf(page, running.run.id).locator("td.duration").getAttribute("data-final"),
    "true",
    "its duration is final now",
  );
  assert.is(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 42, "no reload happened");
  assert.is(await rows(page).count(), 5, "merged, not duplicated");
});

test("Load more runs follows meta.page.next_cursor until there is none; a filter reads on until it finds older runs", async ({
  h,
}) => {
  const paged = await h.organization("paged");
  const workspace = await h.workspace(paged, "queue");
  // The first run holds the workspace lock while it awaits approval; the other 24 wait behind it.
  const first = await h.makeRun(paged, "awaiting_approval", { workspace, message: "run 1" });
  const created = [first.run];
  for (let i = 2; i <= 25; i += 1) created.push(await h.startRun(paged, workspace, undefined, `run ${i}`));
  const { page } = await h.signInAs(paged, "viewer");
  await rows(page).first().waitFor();
  assert.is(await rows(page).count(), 20, "one page of 20");
  await page.getByText("Showing 20 of 20 loaded runs (more available).").waitFor();
  const more = page.getByRole("button", { name: "Load more runs" });
  await h.screenshot(page, "runs-page-load-more");
  await more.click();
  await page.getByText("Showing 25 of 25 loaded runs.").waitFor();
  assert.is(await rows(page).count(), 25);
  assert.is(await more.count(), 0, "no continuation token left");
  await page.getByText("That is every run.").waitFor();
  const listed = await rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run-id")));
  assert.equal(new Set(listed).size, 25, "no run repeated");
  assert.equal([...listed].sort(), created.map((r) => r.id).sort(), "no run skipped");

  // A fresh page: the oldest run (awaiting approval) is on the second page, and the filter reads on to it.
  const { page: fresh } = await h.signInAs(paged, "viewer");
  await fresh.goto(h.url("/runs?status=awaiting_approval"));
  await fresh.getByText("Searched 25 runs: the whole history.").waitFor();
  assert.equal(await rows(fresh).evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run-id"))), [first.run.id]);
  await h.screenshot(fresh, "runs-page-filter-searched");
  await h.checkA11y(page, "runs page after load more");
});

test("an unavailable run list is shown as unavailable, never as an empty history; an empty organization says it has no runs", async ({
  h,
  acme,
  awaiting,
}) => {
  // A person whose only role is on one workspace may not read the organization's inventory.
  const user = await h.user(await h.organization("elsewhere"), "viewer");
  await addMembership(h.server, "acme", user.email, "viewer", { workspace_id: awaiting.workspace.id });
  const { page } = await h.signInAs(acme, user);
  const switcher = page.getByLabel("Organization");
  await switcher.selectOption("acme");
  const alert = page.locator("#runs-unavailable");
  await alert.waitFor();
  assert.match(await alert.innerText(), "Run history unavailable");
  assert.match(await alert.innerText(), "This is not an empty history");
  assert.match(await alert.innerText(), "HTTP 404");
  assert.is(await page.getByText("No runs yet").count(), 0);
  await h.screenshot(page, "runs-page-unavailable");
  await h.checkA11y(page, "runs page unavailable");

  await switcher.selectOption("elsewhere");
  await page.locator("#runs-empty").waitFor();
  assert.is(await page.locator("#runs-empty").innerText(), "No runs yet in this organization.");
});

test("a run status outside the closed set renders an explicit error state, not a guess", async ({ h, acme }) => {
  const { page } = await h.signInAs(acme, "viewer");
  await rows(page).first().waitFor();
  // The real response, with one status changed to a value the contract does not have.
  await page.route("**/v1/organizations/acme/runs?*", async (route) => {
    const response = await route.fetch();
    const body = (await response.json()) as { data: Array<{ attributes: { status: string } }> };
    body.data[0].attributes.status = "teleporting";
    await route.fulfill({ response, json: body });
  });
  await page.reload();
  const alert = page.locator("#runs-unavailable");
  await alert.waitFor();
  assert.match(await alert.innerText(), "does not recognise");
  assert.match(await alert.innerText(), "“teleporting”");
  assert.is(await rows(page).count(), 0, "no rows rendered from a response the contract does not allow");
  await h.screenshot(page, "runs-page-contract-error");
});

/** How far the page scrolls sideways (0 when nothing is wider than the window). */
const sideways = async (page: Page) => {
  const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  if (over > 0) {
    // Name the widest elements (through shadow roots) so a failure says what to fix.
    // A string, not a function: tsx would wrap an inner named function in a helper the page lacks.
    const culprits = await page.evaluate<string[]>(`(() => {
      const out = [];
      const width = document.documentElement.clientWidth;
      const walk = (root) => {
        for (const el of root.querySelectorAll("*")) {
          const r = el.getBoundingClientRect();
          if (r.right > width + 0.5 && r.width > 0) out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\\s+/).join(".") : "") + " right=" + Math.round(r.right));
          if (el.shadowRoot) walk(el.shadowRoot);
        }
      };
      walk(document);
      return out.slice(0, 12);
    })()`);
    process.stderr.write(`[phone] ${over} px sideways: ${culprits.join(" | ")}\n`);
  }
  return over;
};

test("on a phone (390 px): the top bar folds behind Menu, Needs attention leads to the waiting runs as cards, and no page scrolls sideways", async ({
  h,
  acme,
  awaiting,
}) => {
  const { page } = await h.signInAs(acme, "admin", { viewport: { width: 390, height: 844 } });
  await rows(page).first().waitFor();
  const nav = page.getByRole("navigation", { name: "Main" });
  const menu = page.getByRole("button", { name: "Menu" });
  assert.ok(await menu.isVisible());
  assert.is(await menu.getAttribute("aria-expanded"), "false");
  assert.not.ok(await nav.isVisible(), "the navigation is folded");
  assert.is(await sideways(page), 0, "the runs page scrolls sideways");
  assert.is(
    await rows(page)
      .first()
      .evaluate((row) => getComputedStyle(row).display),
    "block",
    "runs are cards",
  );
  await h.screenshot(page, "runs-phone");

  await menu.click();
  assert.is(await menu.getAttribute("aria-expanded"), "true");
  const attention = nav.getByRole("link", { name: /Needs attention/ });
  await attention.waitFor();
  assert.match(await attention.innerText(), /Needs attention\s+[1-9]/);
  await h.screenshot(page, "runs-phone-menu");
  await attention.click();
  await page.waitForURL("**/runs?status=needs_attention");
  assert.not.ok(await nav.isVisible(), "the menu folds again after navigating");
  await rowOf(page, awaiting.run.id).waitFor();
  assert.ok(
    (await rows(page).evaluateAll((all) => all.map((row) => row.getAttribute("data-status")))).every((status) =>
      ["awaiting_approval", "policy_soft_failed", "needs_recovery"].includes(status ?? ""),
    ),
  );
  await h.checkA11y(page, "runs page on a phone");

  await rowOf(page, awaiting.run.id).getByRole("link").first().click();
  await page.getByTestId("stage-plan").waitFor();
  assert.is(await sideways(page), 0, "the run page scrolls sideways");
  await h.screenshot(page, "run-phone");
  for (const path of ["/workspaces", "/members", "/tokens", "/audit", "/policy-sets"]) {
    await page.goto(h.url(path));
    await page.locator("main h1").first().waitFor();
    assert.is(await sideways(page), 0, `${path} scrolls sideways`);
  }
});

test("dark colour scheme on a phone: the runs page passes axe contrast", async ({ h, acme }) => {
  const { page } = await h.signInAs(acme, "viewer", { colorScheme: "dark", viewport: { width: 390, height: 844 } });
  await rows(page).first().waitFor();
  await h.checkA11y(page, "runs page, dark, phone");
  await h.screenshot(page, "runs-phone-dark");
});

test.run();
