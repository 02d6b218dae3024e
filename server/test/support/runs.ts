// Helpers for tests that execute runs for real (bubblewrap, tofu) through the in-process runner.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import * as assert from "uvu/assert";
import { approveRun, createRun, getRun, getRunLog, type Run } from "../../../client/src/index.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { expectStatus, makeConfigurationTarball, uploadConfiguration } from "./factories.ts";
import { runnerEnv } from "./spawned.ts";
import type { TestServer } from "./test-server.ts";

/** The files of a fixture configuration under server/test/fixtures/configs/<name>. */
export function fixture(name: string): Record<string, string> {
  const dir = join(REPO_ROOT, "server/test/fixtures/configs", name);
  return Object.fromEntries(readdirSync(dir).map((file) => [file, readFileSync(join(dir, file), "utf8")]));
}

/** Uploads `files` as a new configuration version and creates a run on it. */
export async function startRun(
  server: TestServer,
  token: string,
  workspaceId: string,
  files: Record<string, string>,
  kind: "plan_and_apply" | "speculative" = "plan_and_apply",
): Promise<Run> {
  const { configurationVersion } = await uploadConfiguration(
    server,
    token,
    workspaceId,
    makeConfigurationTarball(files),
  );
  return createRunOn(server, token, workspaceId, configurationVersion.id, kind);
}

/** Uploads `files` and starts a run on them; returns it once it awaits approval (with the plan's log if it does not). */
export async function startPlannedRun(
  server: TestServer,
  token: string,
  workspaceId: string,
  files: Record<string, string>,
): Promise<Run> {
  const run = await startRun(server, token, workspaceId, files);
  return waitForPlanned(server, token, run.id);
}

/** Creates a run on an uploaded configuration version (asserting the 201). */
export async function createRunOn(
  server: TestServer,
  token: string,
  workspaceId: string,
  configurationVersionId: string,
  kind: "plan_and_apply" | "speculative" = "plan_and_apply",
): Promise<Run> {
  const created = await createRun({
    client: server.v1(token),
    path: { workspace_id: workspaceId },
    body: {
      data: {
        type: "runs",
        attributes: { kind },
        relationships: {
          configuration_version: { data: { type: "configuration-versions", id: configurationVersionId } },
        },
      },
    },
  });
  return expectStatus(created, 201).data;
}

/** Polls the run until its status is one of `statuses` (fails after `timeoutMs`). */
export async function waitForStatus(
  server: TestServer,
  token: string,
  runId: string,
  statuses: string[],
  timeoutMs = 90_000,
): Promise<Run> {
  const deadline = Date.now() + timeoutMs;
  let last: Run | undefined;
  while (Date.now() < deadline) {
    last = expectStatus(await getRun({ client: server.v1(token), path: { run_id: runId } }), 200).data;
    if (statuses.includes(last.attributes.status)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const plan = await readLog(server, token, runId, "plan");
  assert.unreachable(
    `run ${runId} stayed ${last?.attributes.status}, wanted ${statuses.join("|")}; plan log:\n${plan}`,
  );
  throw new Error("unreachable");
}

/** A phase's whole stored (sanitized) log. */
export async function readLog(
  server: TestServer,
  token: string,
  runId: string,
  phase: "plan" | "policy" | "apply",
): Promise<string> {
  let text = "";
  let offset = 0;
  for (;;) {
    const window = expectStatus(
      await getRunLog({ client: server.v1(token), path: { run_id: runId, phase }, query: { offset } }),
      200,
    ).data.attributes;
    text += window.text;
    if (window.next_offset === offset) return text;
    offset = window.next_offset;
  }
}

/** A runner-only process (`npm run runner`'s entry point) against the test server, as a second host would run it. */
export function startRunnerProcess(server: TestServer): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "server/src/runner-main.ts")], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, ...runnerEnv(server) },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

/** Polls a phase's log until it contains `text` (fails after `timeoutMs`). */
export async function waitForLog(
  server: TestServer,
  token: string,
  runId: string,
  phase: "plan" | "policy" | "apply",
  text: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await readLog(server, token, runId, phase)).includes(text)) {
    assert.ok(Date.now() < deadline, `the ${phase} log never showed ${JSON.stringify(text)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits for the run to await approval, approves its plan and waits for it to be applied; each step asserted, with the phase's log when it fails. */
export async function planApproveApply(server: TestServer, token: string, runId: string): Promise<Run> {
  const planned = await waitForPlanned(server, token, runId);
  await approvePlan(server, token, runId, planned.attributes.plan_digest!);
  return waitForApplied(server, token, runId);
}

/** Waits for the run's plan to end and asserts it awaits approval (with the plan's log if it does not). */
export async function waitForPlanned(server: TestServer, token: string, runId: string): Promise<Run> {
  const planned = await waitForStatus(server, token, runId, ["awaiting_approval", "planned_and_finished", "errored"]);
  assert.is(planned.attributes.status, "awaiting_approval", await readLog(server, token, runId, "plan"));
  return planned;
}

/**
 * Waits for the run's plan, approves it and waits until the apply's log shows `marker` (a
 * provisioner's echo): the apply is then under way, for a test to interrupt it.
 */
export async function applyUntil(
  server: TestServer,
  token: string,
  runId: string,
  marker = "provisioning-started",
): Promise<void> {
  const planned = await waitForPlanned(server, token, runId);
  await approvePlan(server, token, runId, planned.attributes.plan_digest!);
  await waitForLog(server, token, runId, "apply", marker);
}

/** Waits for the run's apply to end and asserts it was applied (with the apply's log if it was not). */
export async function waitForApplied(server: TestServer, token: string, runId: string): Promise<Run> {
  const applied = await waitForStatus(server, token, runId, ["applied", "errored", "needs_recovery"]);
  assert.is(applied.attributes.status, "applied", await readLog(server, token, runId, "apply"));
  return applied;
}

/** Approves the run's plan by its digest (with an optional reason), asserting the 202; returns the run as answered. */
export async function approvePlan(
  server: TestServer,
  token: string,
  runId: string,
  planDigest: string,
  reason?: string,
): Promise<Run> {
  const attributes = reason === undefined ? { plan_digest: planDigest } : { plan_digest: planDigest, reason };
  return expectStatus(
    await approveRun({
      client: server.v1(token),
      path: { run_id: runId },
      body: { data: { type: "approvals", attributes } },
    }),
    202,
  ).data;
}
