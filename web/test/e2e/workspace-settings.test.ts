// The workspace source settings and cloud access pages in Chromium against a real server: each role
// sees only its controls (viewer none, operator profile writes, organization admin the source
// connection and verify; only an admin sees the App id and API URL); an
// admin connects a repository through the form (an API refusal shown next to its field); the
// pipeline-off state names the missing variables; with the pipeline on (the GitHub API double and
// a GitHub worker) a real push delivery is listed with the run it created, and that run shows
// "GitHub push <sha7>" on the runs list and the workspace overview; profiles are created, edited,
// verified by an admin and unverified again by an edit; the workload-identity-off note, then on.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getWorkspace, getWorkspaceSource, listFederationProfiles, type Workspace } from "../../../client/src/index.ts";
import { GitHubAppClient } from "../../../server/src/github/client.ts";
import { GitHubWorker } from "../../../server/src/runner/github-worker.ts";
import { GitHubDouble } from "../../../server/test/support/github-double.ts";
import { commitTarball, deliver, newSha, pushPayload, settled } from "../../../server/test/support/github.ts";
import { hook, startHarness, type Harness, type HarnessOrganization } from "../support/index.ts";

interface Ctx {
  h: Harness;
  acme: HarnessOrganization;
  workspace: Workspace;
  double: GitHubDouble;
  worker: GitHubWorker | null;
}

const test = suite<Ctx>("workspace settings");
const REPOSITORY = "acme-web/infra";
const INSTALLATION = 4242;

test.before(
  hook(async (ctx) => {
    ctx.h = await startHarness();
    ctx.acme = await ctx.h.organization("acme");
    ctx.workspace = await ctx.h.workspace(ctx.acme, "billing", { tracked_branch: "main" });
    ctx.double = await new GitHubDouble().start();
    ctx.worker = null;
  }),
);
test.after(
  hook(async (ctx) => {
    await ctx.worker?.stop();
    await ctx.double?.stop();
    await ctx.h?.stop();
  }),
);

const sourceOf = async ({ h, acme, workspace }: Ctx) =>
  (await getWorkspaceSource({ client: h.server.v1(acme.token), path: { workspace_id: workspace.id } })).data!;
const profilesOf = async ({ h, acme, workspace }: Ctx) =>
  (await listFederationProfiles({ client: h.server.v1(acme.token), path: { workspace_id: workspace.id } })).data!.data;

test("source settings, pipeline off: the missing variables are named; a viewer and an operator see no form, an organization admin does", async (ctx) => {
  const { h, acme, workspace } = ctx;
  const { page } = await h.signInAs(acme, "viewer");
  await page.goto(h.url(`/workspaces/${workspace.id}/source`));
  await page.locator("#pipeline-off").waitFor();
  assert.match(await page.locator("#pipeline-off").innerText(), "The GitHub App pipeline is off on this deployment.");
  assert.equal(await page.locator("#pipeline-missing li").allInnerTexts(), [
    "STACKSHIP_GITHUB_APP_ID",
    "STACKSHIP_GITHUB_PRIVATE_KEY (or _FILE)",
    "STACKSHIP_GITHUB_WEBHOOK_SECRET",
  ]);
  assert.match(
    await page.locator("#source-not-connected").innerText(),
    "No Git repository is connected to this workspace.",
  );
  assert.match(
    await page.locator("#source-not-connected").innerText(),
    "An organization administrator can connect one.",
  );
  assert.is(await page.locator("#source-form").count(), 0, "a viewer sees no form");
  assert.is(await page.locator("#disconnect").count(), 0);
  assert.match(
    await page.locator("#deliveries-none").innerText(),
    "Deliveries are listed once a repository is connected.",
  );
  await h.screenshot(page, "workspace-source-pipeline-off-viewer");
  await h.checkA11y(page, "source settings, pipeline off, viewer");

  // Connecting is an organization administrator's: an operator sees no form.
  const operator = (await h.signInAs(acme, "operator")).page;
  await operator.goto(h.url(`/workspaces/${workspace.id}/source`));
  await operator.locator("#source-not-connected").waitFor();
  assert.is(await operator.locator("#source-form").count(), 0, "an operator sees no form");
  const admin = (await h.signInAs(acme, "admin")).page;
  await admin.goto(h.url(`/workspaces/${workspace.id}/source`));
  await admin.locator("#source-form").waitFor();
  assert.match(
    await admin.locator("#source-not-connected").innerText(),
    "install the StackShip GitHub App on the repository",
  );
  assert.is(await admin.getByLabel("Tracked branch").inputValue(), "main", "the workspace's tracked branch by default");
  await h.screenshot(admin, "workspace-source-connect-form");
  await h.checkA11y(admin, "source settings, connection form");
});

