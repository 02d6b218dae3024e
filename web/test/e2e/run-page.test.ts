// The run page in Chromium against a real server with real runs (real tofu in bubblewrap): what a
// person sees in each state the product description names, axe on each, a screenshot per state.
// One harness (one server, one browser) for the whole file; runs are reused where a scenario
// continues another (awaiting approval → keyboard approval → applied).
import { createHash } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startHarness, type Harness, type HarnessOrganization, type MadeRun } from "../support/index.ts";
import { focused, openRun, runStatus } from "./run-page-support.ts";

interface Context {
  h: Harness;
  org: HarnessOrganization;
  awaiting: MadeRun;
}

const test = suite<Context>("run page (real runs, Chromium)");

test.before(async (ctx) => {
  ctx.h = await startHarness();
  ctx.org = await ctx.h.organization("acme");
  ctx.awaiting = await ctx.h.makeRun(ctx.org, "awaiting_approval");
});

test.after(async (ctx) => {
  await ctx.h?.stop();
});

test("plan running: a quiet “Plan not finished yet”, no counts, no decision; an operator cancels from the header", async ({
  h,
  org,
}) => {
  const { run } = await h.makeRun(org, "plan_running");
  let canceled = false;
  try {
    const { page, user } = await h.signInAs(org, "operator");
    await openRun(h, page, run.id);
    const plan = page.getByTestId("stage-plan");
    assert.is(await plan.getByTestId("plan-summary").innerText(), "Plan not finished yet");
    assert.ok(
      await plan.getByText("Plan running", { exact: true }).isVisible(),
      "the plan phase badge says Plan running",
    );
    assert.is(await page.getByTestId("run-status").innerText(), "Planning");
    assert.is(await page.getByTestId("attention-strip").count(), 0, "no decision while planning");
    assert.is(await page.getByTestId("terminal-reason").count(), 0);
    // The running stage opens by itself. A running plan's log is held until the plan ends (its own
    // sensitive values are known only then), so the console says so plainly.
    assert.is(
      await plan.getByTestId("stage-head").getAttribute("aria-expanded"),
      "true",
      "the running stage opens by itself",
    );
    await page.getByTestId("console-held").waitFor();
    assert.match(await page.getByTestId("console-held").innerText(), /^The plan log appears when the plan finishes/);
    await h.screenshot(page, "run-plan-running");
    await h.checkA11y(page, "plan running");

    // Cancel from the header: one inline confirmation, then the run ends canceled.
    await page.getByRole("button", { name: "Cancel run" }).click();
    assert.is(await runStatus(h, org, run.id), "planning", "arming the cancel sends nothing");
    await page.getByRole("button", { name: "Yes, cancel run" }).click();
    canceled = true;
    await page.getByTestId("run-status").filter({ hasText: "Canceled" }).waitFor();
    assert.ok(
      await page.getByTestId("terminal-reason").getByText("The run was canceled while it was planning.").isVisible(),
    );
    assert.is(await page.getByRole("button", { name: "Cancel run" }).count(), 0, "nothing left to cancel");
    const approval = page.getByTestId("stage-approval");
    assert.match(await approval.innerText(), new RegExp(`Canceled by ${user.displayName}`));
    await h.screenshot(page, "run-canceled");
  } finally {
    if (!canceled) await h.cancel(org, run.id);
  }
});

