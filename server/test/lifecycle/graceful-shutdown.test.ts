import { request } from "node:http";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { approveRun } from "../../../client/src/index.ts";
import { readStateBytes } from "../../src/commands/state-versions.ts";
import { createOrganizationWithToken, createWorkspace, putUpload } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { connectLive } from "../support/live.ts";
import { signedInMember } from "../support/sessions.ts";
import { runnerEnv, sandboxProcesses, spawnStackShip, type Spawned } from "../support/spawned.ts";
import { readLog, startRun, waitForLog, waitForPlanned, waitForStatus, waitToSettle } from "../support/runs.ts";
import { poll } from "../support/poll.ts";
import { MANY_RESOURCES } from "../support/scenarios.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import { createWith, hex, newRun, setUp, startApply, stateFile } from "../api/state-support.ts";

// Graceful shutdown (issue 31, part 3) with real processes: a runner-only process (real
// bubblewrap and tofu) and an API process, each on the test server's database, get SIGTERM or
// SIGINT while work is in flight. What they waited for is read from their last log line; nothing
// here is timed: every wait is on a condition.
const shutdown = suite("graceful shutdown");

const sleeping = (seconds: number) => ({
  "main.tf": `resource "terraform_data" "slow" {\n  provisioner "local-exec" {\n    command = "echo provisioning-started; sleep ${seconds}; echo provisioning-done"\n  }\n}\n`,
});

/** Sends `signal` and waits for the exit; returns the exit code and the process's last line. */
async function signalAndExit(process: Spawned, signal: NodeJS.Signals): Promise<{ code: number | null; last: string }> {
  // "close", not "exit": the process's output is read to its end.
  const exited = new Promise<number | null>((resolve) => process.child.once("close", (code) => resolve(code)));
  process.child.kill(signal);
  const code = await exited;
  return { code, last: lastLine(process) };
}

/** The running attempt of `phase` once its sandbox's processes exist. */
/** The run_attempts columns these tests read. */
interface AttemptRow {
  id: string;
  run_id: string;
  phase: "plan" | "apply";
  status: string;
  terminal_classification: string | null;
  sandbox_name: string;
}

async function runningAttempt(server: TestServer, runId: string, phase: "plan" | "apply"): Promise<string> {
  return poll(`the ${phase} sandbox of ${runId}`, async () => {
    const attempt = await server.db
      .knex<AttemptRow>("run_attempts")
      .where({ run_id: runId, phase, status: "running" })
      .whereNotNull("sandbox_name")
      .first();
    return attempt && sandboxProcesses(attempt.sandbox_name).length > 0 ? attempt.id : undefined;
  });
}

async function approve(server: TestServer, token: string, runId: string): Promise<void> {
  const planned = await waitForPlanned(server, token, runId);
  expectStatus(
    await approveRun({
      client: server.v1(token),
      path: { run_id: runId },
      body: { data: { type: "approvals", attributes: { plan_digest: planned.attributes.plan_digest! } } },
    }),
    202,
  );
}

function startRunner(server: TestServer, graceSeconds: string): Spawned {
  return spawnStackShip("runner-main.ts", runnerEnv(server, { STACKSHIP_SHUTDOWN_GRACE_SECONDS: graceSeconds }));
}

testEachServer(
  shutdown,
  "SIGTERM during a plan: the runner claims nothing new, the plan finishes, the process exits 0 saying it waited for it",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "planning" });
    const runner = startRunner(server, "60");
    try {
      await runner.line(/runner \S+ started: concurrency 1,/);
      const run = await startRun(server, token, workspace.id, MANY_RESOURCES);
      await runningAttempt(server, run.id, "plan");
      const { code, last } = await signalAndExit(runner, "SIGTERM");
      assert.is(code, 0, runner.output.join("\n"));
      assert.ok(
        runner.output.some((line) => line.includes("SIGTERM: shutting down: claiming no new work")),
        runner.output.join("\n"),
      );
      assert.is(
        last,
        `[stackship-runner] shut down: waited for 1 phase(s) in flight; ended within the grace: plan of ${run.id}`,
      );
      await waitToSettle(server, token, run.id, "awaiting_approval", { timeoutMs: 5_000 });
      const attempts = await server.db.knex<AttemptRow>("run_attempts").where({ run_id: run.id });
      assert.equal(
        attempts.map((a) => [a.phase, a.status, a.terminal_classification]),
        [["plan", "succeeded", "exit_zero"]],
      );
      // Work queued after the signal was not claimed by the stopped runner: it waits for another one.
      const queued = await startRun(server, token, workspace.id, MANY_RESOURCES, "speculative");
      assert.is((await waitForStatus(server, token, queued.id, ["pending"], 5_000)).attributes.status, "pending");
    } finally {
      await runner.kill();
    }
  },
);