/** Turns the pipeline on with the double as GitHub, as a deployment with the STACKSHIP_GITHUB_* variables has it. */
function pipelineOn({ h, double }: Ctx): void {
  const settings = double.config();
  if (settings.state !== "on") throw new Error("the double's settings turn the pipeline on");
  h.server.services.config.github = settings;
  h.server.services.github = new GitHubAppClient(settings);
}

test("an admin connects a repository through the form; a refusal is shown next to its field and saves nothing; disconnect asks first", async (ctx) => {
  const { h, acme, workspace, double } = ctx;
  // A connection needs the pipeline on and an installation bound to the organization that can see
  // the repository: the admin installs the App through StackShip's setup (a one-time state), and
  // GitHub returns the browser to /github/setup, which binds the installation.
  pipelineOn(ctx);
  double.installations.set(INSTALLATION, [REPOSITORY]);
  const { page } = await h.signInAs(acme, "admin");
  await page.goto(h.url(`/workspaces/${workspace.id}/source`));
  await page.locator("#install-start").click();
  const installUrl = new URL((await page.locator("#install-link").getAttribute("href"))!);
  assert.is(`${installUrl.origin}${installUrl.pathname}`, `${double.url}/apps/stackship/installations/new`);
  const setupState = installUrl.searchParams.get("state")!;
  assert.ok(setupState.length > 40);
  await page.goto(
    h.url(`/github/setup?installation_id=${INSTALLATION}&setup_action=install&state=${encodeURIComponent(setupState)}`),
  );
  await page.locator("#setup-bound").waitFor();
  assert.is(await page.locator("#setup-organization").innerText(), "acme");
  await h.screenshot(page, "github-setup-bound");
  await h.checkA11y(page, "GitHub App setup, bound");
  // The state was used once: the same return again is refused.
  await page.goto(
    h.url(`/github/setup?installation_id=${INSTALLATION}&setup_action=install&state=${encodeURIComponent(setupState)}`),
  );
  await page.locator("#setup-failed").waitFor();
  assert.match(await page.locator("#setup-failed").innerText(), "GITHUB_INSTALLATION_STATE_INVALID");
  await page.goto(h.url(`/workspaces/${workspace.id}/source`));
  await page.locator("#source-form").waitFor();
  await page.getByLabel("Installation id").fill(String(INSTALLATION));
  await page.getByLabel("Repository", { exact: true }).fill("not a repository");
  await page.getByRole("button", { name: "Connect" }).click();
  const fieldError = page.locator("#error-repository");
  await fieldError.waitFor();
  assert.ok((await fieldError.innerText()).length > 10, await fieldError.innerText());
  assert.is(await page.getByLabel("Repository", { exact: true }).getAttribute("aria-invalid"), "true");
  assert.is((await sourceOf(ctx)).data, null, "nothing was saved");
  await h.screenshot(page, "workspace-source-field-error");
  await h.checkA11y(page, "source settings, field error");

  await page.getByLabel("Repository", { exact: true }).fill(REPOSITORY);
  await page.getByLabel("Working directory").fill("infra");
  await page.getByLabel("Trigger paths").fill("modules/**\n*.tfvars");
  await page.getByRole("button", { name: "Connect" }).click();
  await page.locator("#source-connection").waitFor();
  assert.match(await page.locator("#pipeline-app").innerText(), double.appId, "an admin sees the App id");
  assert.is(await page.locator("#source-repository").innerText(), REPOSITORY);
  assert.is(await page.locator("#source-installation").innerText(), String(INSTALLATION));
  assert.is(await page.locator("#tracked-branch").innerText(), "main");
  assert.is(await page.locator("#working-directory").innerText(), "infra");
  assert.equal(await page.locator("#source-trigger-paths li").allInnerTexts(), ["modules/**", "*.tfvars"]);
  assert.match(await page.locator("#source-access").innerText(), "Unknown");
  assert.match(
    await page.locator("#deliveries-empty").innerText(),
    `No webhook delivery about ${REPOSITORY} has arrived yet.`,
  );
  const saved = (await sourceOf(ctx)).data!.attributes;
  assert.equal(
    [saved.installation_id, saved.repository, saved.tracked_branch, saved.working_directory, saved.trigger_paths],
    [INSTALLATION, REPOSITORY, "main", "infra", ["modules/**", "*.tfvars"]],
  );
  await h.screenshot(page, "workspace-source-connected-admin");
  await h.checkA11y(page, "source settings, connected");

  // Disconnect asks first; keeping the connection changes nothing.
  await page.getByRole("button", { name: "Disconnect the repository…" }).click();
  assert.match(await page.locator("#disconnect-question").innerText(), `Disconnect ${REPOSITORY} from billing?`);
  await h.screenshot(page, "workspace-source-disconnect-confirmation");
  await h.checkA11y(page, "source settings, disconnect confirmation");
  await page.getByRole("button", { name: "Keep the connection" }).click();
  assert.is(await page.locator("#disconnect-confirmation").count(), 0);
  assert.ok((await sourceOf(ctx)).data, "still connected");

  // A viewer sees the connection, and no control.
  const viewer = (await h.signInAs(acme, "viewer")).page;
  await viewer.goto(h.url(`/workspaces/${workspace.id}/source`));
  await viewer.locator("#source-connection").waitFor();
  assert.is(await viewer.locator("#source-form").count(), 0);
  assert.is(await viewer.locator("#disconnect").count(), 0);
});

