// Helpers for tests that execute runs for real (bubblewrap, tofu) through the in-process runner.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import * as assert from "uvu/assert";
import { approveRun, createRun, getRun, getRunLog, type Run } from "../../../client/src/index.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { TERMINAL_RUN_STATUSES, type RunStatus } from "../../src/domain/run.ts";
import { makeConfigurationTarball, uploadConfiguration } from "./factories.ts";
import { expectStatus } from "./responses.ts";
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

/** Where a run stops moving on its own: it ended, or it waits for a person. */
const SETTLED: readonly string[] = [
  ...TERMINAL_RUN_STATUSES,
  "awaiting_approval",
  "policy_soft_failed",
  "needs_recovery",
];

/** What a settled run is asserted to be, and where to look when it is not. */
export interface Settled {
  /** The status_reason it must have, if any. */
  reason?: string;
  /** Whose log a failed assertion shows (the apply's when the wait is for its outcome, else the plan's). */
  phase?: "plan" | "policy" | "apply";
  timeoutMs?: number;
}

/**
 * Waits until the run settles (ends, or waits for a person) and asserts it settled in `expected`
 * (with `reason`, when given), showing the phase's log when it did not. It never waits out the
 * time limit on a run that went another way.
 */
export async function waitToSettle(
  server: TestServer,
  token: string,
  runId: string,
  expected: RunStatus,
  {
    reason,
    phase = expected === "applied" || expected === "needs_recovery" || reason?.startsWith("apply_") ? "apply" : "plan",
    timeoutMs,
  }: Settled = {},
): Promise<Run> {
  if (!SETTLED.includes(expected)) throw new TypeError(`${expected} is not a status a run settles in`);
  const run = await waitForStatus(server, token, runId, [...SETTLED], timeoutMs);
  const { status, status_reason } = run.attributes;
  if (status !== expected || (reason !== undefined && status_reason !== reason))
    assert.unreachable(
      `run ${runId} settled ${status} (${status_reason}), wanted ${expected}${reason === undefined ? "" : ` (${reason})`}; ${phase} log:\n${await readLog(server, token, runId, phase)}`,
    );
  return run;
}

/** Waits for the run to await approval, approves its plan and waits for it to be applied; each step asserted, with the phase's log when it fails. */
export async function planApproveApply(server: TestServer, token: string, runId: string): Promise<Run> {
  const planned = await waitForPlanned(server, token, runId);
  await approvePlan(server, token, runId, planned.attributes.plan_digest!);
  return waitForApplied(server, token, runId);
}

/** Waits for the run's plan to end and asserts it awaits approval (with the plan's log if it does not). */
export function waitForPlanned(server: TestServer, token: string, runId: string): Promise<Run> {
  return waitToSettle(server, token, runId, "awaiting_approval");
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
export function waitForApplied(server: TestServer, token: string, runId: string): Promise<Run> {
  return waitToSettle(server, token, runId, "applied");
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