test("awaiting approval: viewer, operator and admin each see only their actions and downloads", async ({
  h,
  org,
  awaiting,
}) => {
  const { run } = awaiting;
  const viewer = await h.signInAs(org, "viewer");
  await openRun(h, viewer.page, run.id);
  assert.is(await viewer.page.getByTestId("attention-strip").count(), 0, "a viewer gets no decision controls");
  assert.is(await viewer.page.getByRole("button", { name: "Cancel run" }).count(), 0);
  assert.is(await viewer.page.getByRole("button", { name: "Download redacted plan" }).count(), 1);
  assert.is(await viewer.page.getByRole("button", { name: "Download raw plan" }).count(), 0);
  assert.is(await viewer.page.getByRole("button", { name: "Download emergency state" }).count(), 0);
  await h.screenshot(viewer.page, "run-awaiting-approval-viewer");
  await h.checkA11y(viewer.page, "awaiting approval, viewer");

  const operator = await h.signInAs(org, "operator");
  await openRun(h, operator.page, run.id);
  const strip = operator.page.getByTestId("attention-strip");
  assert.ok(await strip.isVisible());
  assert.ok(await strip.getByRole("button", { name: "Approve plan" }).isEnabled());
  assert.ok(await strip.getByRole("button", { name: "Discard run" }).isEnabled());
  assert.ok(await operator.page.getByRole("button", { name: "Cancel run" }).isVisible());
  assert.is(
    await operator.page.getByTestId("discard-reason").count(),
    0,
    "no reason input before Discard run is armed",
  );
  assert.is(await operator.page.locator("#discard-reason").count(), 0);
  assert.is(
    await operator.page.getByRole("button", { name: "Download raw plan" }).count(),
    0,
    "an operator may not read the raw plan",
  );
  assert.is(await operator.page.getByRole("button", { name: "Download redacted plan" }).count(), 1);
  await h.screenshot(operator.page, "run-awaiting-approval-operator");
  await h.checkA11y(operator.page, "awaiting approval, operator");

  const admin = await h.signInAs(org, "admin");
  await openRun(h, admin.page, run.id);
  assert.ok(await admin.page.getByTestId("attention-strip").isVisible());
  const sensitive = admin.page.getByTestId("sensitive-downloads");
  assert.not.ok(
    await admin.page.getByRole("button", { name: "Download raw plan" }).isVisible(),
    "the guarded downloads start behind their disclosure",
  );
  await sensitive.locator("summary").click();
  assert.ok(await admin.page.getByRole("button", { name: "Download raw plan" }).isEnabled());
  assert.is(
    await admin.page.getByRole("button", { name: "Download emergency state" }).count(),
    0,
    "no state uploaded yet: no control",
  );
  assert.ok(
    await admin.page
      .getByText("Not available for this run: the emergency state (this run's apply uploaded no state).")
      .isVisible(),
  );
  await h.screenshot(admin.page, "run-awaiting-approval-admin");
  await h.checkA11y(admin.page, "awaiting approval, admin");
});

test("awaiting approval without destroys: the Changes tab lists the resource; keyboard-only one-step approval applies it", async ({
  h,
  org,
  awaiting,
}) => {
  const { run } = awaiting;
  const { page } = await h.signInAs(org, "operator");
  await openRun(h, page, run.id);
  const plan = page.getByTestId("stage-plan");
  assert.is(await plan.getByTestId("plan-summary").innerText(), "1 to create, 0 to change, 0 to destroy");
  await plan.getByTestId("stage-head").click();
  await plan.getByRole("tab", { name: "Changes" }).click();
  await plan.getByTestId("changes-count").filter({ hasText: "1 of 1 resources shown" }).waitFor();
  await plan.getByRole("button", { name: /terraform_data\.greeting/ }).click();
  const detail = page.getByTestId("changes-detail");
  assert.ok(await detail.getByText("(known after apply)").first().isVisible(), "unknown values are marked");
  await h.screenshot(page, "run-changes-tab");
  await h.checkA11y(page, "changes tab");

  // Keyboard only: Tab to Approve plan and press Enter; zero destroys means no confirmation.
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  let found = false;
  for (let i = 0; i < 80 && !found; i++) {
    await page.keyboard.press("Tab");
    const f = await focused(page);
    found = f.tag === "button" && f.text === "Approve plan";
  }
  assert.ok(found, "Approve plan is reachable with Tab");
  await page.keyboard.press("Enter");
  await page.getByTestId("attention-strip").waitFor({ state: "detached" });
  assert.is(
    await page.getByRole("status").filter({ hasText: "Plan approved. The apply starts shortly." }).count(),
    1,
    "the outcome is announced",
  );
  assert.is(await page.getByTestId("approve-confirmation").count(), 0, "no confirmation for a plan without destroys");
  const applied = await h.waitForStatus(org, run.id, ["applied", "errored", "needs_recovery"]);
  assert.is(applied.attributes.status, "applied");
});

