// The run page's decisions and failures in Chromium against a real server with real runs (real
// tofu in bubblewrap), continued from run-page.test.ts: approval with destroys, discard, a policy
// override, a failed plan, expiry, an interrupted apply and a 5,000-resource plan; axe on each, a
// screenshot per state.
import * as assert from "uvu/assert";
import { getRun } from "../../../client/src/index.ts";
import { harnessSuite } from "../support/index.ts";
import { focused, openRun, runStatus } from "./run-page-support.ts";
import { PLAN_SECRET, largePlanDiff, storePlanDiff } from "./run-plan-diff-fixture.ts";

const test = harnessSuite("run page decisions (real runs, Chromium)");

test("awaiting approval with destroys: Approve plan arms a confirmation restating the counts; nothing is sent until confirmed", async ({
  h,
  acme: org,
}) => {
  const { run } = await h.makeRun(org, "awaiting_approval_destroys");
  const { page } = await h.signInAs(org, "operator");
  await openRun(h, page, run.id);
  await page.getByRole("button", { name: "Approve plan" }).click();
  const confirmation = page.getByTestId("approve-confirmation");
  await confirmation.waitFor();
  const text = await confirmation.innerText();
  assert.match(text, /1 to create/);
  assert.match(text, /0 to change/);
  assert.match(text, /1 to destroy/);
  assert.is((await focused(page)).text, "Approve and destroy 1 resource", "focus moves to the confirming button");
  assert.is(await runStatus(h, org, run.id), "awaiting_approval", "arming sends nothing");
  await h.screenshot(page, "run-awaiting-approval-destroys");
  await h.checkA11y(page, "destroy confirmation");
  await confirmation.getByRole("button", { name: "Keep reviewing" }).click();
  await confirmation.waitFor({ state: "detached" });
  assert.is((await focused(page)).text, "Approve plan", "focus returns to Approve plan");
  await page.getByRole("button", { name: "Approve plan" }).click();
  await page.getByRole("button", { name: "Approve and destroy 1 resource" }).click();
  await page.getByTestId("attention-strip").waitFor({ state: "detached" });
  const done = await h.waitForStatus(org, run.id, ["applied", "errored", "needs_recovery"]);
  assert.is(done.attributes.status, "applied");
});

test("discard with reason: the reason input exists only inside the armed confirmation; the decision names who discarded", async ({
  h,
  acme: org,
}) => {
  const { run } = await h.makeRun(org, "awaiting_approval");
  const { page, user } = await h.signInAs(org, "operator");
  await openRun(h, page, run.id);
  assert.is(await page.locator("#discard-reason").count(), 0);
  await page.getByRole("button", { name: "Discard run" }).click();
  const reason = page.getByLabel(/Why discard this run/);
  await reason.waitFor();
  assert.is((await focused(page)).tag, "textarea", "focus moves into the reason");
  await reason.fill("superseded by the next push");
  await h.screenshot(page, "run-discard-confirmation");
  await h.checkA11y(page, "discard confirmation");
  await page.getByTestId("discard-confirmation").getByRole("button", { name: "Discard run" }).click();
  await page.getByTestId("attention-strip").waitFor({ state: "detached" });
  await page.getByTestId("run-status").filter({ hasText: "Discarded" }).waitFor();
  const approval = page.getByTestId("stage-approval");
  // A decided-against approval may already be open by itself (a failed stage opens on its own).
  if ((await approval.getByTestId("stage-head").getAttribute("aria-expanded")) === "false")
    await approval.getByTestId("stage-head").click();
  assert.match(
    await approval.getByTestId("approval-lead").innerText(),
    new RegExp(`^Discarded by ${user.displayName} at `),
  );
  assert.is(await approval.getByTestId("approval-reason").innerText(), "Reason: superseded by the next push");
  assert.is(await runStatus(h, org, run.id), "discarded");
  await h.screenshot(page, "run-discarded");
  await h.checkA11y(page, "discarded");
});

