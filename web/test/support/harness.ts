// The e2e harness (API documented in ./index.ts).
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import {
  approveRun,
  cancelRun,
  createPolicySet,
  createRun,
  discardRun,
  type Run,
  type Workspace,
} from "../../../client/src/index.ts";
import { REPO_ROOT } from "../../../server/src/config.ts";
import { RunnerEngine } from "../../../server/src/runner/engine.ts";
import {
  createOrganizationWithToken,
  createWorkspace,
  makeConfigurationTarball,
  uploadConfiguration,
  type WorkspaceAttributes,
} from "../../../server/test/support/factories.ts";
import { expectStatus } from "../../../server/test/support/responses.ts";
import { fixture, readLog, startRunnerProcess, waitForStatus } from "../../../server/test/support/runs.ts";
import { addMembership, createUser } from "../../../server/test/support/sessions.ts";
import { withTestServer, type TestServer } from "../../../server/test/support/test-server.ts";
import { checkA11y, launchChromium } from "./browser.ts";
// @ts-expect-error: a plain ES module without type declarations (web/build.mjs)
import * as build from "../../build.mjs";

/** web/build.mjs's builder, as it is written there: builds into `out` and returns the bundle's file name. */
const { buildDashboard } = build as { buildDashboard: (out?: string) => Promise<string> };

export const SCREENSHOT_DIR = join(REPO_ROOT, ".stackship-test/screenshots");
export { CHROMIUM } from "./browser.ts";

export type Role = "viewer" | "operator" | "admin";

export interface HarnessOrganization {
  name: string;
  id: string;
  /** An admin API token of the organization. */
  token: string;
}

export interface HarnessUser {
  email: string;
  password: string;
  userId: string;
  displayName: string;
  role: Role;
}

export type RunState =
  | "plan_running"
  | "awaiting_approval"
  | "awaiting_approval_destroys"
  | "discarded"
  | "policy_soft_failed"
  | "applied"
  | "plan_failed"
  | "needs_recovery"
  | "expired";

export interface MadeRun {
  run: Run;
  workspace: Workspace;
}

export interface MakeRunOptions {
  files?: Record<string, string>;
  workspace?: Workspace;
  /** The discard reason ("discarded"). */
  reason?: string;
  /** The run's message (its title on the run page). */
  message?: string;
}

export interface PageOptions {
  /** The preferred colour scheme the page sees (the dashboard has light and dark tokens). */
  colorScheme?: "light" | "dark";
  /** The window size (1280 × 900 unless given; a phone is 390 × 844). */
  viewport?: { width: number; height: number };
}

export interface Harness {
  server: TestServer;
  browser: Browser;
  url(path: string): string;
  organization(name: string): Promise<HarnessOrganization>;
  workspace(org: HarnessOrganization, name?: string, attributes?: WorkspaceAttributes): Promise<Workspace>;
  user(org: HarnessOrganization, role: Role, options?: { displayName?: string }): Promise<HarnessUser>;
  signInAs(
    org: HarnessOrganization,
    who: Role | HarnessUser,
    options?: PageOptions,
  ): Promise<{ context: BrowserContext; page: Page; user: HarnessUser }>;
  newPage(options?: PageOptions): Promise<{ context: BrowserContext; page: Page }>;
  makeRun(org: HarnessOrganization, state: RunState, options?: MakeRunOptions): Promise<MadeRun>;
  /** Uploads `files` and creates a run without waiting for anything (it queues behind the workspace's lock). */
  startRun(
    org: HarnessOrganization,
    workspace: Workspace,
    files?: Record<string, string>,
    message?: string,
  ): Promise<Run>;
  waitForStatus(org: HarnessOrganization, runId: string, statuses: string[], timeoutMs?: number): Promise<Run>;
  cancel(org: HarnessOrganization, runId: string): Promise<void>;
  expireSession(email: string): Promise<void>;
  screenshot(page: Page, name: string): Promise<string>;
  checkA11y(page: Page, label: string, options?: { exclude?: string[] }): Promise<void>;
  stop(): Promise<void>;
}