test("pipeline on: the webhook URL; a push delivery with its outcome and the run it created; the run reads 'GitHub push <sha7>' on the runs list and the overview", async (ctx) => {
  const { h, acme, workspace, double } = ctx;
  pipelineOn(ctx);
  ctx.worker = new GitHubWorker(h.server.services, { pollIntervalMs: 50, backoffBaseMs: 200 });
  await ctx.worker.start();
  double.installations.set(INSTALLATION, [REPOSITORY]);
  const sha = newSha();
  double.setTarball(
    REPOSITORY,
    sha,
    await commitTarball(REPOSITORY, sha, {
      "infra/main.tf": 'resource "terraform_data" "greeting" {\n  input = "hello"\n}\n',
    }),
  );
  const sent = await deliver(
    h.server,
    double,
    "push",
    pushPayload(REPOSITORY, INSTALLATION, sha, { changed: ["infra/main.tf"], message: "Greet from GitHub" }),
  );
  assert.is(sent.response.status, 202);
  const result = await settled(h.server, sent.deliveryId);
  assert.is(result.status, "processed", JSON.stringify(result));
  const runId = result.run_ids[0];
  await h.waitForStatus(acme, runId, ["awaiting_approval"]);

  const { page } = await h.signInAs(acme, "operator");
  await page.goto(h.url(`/workspaces/${workspace.id}/source`));
  await page.locator("#pipeline-on").waitFor();
  assert.is(await page.locator("#webhook-url").innerText(), `${h.server.baseUrl}/v1/github/webhooks`);
  // The App id and the API URL are for administrators only: the operator's page has neither.
  assert.not.match(await page.locator("#pipeline-on").innerText(), double.appId);
  assert.not.match(await page.locator("#pipeline-on").innerText(), double.url);
  assert.is(await page.locator("#pipeline-app").count(), 0);
  const row = page.locator(`tr[data-delivery-id="${sent.deliveryId}"]`);
  await row.waitFor();
  const cells = await row.locator("td").allInnerTexts();
  assert.match(cells[0], "push");
  assert.is(cells[1], "Processed");
  assert.match(cells[2], result.outcome!);
  assert.is(cells[3], String(result.attempts));
  assert.is(await row.locator("td").nth(4).locator("a").getAttribute("href"), `/runs/${runId}`);
  assert.match((await row.locator("td").nth(5).locator("time").getAttribute("title"))!, / UTC$/);
  assert.match((await row.locator("td").nth(6).locator("time").getAttribute("title"))!, / UTC$/);
  await h.screenshot(page, "workspace-source-pipeline-on-deliveries");
  await h.checkA11y(page, "source settings, pipeline on, deliveries");

  await page.goto(h.url("/runs"));
  const listed = page.locator(`tr[data-run-id="${runId}"] .run-commit`);
  await listed.waitFor();
  assert.is(await listed.innerText(), `GitHub push ${sha.slice(0, 7)}`);
  assert.match((await listed.getAttribute("title"))!, `${REPOSITORY} refs/heads/main ${sha}`);
  await h.screenshot(page, "runs-page-github-commit");

  await page.goto(h.url(`/workspaces/${workspace.id}`));
  await page.locator(".run-commit").first().waitFor();
  assert.is(await page.locator(".run-commit").first().innerText(), `GitHub push ${sha.slice(0, 7)}`);
  await h.cancel(acme, runId).catch(() => undefined);
});