test("soft policy failure: findings expanded by default, override (admin only) with reason and duration, then approve", async ({
  h,
  acme: org,
}) => {
  const { run } = await h.makeRun(org, "policy_soft_failed");
  const operator = await h.signInAs(org, "operator");
  await openRun(h, operator.page, run.id);
  assert.is(
    await operator.page.getByTestId("override-form").count(),
    0,
    "no override control without policy:override_soft",
  );
  assert.is(await operator.page.getByRole("button", { name: "Approve plan" }).count(), 0);

  const { page } = await h.signInAs(org, "admin");
  await openRun(h, page, run.id);
  const policy = page.getByTestId("stage-policy");
  assert.is(
    await policy.getByTestId("stage-head").getAttribute("aria-expanded"),
    "true",
    "a policy outcome other than pass expands the stage",
  );
  const findings = policy.getByTestId("policy-findings");
  assert.match(await findings.innerText(), /Needs tags[\s\S]*terraform_data\.greeting is flagged/);
  assert.is(await page.getByRole("button", { name: "Approve plan" }).count(), 0, "approval waits for the override");
  assert.ok(await page.getByTestId("approval-waits").isVisible());
  const review = h.server.v1(org.token);
  const digest = (await getRun({ client: review, path: { run_id: run.id } })).data!.data.attributes
    .policy_result_digest;
  assert.is(
    await policy.getByTestId("override-digest").innerText(),
    digest,
    "the control is bound to the exact result digest",
  );
  await h.screenshot(page, "run-policy-soft-failed");
  await h.checkA11y(page, "policy soft-failed");

  await policy.getByRole("button", { name: "Override policy failure" }).click();
  assert.ok(await policy.getByText("Say why the failure may be overridden.").isVisible(), "a reason is required");
  await policy.getByLabel("Override reason (kept in the audit trail)").fill("tags follow in the next change");
  await policy.getByLabel("Override lasts").selectOption({ label: "4 hours" });
  await policy.getByRole("button", { name: "Override policy failure" }).click();
  await policy.getByTestId("active-override").waitFor();
  const overrides = await policy.getByTestId("policy-overrides").innerText();
  assert.match(overrides, /tags follow in the next change/);
  await page.getByRole("button", { name: "Approve plan" }).click();
  await page.getByTestId("attention-strip").waitFor({ state: "detached" });
  const done = await h.waitForStatus(org, run.id, ["applied", "errored", "needs_recovery"]);
  assert.is(done.attributes.status, "applied");
  await h.screenshot(page, "run-policy-overridden");
});

test("plan failed: one sentence, the raw code, and at most eight final log lines on the ink surface", async ({
  h,
  acme: org,
}) => {
  const { run } = await h.makeRun(org, "plan_failed");
  const { page } = await h.signInAs(org, "viewer");
  await openRun(h, page, run.id);
  const panel = page.getByTestId("terminal-reason");
  assert.ok(await panel.getByText("The plan failed, so there is nothing to review or apply.").isVisible());
  assert.is(await panel.getByTestId("terminal-reason-code").innerText(), "plan_failed");
  const tail = panel.getByTestId("log-tail");
  assert.is(await tail.locator("figcaption").innerText(), "The last lines of the plan log");
  const lines = (await tail.locator("pre").innerText()).split("\n");
  assert.ok(lines.length >= 1 && lines.length <= 8, `${lines.length} lines`);
  assert.ok(
    lines.some((line) => /not-a-number|Invalid|Error/i.test(line)),
    lines.join("\n"),
  );
  const background = await tail.locator("pre").evaluate((el) => getComputedStyle(el).backgroundColor);
  assert.is(background, "rgb(20, 23, 28)", "the ink surface");
  assert.is(await page.getByTestId("stage-policy").getByTestId("stage-status").innerText(), "Skipped");
  assert.is(await page.getByTestId("stage-policy").locator("button").count(), 0, "a skipped stage is not a toggle");
  assert.ok(await page.getByTestId("stage-plan").getByText("Plan errored", { exact: true }).isVisible());
  // The failed stage opens by itself, its console scrolled to the first error line.
  assert.is(
    await page.getByTestId("stage-plan").getByTestId("stage-head").getAttribute("aria-expanded"),
    "true",
    "the failed stage opens by itself",
  );
  await page.getByTestId("console-plan").getByText("Error:").first().waitFor();
  assert.ok(await page.getByTestId("console-plan").getByText("Error:").first().isVisible());
  await h.screenshot(page, "run-plan-failed");
  await h.checkA11y(page, "plan failed");
});

test("expired: the guidance strip in the approval bar's position, linking to the source settings", async ({
  h,
  acme: org,
}) => {
  const { run, workspace } = await h.makeRun(org, "expired");
  const { page } = await h.signInAs(org, "operator");
  await openRun(h, page, run.id);
  const strip = page.getByTestId("guidance-strip");
  assert.ok(await strip.getByText("A new run starts from a push to the tracked branch or from the CLI.").isVisible());
  assert.is(await strip.getByRole("link").getAttribute("href"), `/workspaces/${workspace.id}/source`);
  assert.is(await page.getByTestId("attention-strip").count(), 0);
  const approval = page.getByTestId("stage-approval");
  const head = approval.locator("button[data-testid=stage-head]");
  if ((await head.count()) > 0 && (await head.getAttribute("aria-expanded")) === "false") await head.click();
  assert.match(await approval.innerText(), /Expired without a decision/);
  await h.screenshot(page, "run-expired");
  await h.checkA11y(page, "expired");
});