/** Configurations of the run states. */
const CONFIGS = {
  // Large enough that the plan is still running for a good while on a fast machine; cancel it when done.
  many: { "main.tf": 'resource "terraform_data" "many" {\n  count = 10000\n  input = count.index\n}\n' },
  failing: {
    "main.tf": ["first", "second", "third"]
      .map((name) => `resource "terraform_data" "${name}" {\n  input = tonumber("not-a-number-${name}")\n}\n`)
      .join("\n"),
  },
  slow: {
    "main.tf":
      'resource "terraform_data" "slow" {\n  provisioner "local-exec" {\n    command = "echo provisioning-started; sleep 60"\n  }\n}\n',
  },
  pair: {
    "main.tf":
      'resource "terraform_data" "keep" {\n  input = "keep"\n}\n\nresource "terraform_data" "old" {\n  input = "old"\n}\n',
  },
  swap: {
    "main.tf":
      'resource "terraform_data" "keep" {\n  input = "keep"\n}\n\nresource "terraform_data" "new" {\n  input = "new"\n}\n',
  },
};

const FLAG_EVERY_DATA = `package soft\n\nviolations contains {"title": "Needs tags", "message": sprintf("%s is flagged", [rc.address]), "address": rc.address} if {\n  some rc in input.resource_changes\n  rc.type == "terraform_data"\n}\n`;

let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${(counter += 1)}`;

/**
 * Wraps a uvu before/after hook so that its error is printed: uvu counts a failing hook's tests
 * as not passed but does not say why.
 */
export function hook<T>(fn: (ctx: T) => Promise<void>): (ctx: T) => Promise<void> {
  return async (ctx) => {
    try {
      await fn(ctx);
    } catch (error) {
      process.stderr.write(
        `[e2e] hook failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      throw error;
    }
  };
}