testEachServer(
  shutdown,
  "a grace of 0 s during a plan: the plan is interrupted at once and its run ends errored (plan_failed), its attempt saying shutdown",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "plan-cut" });
    const runner = startRunner(server, "0");
    try {
      await runner.line(/runner \S+ started: concurrency 1,/);
      const run = await startRun(server, token, workspace.id, MANY_RESOURCES);
      const attemptId = await runningAttempt(server, run.id, "plan");
      const { code, last } = await signalAndExit(runner, "SIGTERM");
      assert.is(code, 0, runner.output.join("\n"));
      assert.is(
        last,
        `[stackship-runner] shut down: waited for 1 phase(s) in flight; interrupted when the grace ran out: plan of ${run.id}`,
      );
      await waitToSettle(server, token, run.id, "errored", { reason: "plan_failed", timeoutMs: 5_000 });
      const attempt = (await server.db.knex<AttemptRow>("run_attempts").where({ id: attemptId }).first())!;
      assert.equal([attempt.status, attempt.terminal_classification], ["interrupted", "runner_shutdown"]);
      assert.match(
        await readLog(server, token, run.id, "plan"),
        /StackShip interrupted this plan: the runner process received SIGTERM and the phase did not end within STACKSHIP_SHUTDOWN_GRACE_SECONDS \(0 s\)/,
      );
      // The workspace is not left locked by the ended plan.
      assert.not.ok(await server.db.knex("workspace_locks").where({ workspace_id: workspace.id }).first());
    } finally {
      await runner.kill();
    }
  },
);

testEachServer(
  shutdown,
  "SIGINT during an apply that ends within the grace: it keeps heartbeating, the apply finishes and publishes its state, the process exits 0",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "applying" });
    const runner = startRunner(server, "60");
    let sweeper: Spawned | null = null;
    try {
      await runner.line(/runner \S+ started: concurrency 1,/);
      // Long enough to still run after a loaded machine spawns the second runner below.
      const run = await startRun(server, token, workspace.id, sleeping(12));
      await approve(server, token, run.id);
      await waitForLog(server, token, run.id, "apply", "provisioning-started");
      // A second runner that takes work silent for 1.5 s as lost: the shutting-down runner must keep heartbeating its apply.
      sweeper = spawnStackShip("runner-main.ts", runnerEnv(server, { STACKSHIP_RUNNER_STALE_AFTER_MS: "1500" }));
      await sweeper.line(/runner \S+ started: concurrency 1,/);
      const { code, last } = await signalAndExit(runner, "SIGINT");
      assert.is(code, 0, runner.output.join("\n"));
      assert.is(
        last,
        `[stackship-runner] shut down: waited for 1 phase(s) in flight; ended within the grace: apply of ${run.id}`,
      );
      await waitToSettle(server, token, run.id, "applied", { timeoutMs: 5_000 });
      assert.match(await readLog(server, token, run.id, "apply"), /\(local-exec\): provisioning-done/);
      const published = await server.db.knex("state_versions").where({ run_id: run.id, status: "finalized" });
      assert.is(published.length, 1);
      const attempts = await server.db.knex<AttemptRow>("run_attempts").where({ run_id: run.id, phase: "apply" });
      assert.equal(
        attempts.map((a) => [a.status, a.terminal_classification]),
        [["succeeded", "exit_zero"]],
      );
    } finally {
      await runner.kill();
      await sweeper?.kill();
    }
  },
);

testEachServer(
  shutdown,
  "SIGTERM on npm start's process (API and runner in one) during an apply: its listener serves the apply's sandbox until the apply finished, then it exits 0",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "one-process" });
    const main = spawnStackShip("main.ts", {
      STACKSHIP_DATA_DIR: server.dataDir,
      STACKSHIP_DATABASE_URL: server.databaseUrl,
      STACKSHIP_BOOTSTRAP_TOKEN: server.bootstrapToken,
      STACKSHIP_HTTP_PORT: "0",
      STACKSHIP_HTTPS_PORT: "off",
      STACKSHIP_RUNNER_CONCURRENCY: "1",
      STACKSHIP_LOG_LEVEL: "warn",
      STACKSHIP_SHUTDOWN_GRACE_SECONDS: "60",
    });
    try {
      await main.line(/runner \S+ started \(concurrency 1/);
      // Long enough to still run when the log line has reached the test on a loaded machine.
      const run = await startRun(server, token, workspace.id, sleeping(10));
      await approve(server, token, run.id);
      await waitForLog(server, token, run.id, "apply", "provisioning-started");
      const { code, last } = await signalAndExit(main, "SIGTERM");
      assert.is(code, 0, main.output.join("\n"));
      assert.ok(
        main.output.some((line) =>
          line.includes(
            "SIGTERM: shutting down: no new work, live sockets closed; the plans and applies in flight, then the HTTP requests",
          ),
        ),
        main.output.join("\n"),
      );
      assert.match(
        last,
        new RegExp(
          `^\\[stackship\\] shut down: waited for 1 phase\\(s\\) in flight; ended within the grace: apply of ${run.id}; waited for [0-9]+ HTTP request\\(s\\) in flight: all finished$`,
        ),
      );
      await waitToSettle(server, token, run.id, "applied", { timeoutMs: 5_000 });
      assert.is((await server.db.knex("state_versions").where({ run_id: run.id, status: "finalized" })).length, 1);
    } finally {
      await main.kill();
    }
  },
);

