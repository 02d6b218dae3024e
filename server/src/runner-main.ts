import { describeArtifactStore } from "./artifacts/backends/index.ts";
import { loadConfig } from "./config.ts";
import { serveRunnerMetrics } from "./metrics/serve.ts";
import { RunnerEngine } from "./runner/engine.ts";
import { describeShutdown } from "./runner/runner-reports.ts";
import { sandboxPrerequisites } from "./runner/sandbox.ts";
import { createServices, makeDataPrivate } from "./server.ts";

function say(message: string) {
  process.stdout.write(`[stackship-runner] ${message}\n`);
}

/**
 * A runner-only process (`npm run runner`): executes plan and apply phases from the shared
 * database, with no HTTP listener of its own. Sandboxes reach the API at STACKSHIP_API_URL.
 */
async function main() {
  const config = loadConfig();
  makeDataPrivate(config, say);
  if (config.runnerConcurrency === 0) {
    throw new Error(
      "STACKSHIP_RUNNER_CONCURRENCY=0 means no runner, which leaves a runner-only process nothing to do: set it to 1 or more, or unset it to use this machine's cores",
    );
  }
  const apiUrl = process.env.STACKSHIP_API_URL;
  if (!apiUrl)
    throw new Error(
      "set STACKSHIP_API_URL to the StackShip API this runner's sandboxes talk to (e.g. http://127.0.0.1:8080)",
    );
  const api = new URL(apiUrl);
  if (api.protocol !== "http:") throw new Error("STACKSHIP_API_URL must be an http:// URL reachable from this host");
  const missing = sandboxPrerequisites();
  if (missing.length > 0) {
    throw new Error(
      `this host cannot run sandboxes yet: ${missing.map(({ problem, fix }) => `${problem}; run: ${fix}`).join("; ")}`,
    );
  }
  const { services, close } = await createServices(config, {}, (m) => say(`migrations: ${m}`));
  const runner = new RunnerEngine(
    {
      services,
      api: { host: api.hostname, port: Number(api.port || 80) },
      phaseTimeoutMs: config.phaseTimeoutMs,
      sandboxLimits: config.sandboxLimits,
    },
    {
      concurrency: config.runnerConcurrency,
      ...(process.env.STACKSHIP_RUNNER_HEARTBEAT_MS
        ? { heartbeatIntervalMs: Number(process.env.STACKSHIP_RUNNER_HEARTBEAT_MS) }
        : {}),
      ...(process.env.STACKSHIP_RUNNER_STALE_AFTER_MS
        ? { staleAfterMs: Number(process.env.STACKSHIP_RUNNER_STALE_AFTER_MS) }
        : {}),
    },
  );
  await runner.start();
  say(
    `runner ${runner.runnerId} started: concurrency ${config.runnerConcurrency}${process.env.STACKSHIP_RUNNER_CONCURRENCY ? "" : " (this machine's cores; set STACKSHIP_RUNNER_CONCURRENCY to change)"}, API ${apiUrl}, database ${config.databaseUrl.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@")}, artifacts ${describeArtifactStore(config.artifactStore)}`,
  );
  // No API here, so the runner serves its own scrape endpoint when asked to.
  const metrics =
    config.runnerMetricsPort === null ? null : await serveRunnerMetrics(config.host, config.runnerMetricsPort);
  say(
    metrics
      ? `metrics: http://${config.host}:${metrics.port}/metrics`
      : "metrics: not served (set STACKSHIP_RUNNER_METRICS_PORT to serve Prometheus metrics, 0 for any free port)",
  );
  // Graceful: nothing new is claimed; the plans and applies in flight get STACKSHIP_SHUTDOWN_GRACE_SECONDS to end.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping)
      return say(
        `${signal}: already shutting down (waiting at most ${config.shutdownGraceMs / 1000} s for the work in flight)`,
      );
    stopping = true;
    say(
      `${signal}: shutting down: claiming no new work; the phases in flight get up to ${config.shutdownGraceMs / 1000} s (STACKSHIP_SHUTDOWN_GRACE_SECONDS) to end`,
    );
    const report = await runner.shutdown(config.shutdownGraceMs, signal);
    metrics?.server.close();
    await close();
    say(`shut down: ${describeShutdown(report)}`);
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error) => {
  process.stderr.write(
    `[stackship-runner] failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