test("apply interrupted: the recovery panel with recorded evidence; resolve only for an admin", async ({
  h,
  acme: org,
}) => {
  const { run } = await h.makeRun(org, "needs_recovery");
  assert.is(run.attributes.status, "needs_recovery");
  const operator = await h.signInAs(org, "operator");
  await openRun(h, operator.page, run.id);
  const opPanel = operator.page.getByTestId("recovery-panel");
  assert.ok(await opPanel.isVisible());
  assert.is(await opPanel.getByTestId("recovery-form").count(), 0, "run:recover is an admin's");

  const { page } = await h.signInAs(org, "admin");
  await openRun(h, page, run.id);
  const panel = page.getByTestId("recovery-panel");
  assert.match(await panel.innerText(), /provisioning-started/);
  assert.match(await panel.innerText(), /lost/);
  assert.ok(await page.getByTestId("stage-apply").getByText("Apply interrupted", { exact: true }).first().isVisible());
  assert.ok(
    await page
      .getByTestId("terminal-reason")
      .getByText("The apply was interrupted; an operator must decide whether the infrastructure changed.")
      .isVisible(),
  );
  await h.screenshot(page, "run-apply-interrupted");
  await h.checkA11y(page, "apply interrupted");

  const form = panel.getByTestId("recovery-form");
  await form.getByLabel(/Keep the current state/).check();
  await form.getByLabel(/Reason/).fill("short");
  await form.getByRole("button", { name: "Resolve recovery" }).click();
  assert.ok(await form.getByText("Write at least 10 characters.").isVisible());
  await form.getByLabel(/Reason/).fill("the provisioner only slept; nothing changed");
  await form.getByRole("button", { name: "Resolve recovery" }).click();
  await panel.waitFor({ state: "detached" });
  assert.is(await runStatus(h, org, run.id), "errored");
  await page.getByTestId("terminal-reason-code").filter({ hasText: "recovered" }).waitFor();
  await h.screenshot(page, "run-recovered");
});

test("5,000-resource Changes tab: truncation stated, a virtualized list, filters by action and address, redacted detail", async ({
  h,
  acme: org,
}) => {
  const { run } = await h.makeRun(org, "awaiting_approval");
  await storePlanDiff(h.server, run.id, largePlanDiff(run.id, 5_050));
  const { page } = await h.signInAs(org, "viewer");
  await openRun(h, page, run.id);
  const plan = page.getByTestId("stage-plan");
  await plan.getByTestId("stage-head").click();
  await plan.getByRole("tab", { name: "Changes" }).click();
  const count = page.getByTestId("changes-count");
  await count.filter({ hasText: "5000 of 5000 resources shown" }).waitFor();
  assert.match(
    await page.getByTestId("changes-truncated").innerText(),
    /the plan changes 5,050 resources; 50 cut beyond the 5,000-resource limit/,
  );
  const rows = page.getByRole("listitem");
  const inDom = await rows.count();
  assert.ok(inDom > 5 && inDom < 60, `only the rows in view exist (${inDom})`);
  await h.screenshot(page, "run-changes-5000");
  await h.checkA11y(page, "5,000-resource changes");

  await page.getByTestId("changes-viewport").evaluate((el) => (el.scrollTop = el.scrollHeight));
  await page.getByRole("button", { name: /aws_iam_role\.res_4999 / }).waitFor();

  await page.getByLabel("Filter by action").selectOption("replace");
  await count.filter({ hasText: "500 of 5000 resources shown" }).waitFor();
  await page.getByLabel("Filter by action").selectOption("all");
  await page.getByLabel("Filter by address").fill("aws_iam_role.res_12");
  await count.filter({ hasText: /^\d+ of 5000 resources shown$/ }).waitFor();
  await page.getByRole("button", { name: /^update module\.svc_12\.aws_iam_role\.res_12 / }).click();
  const detail = page.getByTestId("changes-detail");
  assert.match(await detail.innerText(), /inline_policy\[0\]\.policy\s+\(sensitive value\)\s+\(sensitive value\)/);
  assert.match(await detail.innerText(), /max_session_duration\s+changed\s+3600\s+7200/);
  // A string, not a function: tsx would wrap a named inner function in a helper the page lacks.
  const everything = await page.evaluate<string>(
    `(() => { const walk = (root) => [...root.querySelectorAll("*")].map((el) => (el.shadowRoot ? walk(el.shadowRoot) : "") + (el.children.length === 0 ? el.textContent : "")).join(" "); return walk(document); })()`,
  );
  assert.not.ok(everything.includes(PLAN_SECRET), "no sensitive value reaches the page");
  await h.screenshot(page, "run-changes-detail");
  await h.cancel(org, run.id);
});

test.run();