test("applied: the apply stage is expanded with the published state version; approved by the person who approved", async ({
  h,
  org,
  awaiting,
}) => {
  const { run } = awaiting;
  const { page, user } = await h.signInAs(org, "admin");
  await openRun(h, page, run.id);
  await page.getByTestId("run-status").filter({ hasText: "Applied" }).waitFor();
  const apply = page.getByTestId("stage-apply");
  assert.is(
    await apply.getByTestId("stage-head").getAttribute("aria-expanded"),
    "true",
    "a terminal applied run expands its last succeeded stage",
  );
  assert.match(
    await apply.getByTestId("state-version").innerText(),
    /^Published state version sv-[0-9a-z]+, serial 1, at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
  );
  assert.ok(await apply.getByText("Apply finished", { exact: true }).first().isVisible());
  assert.is(
    await page.getByTestId("terminal-reason").getByText("The plan was applied and its state was published.").count(),
    1,
  );
  assert.is(await page.getByTestId("terminal-reason-code").innerText(), "applied");
  const approval = page.getByTestId("stage-approval");
  await approval.getByTestId("stage-head").click();
  assert.match(await approval.getByTestId("approval-lead").innerText(), /^Approved by Operator \S+ at \d{4}-/);
  assert.match(await approval.getByTestId("plan-digest").innerText(), /^[0-9a-f]{64}$/);
  // The signed attestation of the decision: named by its digest, downloaded as the envelope issued.
  const attestation = approval.getByTestId("download-attestation-decision");
  await attestation.waitFor();
  assert.is(await attestation.innerText(), "Download attestation");
  const digest = await approval.getByTestId("attestation-digest-decision").innerText();
  assert.match(digest, /^[0-9a-f]{64}$/);
  const [envelopeFile] = await Promise.all([page.waitForEvent("download"), attestation.click()]);
  assert.is(envelopeFile.suggestedFilename(), `${run.id}-decision.intoto.json`);
  const envelopeBytes = Buffer.concat(await (await envelopeFile.createReadStream()).toArray());
  assert.is(
    createHash("sha256").update(envelopeBytes).digest("hex"),
    digest,
    "the bytes saved are the envelope the review names",
  );
  assert.is(
    (JSON.parse(envelopeBytes.toString("utf8")) as { payloadType: unknown }).payloadType,
    "application/vnd.in-toto+json",
  );
  assert.is(await page.getByTestId("attention-strip").count(), 0, "the decision bar is gone once decided");
  await page.getByTestId("sensitive-downloads").locator("summary").click();
  assert.ok(
    await page.getByRole("button", { name: "Download emergency state" }).isEnabled(),
    "the apply uploaded state",
  );
  await h.screenshot(page, "run-applied");
  await h.checkA11y(page, "applied");

  // The admin's guarded download: typed reason, then step-up, then the file.
  const form = page.getByTestId("download-raw_plan");
  await form.getByRole("button", { name: "Download raw plan" }).click();
  assert.ok(await form.getByRole("alert").filter({ hasText: "Type why" }).isVisible(), "no reason, no request");
  await form.getByLabel(/Reason/).fill("incident 42: compare with the provider console");
  await form.getByRole("button", { name: "Download raw plan" }).click();
  const dialog = page.getByRole("dialog", { name: "Confirm your password" });
  await dialog.waitFor();
  await h.screenshot(page, "run-step-up");
  await dialog.getByLabel("Password").fill(user.password);
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    dialog.getByRole("button", { name: "Confirm" }).click(),
  ]);
  assert.is(download.suggestedFilename(), `${run.id}-plan.json`);
  const bytes = await (await download.createReadStream()).toArray();
  assert.match(Buffer.concat(bytes).toString("utf8"), /"resource_changes"/, "the raw plan JSON");
  assert.ok(await form.getByText("Downloaded.").isVisible());
});

test("dark colour scheme: the applied run page (ink console, badges, downloads) passes axe contrast", async ({
  h,
  org,
  awaiting,
}) => {
  const { page } = await h.signInAs(org, "admin", { colorScheme: "dark" });
  await openRun(h, page, awaiting.run.id);
  await page.getByTestId("state-version").waitFor();
  await h.screenshot(page, "run-applied-dark");
  await h.checkA11y(page, "applied, dark");
});

test.run();