testEachServer(
  shutdown,
  "a grace of 1 s during an apply that takes longer: the apply is interrupted and ends in needs_recovery, its attempt and log saying shutdown",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "too-slow" });
    const runner = startRunner(server, "1");
    try {
      await runner.line(/runner \S+ started: concurrency 1,/);
      const run = await startRun(server, token, workspace.id, sleeping(120));
      await approve(server, token, run.id);
      await waitForLog(server, token, run.id, "apply", "provisioning-started");
      const attemptId = await runningAttempt(server, run.id, "apply");
      const { code, last } = await signalAndExit(runner, "SIGTERM");
      assert.is(code, 0, runner.output.join("\n"));
      assert.is(
        last,
        `[stackship-runner] shut down: waited for 1 phase(s) in flight; interrupted when the grace ran out: apply of ${run.id}`,
      );
      await waitToSettle(server, token, run.id, "needs_recovery", {
        reason: "apply_interrupted",
        timeoutMs: 5_000,
      });
      const attempt = (await server.db.knex<AttemptRow>("run_attempts").where({ id: attemptId }).first())!;
      assert.is(attempt.status, "interrupted");
      assert.is(attempt.terminal_classification, "runner_shutdown");
      const log = await readLog(server, token, run.id, "apply");
      assert.match(
        log,
        /StackShip interrupted this apply: the runner process received SIGTERM and the phase did not end within STACKSHIP_SHUTDOWN_GRACE_SECONDS \(1 s\)/,
      );
      assert.not.match(log, /\(local-exec\): provisioning-done/);
      // The sandbox went with the process: nothing of the apply is left running.
      assert.equal(sandboxProcesses(attempt.sandbox_name), []);
      // needs_recovery keeps the workspace locked for the operator.
      assert.ok(await server.db.knex("workspace_locks").where({ workspace_id: workspace.id }).first());
    } finally {
      await runner.kill();
    }
  },
);

/** An API-only process (main.ts) on the test server's database and data directory. */
async function startApi(server: TestServer, graceSeconds: string): Promise<{ api: Spawned; url: string }> {
  const api = spawnStackShip("main.ts", {
    STACKSHIP_DATA_DIR: server.dataDir,
    STACKSHIP_DATABASE_URL: server.databaseUrl,
    STACKSHIP_BOOTSTRAP_TOKEN: server.bootstrapToken,
    STACKSHIP_HTTP_PORT: "0",
    STACKSHIP_HTTPS_PORT: "off",
    STACKSHIP_RUNNER_CONCURRENCY: "0",
    STACKSHIP_LOG_LEVEL: "warn",
    STACKSHIP_SHUTDOWN_GRACE_SECONDS: graceSeconds,
  });
  return { api, url: (await api.line(/StackShip is listening on (http:\/\/\S+)/))[1] };
}

/**
 * A PUT of `bytes` with `Expect: 100-continue`: `inFlight` resolves once the server answered 100
 * (its request handler has the request) and the first half of the body is written; the second
 * half is sent only when `rest()` is called.
 */