test("cloud access: workload identity off is said plainly; a viewer sees no control; an operator switches the plan requirement and creates a profile (a refusal next to its field)", async (ctx) => {
  const { h, acme, workspace } = ctx;
  const viewer = (await h.signInAs(acme, "viewer")).page;
  await viewer.goto(h.url(`/workspaces/${workspace.id}/cloud-access`));
  await viewer.locator("#workload-identity-off").waitFor();
  const off = await viewer.locator("#workload-identity-off").innerText();
  assert.match(off, "Workload identity is off on this deployment.");
  assert.match(off, "STACKSHIP_PUBLIC_URL");
  assert.match(
    await viewer.locator("#verification-note").innerText(),
    "Any change to a profile clears its verification, and only verified profiles serve speculative plans",
  );
  assert.is(await viewer.locator("#plan-requires-credential").count(), 0);
  assert.is(await viewer.locator("#new-profile").count(), 0);
  assert.match(await viewer.locator("#plan-requirement").innerText(), "Plans do not need a cloud credential");
  await h.screenshot(viewer, "workspace-cloud-access-identity-off-viewer");
  await h.checkA11y(viewer, "cloud access, identity off, viewer");

  const { page } = await h.signInAs(acme, "operator");
  await page.goto(h.url(`/workspaces/${workspace.id}/cloud-access`));
  await page.getByRole("switch", { name: "Plans need a cloud credential" }).check();
  await page.getByText("Plans need a cloud credential: a run whose plan").waitFor();
  assert.is(
    (await getWorkspace({ client: h.server.v1(acme.token), path: { workspace_id: workspace.id } })).data!.data
      .attributes.plan_requires_credential,
    true,
  );
  assert.is(await page.getByRole("switch", { name: "Plans need a cloud credential" }).isChecked(), true);

  await page.getByRole("button", { name: "New federation profile" }).click();
  await page.getByLabel("Name", { exact: true }).fill("deploy");
  await page.getByLabel("Provider").selectOption("generic");
  await page.getByRole("button", { name: "Create the profile" }).click();
  const audienceError = page.locator("#error-audience");
  await audienceError.waitFor();
  assert.match(await audienceError.innerText(), "A generic profile needs an audience");
  assert.is((await profilesOf(ctx)).length, 0, "nothing was created");
  await h.screenshot(page, "workspace-cloud-access-field-error");
  await h.checkA11y(page, "cloud access, field error");

  await page.getByLabel("Provider").selectOption("aws");
  await page.getByLabel("Role ARN").fill("arn:aws:iam::123456789012:role/stackship-deploy");
  await page.getByLabel("Speculative plan").check();
  await page.getByRole("button", { name: "Create the profile" }).click();
  const card = page.locator("article.profile");
  await card.waitFor();
  const text = await card.innerText();
  for (const fact of [
    "deploy",
    "AWS",
    "sts.amazonaws.com",
    "arn:aws:iam::123456789012:role/stackship-deploy",
    "Plan, Apply, Speculative plan",
    "Not verified",
  ])
    assert.match(text, fact);
  assert.is(await card.getByRole("button", { name: /^Verify/ }).count(), 0, "an operator may not verify");
  assert.is(await card.getByRole("button", { name: "Edit deploy" }).count(), 1);
  await h.screenshot(page, "workspace-cloud-access-profile-operator");
  await h.checkA11y(page, "cloud access, profile, operator");
});