/** Starts the server (with the freshly built dashboard), the runner and Chromium. */
export async function startHarness(): Promise<Harness> {
  const dashboardDir = mkdtempSync(join(tmpdir(), "ss-dashboard-"));
  await buildDashboard(dashboardDir);
  mkdirSync(SCREENSHOT_DIR, { recursive: true });

  // withTestServer is callback-shaped; hold its callback open until stop().
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let ready!: (server: TestServer) => void;
  const started = new Promise<TestServer>((resolve) => (ready = resolve));
  const lifetime = withTestServer(
    "sqlite",
    async (server) => {
      ready(server);
      await released;
    },
    { config: { dashboardDir } },
  );
  const server = await Promise.race([
    started,
    lifetime.then(() => Promise.reject(new Error("the test server ended before it started"))),
  ]);
  const port = Number(new URL(server.baseUrl).port);

  const newRunner = () =>
    new RunnerEngine(
      { services: server.services, api: { host: "127.0.0.1", port }, phaseTimeoutMs: 120_000 },
      { pollIntervalMs: 50, heartbeatIntervalMs: 200, staleAfterMs: 1_500, concurrency: 2 },
    );
  let runner: RunnerEngine | null = newRunner();
  await runner.start();

  const browser = await launchChromium();
  const contexts: BrowserContext[] = [];

  const url = (path: string) => new URL(path, server.baseUrl).href;
  // Serialises the runner swap of "needs_recovery" against other run making.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = chain.then(fn, fn);
    chain = next.catch(() => undefined);
    return next;
  };

  const harness: Harness = {
    server,
    browser,
    url,

    async organization(name) {
      const org = await createOrganizationWithToken(server, name, "admin");
      return { name, id: org.organizationId, token: org.token };
    },

    workspace(org, name, attributes = {}) {
      return createWorkspace(server, org.token, org.name, { name: name ?? unique("ws"), ...attributes });
    },

    async user(org, role, options = {}) {
      const displayName = options.displayName ?? `${role[0].toUpperCase()}${role.slice(1)} ${unique("user").slice(-4)}`;
      const created = await createUser(server, { email: `${unique(role)}@example.com`, displayName });
      await addMembership(server, org.name, created.email, role);
      return { ...created, displayName, role };
    },

    async signInAs(org, who, options = {}) {
      const user = typeof who === "string" ? await harness.user(org, who) : who;
      const { context, page } = await harness.newPage(options);
      await page.goto(url("/sign-in"));
      await page.getByLabel("Email").fill(user.email);
      await page.getByLabel("Password").fill(user.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL((u) => !u.pathname.startsWith("/sign-in"), { timeout: 15_000 });
      return { context, page, user };
    },

    async newPage(options = {}) {
      // The dashboard's own Content-Security-Policy applies (no bypass): the scenarios prove the app works under it.
      const context = await browser.newContext({
        viewport: options.viewport ?? { width: 1280, height: 900 },
        timezoneId: "UTC",
        locale: "en-US",
        colorScheme: options.colorScheme ?? "light",
      });
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      page.on("pageerror", (error) => process.stderr.write(`[browser] page error: ${error.message}\n`));
      page.on("console", (message) => {
        // Refused requests (401 before sign-in, 404s a scenario asks for) are expected; other errors are printed.
        if (message.type() === "error" && !message.text().startsWith("Failed to load resource"))
          process.stderr.write(`[browser] console error: ${message.text()}\n`);
      });
      return { context, page };
    },

    makeRun(org, state, options = {}) {
      return serial(() => makeRun(org, state, options));
    },

    startRun(org, workspace, files = fixture("basic"), message) {
      return startRun(org.token, workspace.id, files, message);
    },

    waitForStatus(org, runId, statuses, timeoutMs = 120_000) {
      return waitForStatus(server, org.token, runId, statuses, timeoutMs);
    },

    async cancel(org, runId) {
      const result = await cancelRun({
        client: server.v1(org.token),
        path: { run_id: runId },
        body: { data: { type: "decisions", attributes: { reason: "test over" } } },
      });
      if (result.response.status !== 202)
        throw new Error(`cancel ${runId}: ${result.response.status} ${JSON.stringify(result.error)}`);
    },

    async expireSession(email) {
      const user = await server.db
        .knex("users")
        .whereRaw("lower(email) = ?", [email.toLowerCase()])
        .first<{ id: string } | undefined>();
      if (!user) throw new Error(`no user ${email}`);
      await server.db
        .knex("sessions")
        .where({ user_id: user.id })
        .update({ expires_at: new Date(Date.now() - 1_000).toISOString() });
    },

    async screenshot(page, name) {
      const file = join(SCREENSHOT_DIR, `${name.replace(/[^A-Za-z0-9_.-]+/g, "-")}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },

    checkA11y,

    async stop() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
      await runner?.stop({ interrupt: true });
      runner = null;
      release();
      await lifetime;
      rmSync(dashboardDir, { recursive: true, force: true });
    },
  };

  async function startRun(
    token: string,
    workspaceId: string,
    files: Record<string, string>,
    message?: string,
  ): Promise<Run> {
    const { configurationVersion } = await uploadConfiguration(
      server,
      token,
      workspaceId,
      makeConfigurationTarball(files),
    );
    const created = await createRun({
      client: server.v1(token),
      path: { workspace_id: workspaceId },
      body: {
        data: {
          type: "runs",
          attributes: message === undefined ? {} : { message },
          relationships: {
            configuration_version: { data: { type: "configuration-versions", id: configurationVersion.id } },
          },
        },
      },
    });
    return expectStatus(created, 201).data;
  }

  let message: string | undefined;

  async function planned(
    org: HarnessOrganization,
    files: Record<string, string>,
    workspace: Workspace,
    statuses = ["awaiting_approval"],
  ) {
    const run = await startRun(org.token, workspace.id, files, message);
    const reached = await waitForStatus(
      server,
      org.token,
      run.id,
      [...statuses, "errored", "canceled", "planned_and_finished", "needs_recovery", "plan_credentials_required"],
      120_000,
    );
    if (!statuses.includes(reached.attributes.status)) {
      throw new Error(
        `run ${run.id} ended ${reached.attributes.status} (${reached.attributes.status_reason}), wanted ${statuses.join("|")}; plan log:\n${await readLog(server, org.token, run.id, "plan")}`,
      );
    }
    return reached;
  }

  async function approve(org: HarnessOrganization, run: Run) {
    expectStatus(
      await approveRun({
        client: server.v1(org.token),
        path: { run_id: run.id },
        body: { data: { type: "approvals", attributes: { plan_digest: run.attributes.plan_digest! } } },
      }),
      202,
    );
  }

  async function approveAndApply(org: HarnessOrganization, run: Run) {
    await approve(org, run);
    const applied = await waitForStatus(server, org.token, run.id, ["applied", "errored", "needs_recovery"], 120_000);
    if (applied.attributes.status !== "applied")
      throw new Error(
        `run ${run.id} ended ${applied.attributes.status}; apply log:\n${await readLog(server, org.token, run.id, "apply")}`,
      );
    return applied;
  }

  async function makeRun(org: HarnessOrganization, state: RunState, options: MakeRunOptions): Promise<MadeRun> {
    message = options.message;
    const workspace = options.workspace ?? (await harness.workspace(org, unique(state.replace(/_/g, "-"))));
    const basic = options.files ?? fixture("basic");
    switch (state) {
      case "plan_running": {
        const run = await startRun(org.token, workspace.id, options.files ?? CONFIGS.many, message);
        return { run: await waitForStatus(server, org.token, run.id, ["planning"], 60_000), workspace };
      }
      case "awaiting_approval":
        return { run: await planned(org, basic, workspace), workspace };
      case "awaiting_approval_destroys": {
        await approveAndApply(org, await planned(org, CONFIGS.pair, workspace));
        return { run: await planned(org, options.files ?? CONFIGS.swap, workspace), workspace };
      }
      case "discarded": {
        const run = await planned(org, basic, workspace);
        expectStatus(
          await discardRun({
            client: server.v1(org.token),
            path: { run_id: run.id },
            body: { data: { type: "decisions", attributes: { reason: options.reason ?? "not this one" } } },
          }),
          202,
        );
        return { run: await waitForStatus(server, org.token, run.id, ["discarded"], 30_000), workspace };
      }
      case "policy_soft_failed": {
        expectStatus(
          await createPolicySet({
            client: server.v1(org.token),
            path: { organization_name: org.name },
            body: {
              data: {
                type: "policy-sets",
                attributes: {
                  name: unique("tags"),
                  policies: [{ name: "tagged", enforcement_level: "soft_mandatory", source: FLAG_EVERY_DATA }],
                  workspace_ids: [workspace.id],
                },
              },
            },
          }),
          201,
        );
        return { run: await planned(org, basic, workspace, ["policy_soft_failed"]), workspace };
      }
      case "applied":
        return { run: await approveAndApply(org, await planned(org, basic, workspace)), workspace };
      case "plan_failed": {
        const run = await startRun(org.token, workspace.id, options.files ?? CONFIGS.failing, message);
        const failed = await waitForStatus(server, org.token, run.id, ["errored", "awaiting_approval"], 120_000);
        if (failed.attributes.status_reason !== "plan_failed")
          throw new Error(`run ${run.id} did not fail its plan: ${failed.attributes.status}`);
        return { run: failed, workspace };
      }
      case "expired": {
        const run = await planned(org, basic, workspace);
        await server.db
          .knex("runs")
          .where({ id: run.id })
          .update({ approval_expires_at: new Date(Date.now() - 1_000).toISOString() });
        return { run: await waitForStatus(server, org.token, run.id, ["expired"], 30_000), workspace };
      }
      case "needs_recovery":
        return { run: await interruptedApply(org, workspace, options.files ?? CONFIGS.slow), workspace };
    }
  }

  /** A runner process takes the apply and is killed mid-provisioner; a fresh in-process runner finds the lost apply. */
  async function interruptedApply(
    org: HarnessOrganization,
    workspace: Workspace,
    files: Record<string, string>,
  ): Promise<Run> {
    await runner?.stop();
    runner = null;
    let child: ChildProcess | null = null;
    try {
      child = startRunnerProcess(server);
      const run = await planned(org, files, workspace);
      await approve(org, run);
      const deadline = Date.now() + 90_000;
      while (!(await readLog(server, org.token, run.id, "apply")).includes("provisioning-started")) {
        if (Date.now() > deadline) throw new Error("the apply never reached the provisioner");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      child.kill("SIGKILL");
      await new Promise((resolve) => child!.once("exit", resolve));
      runner = newRunner();
      await runner.start();
      return await waitForStatus(server, org.token, run.id, ["needs_recovery", "applied", "errored"], 30_000);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      if (!runner) {
        runner = newRunner();
        await runner.start();
      }
    }
  }

  return harness;
}