function halfSentPut(
  url: string,
  bytes: Buffer,
): { inFlight: Promise<void>; rest(): void; response: Promise<{ status: number } | { error: string }> } {
  const target = new URL(url);
  let rest = () => {};
  let inFlight!: Promise<void>;
  const response = new Promise<{ status: number } | { error: string }>((resolve) => {
    const req = request({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: "PUT",
      headers: { "Content-Type": "application/octet-stream", "Content-Length": bytes.length, Expect: "100-continue" },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on("error", (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
    inFlight = new Promise((written) =>
      req.once("continue", () => req.write(bytes.subarray(0, bytes.length >> 1), () => written())),
    );
    req.flushHeaders();
    rest = () => {
      if (!req.destroyed) req.end(bytes.subarray(bytes.length >> 1));
    };
  });
  return { inFlight, rest: () => rest(), response };
}

/** The last line of a process's own narration (`[stackship…]`); a cut request's JSON log line may come after it. */
function lastLine(process: Spawned): string {
  return process.output.filter((line) => line.startsWith("[stackship")).at(-1) ?? "";
}

/** A pending state version of an applying run, and the state bytes its upload URL (on `apiUrl`) takes. */
async function pendingStateVersion(server: TestServer, apiUrl: string) {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const { secret } = await startApply(server, run);
  const lineage = "6a1f0e2c-shutdown";
  // Large enough to be a real upload; its bytes are checked whole afterwards.
  const bytes = stateFile(1, lineage, { blob: { value: "x".repeat(256 * 1024), type: "string" } });
  const created = expectStatus(
    await createWith(server, secret, run.workspaceId, bytes, 1, lineage, { runId: run.id }),
    201,
  ).data;
  const uploadUrl = new URL(created.attributes["hosted-state-upload-url"]!);
  return {
    f,
    run,
    bytes,
    id: created.id,
    uploadUrl: `${apiUrl}${uploadUrl.pathname}`,
    ownUploadUrl: uploadUrl.toString(),
  };
}

/** Resolves once `url` refuses new connections. */
async function refusesConnections(url: string): Promise<void> {
  await poll(`${url} to refuse new connections`, async () => {
    try {
      await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
      return undefined;
    } catch {
      return true;
    }
  });
}

testEachServer(
  shutdown,
  "SIGTERM on an API process during a state upload: no new connections, live sockets closed with 1001, the upload finishes and is committed whole",
  async (server) => {
    const { api, url } = await startApi(server, "60");
    try {
      const upload = await pendingStateVersion(server, url);
      const viewer = await signedInMember(server, upload.f.organizationName, "viewer");
      const live = await connectLive({ ...server, baseUrl: url }, upload.run.id, { cookie: viewer.session.cookie });
      await live.waitFor((message) => message.type === "hello");
      const put = halfSentPut(upload.uploadUrl, upload.bytes);
      await put.inFlight;
      // "close", not "exit": the process's output is read to its end before its last line is read.
      const exited = new Promise<number | null>((resolve) => api.child.once("close", (code) => resolve(code)));
      api.child.kill("SIGTERM");
      await api.line(
        /SIGTERM: shutting down: no new work, live sockets closed; the HTTP requests in flight get up to 60 s/,
      );
      assert.equal(await live.closed, { code: 1001, reason: "server shutting down" });
      await refusesConnections(url);
      put.rest();
      assert.equal(await put.response, { status: 204 });
      assert.is(await exited, 0, api.output.join("\n"));
      // The upload, and on a loaded machine sometimes a request of the client's still closing: at least one.
      assert.match(
        lastLine(api),
        /^\[stackship\] shut down: waited for [1-9]\d* HTTP request\(s\) in flight: all finished$/,
      );
      const version = (await server.services.stores.stateVersions.getById(upload.id))!;
      assert.is(version.sha256, hex("sha256", upload.bytes));
      assert.ok((await readStateBytes(server.services, version)).equals(upload.bytes));
    } finally {
      await api.kill();
    }
  },
);

testEachServer(
  shutdown,
  "a grace of 0 s during a state upload: the upload in flight is cut and nothing of it is stored; the same upload to another API process then completes",
  async (server) => {
    const { api, url } = await startApi(server, "0");
    try {
      const upload = await pendingStateVersion(server, url);
      const put = halfSentPut(upload.uploadUrl, upload.bytes);
      await put.inFlight;
      const { code, last } = await signalAndExit(api, "SIGTERM");
      assert.is(code, 0, api.output.join("\n"));
      put.rest();
      const cut = await put.response;
      assert.ok("error" in cut, `the cut upload answered ${JSON.stringify(cut)}`);
      assert.is(
        last,
        "[stackship] shut down: waited for 1 HTTP request(s) in flight: 1 cut off when the grace ran out",
      );
      // The cut is the shutdown's doing, not a fault: a warning, never an "unhandled error".
      assert.not.ok(
        api.output.some((line) => line.includes('"unhandled error"')),
        api.output.join("\n"),
      );
      // Absent, not half-written: still pending with no stored state.
      const version = (await server.services.stores.stateVersions.getById(upload.id))!;
      assert.is(version.status, "pending");
      assert.is(version.sha256, null);
      // Uploading again (as the CLI retries) completes it, byte for byte.
      const retried = await putUpload(upload.ownUploadUrl, upload.bytes);
      assert.is(retried.status, 204, await retried.text());
      const stored = (await server.services.stores.stateVersions.getById(upload.id))!;
      assert.ok((await readStateBytes(server.services, stored)).equals(upload.bytes));
    } finally {
      await api.kill();
    }
  },
);

shutdown.run();