test("cloud access: an admin verifies the profile (who and when); an edit clears the verification; delete asks first; with an issuer the page says it is on", async (ctx) => {
  const { h, acme, workspace } = ctx;
  const { page, user } = await h.signInAs(acme, "admin");
  await page.goto(h.url(`/workspaces/${workspace.id}/cloud-access`));
  const card = page.locator("article.profile");
  await card.getByRole("button", { name: "Verify deploy" }).click();
  await card.locator(".verified").waitFor();
  assert.match(await card.locator(".verification").innerText(), `Verified by ${user.email}`);
  assert.match((await card.locator(".verification time").getAttribute("title"))!, / UTC$/);
  const [verified] = await profilesOf(ctx);
  assert.is(verified.attributes.verified_by, user.email);
  assert.ok(verified.attributes.verified_at);
  await h.screenshot(page, "workspace-cloud-access-verified");
  await h.checkA11y(page, "cloud access, verified profile");

  // A viewer sees the profile and its verification, and no button.
  const viewer = (await h.signInAs(acme, "viewer")).page;
  await viewer.goto(h.url(`/workspaces/${workspace.id}/cloud-access`));
  await viewer.locator("article.profile .verified").waitFor();
  assert.match(await viewer.locator("article.profile .verification").innerText(), `Verified by ${user.email}`);
  assert.is(await viewer.locator("article.profile button").count(), 0);
  assert.is(await viewer.getByRole("switch").count(), 0);
  await h.screenshot(viewer, "workspace-cloud-access-verified-viewer");

  await card.getByRole("button", { name: "Edit deploy" }).click();
  assert.match(
    await page.locator("#edit-clears-verification").innerText(),
    "Saving a change clears this profile's verification.",
  );
  await page.getByLabel("Audience").fill("sts.amazonaws.com/deploy");
  await page.getByRole("button", { name: "Save the profile" }).click();
  await page.getByText("sts.amazonaws.com/deploy").waitFor();
  await card.locator(".unverified").waitFor();
  assert.match(
    await card.locator(".verification").innerText(),
    "Not verified — it serves no speculative plan until an organization admin verifies it",
  );
  const [edited] = await profilesOf(ctx);
  assert.is(edited.attributes.verified_at, null, "the edit cleared the verification");
  assert.is(edited.attributes.audience, "sts.amazonaws.com/deploy");
  await h.screenshot(page, "workspace-cloud-access-verification-cleared");

  await card.getByRole("button", { name: "Delete deploy…" }).click();
  await card.getByRole("button", { name: "Keep it" }).click();
  assert.is((await profilesOf(ctx)).length, 1);
  await card.getByRole("button", { name: "Delete deploy…" }).click();
  await card.getByRole("button", { name: "Delete", exact: true }).click();
  await page.locator("#profiles-empty").waitFor();
  assert.is((await profilesOf(ctx)).length, 0);

  // A deployment with STACKSHIP_PUBLIC_URL is an issuer (set as the test server's publicUrlIsBaseUrl does).
  h.server.services.config.publicUrl = h.server.baseUrl;
  await page.reload();
  await page.locator("#workload-identity-on").waitFor();
  assert.match(
    await page.locator("#workload-identity-on").innerText(),
    `StackShip issues tokens as ${h.server.baseUrl}`,
  );
  await h.screenshot(page, "workspace-cloud-access-identity-on");
  await h.checkA11y(page, "cloud access, identity on");

  // The dark tokens: both pages with their controls and states (axe checks the contrast).
  const dark = (await h.signInAs(acme, user, { colorScheme: "dark" })).page;
  await dark.goto(h.url(`/workspaces/${workspace.id}/cloud-access`));
  await dark.getByRole("button", { name: "New federation profile" }).click();
  await h.screenshot(dark, "workspace-cloud-access-dark");
  await h.checkA11y(dark, "cloud access, dark");
  await dark.goto(h.url(`/workspaces/${workspace.id}/source`));
  await dark.locator("#deliveries").waitFor();
  await h.screenshot(dark, "workspace-source-dark");
  await h.checkA11y(dark, "source settings, dark");
});

test.run();
