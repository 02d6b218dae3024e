import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { loadConfig } from "../../src/config.ts";
import { scrape, spawnStackShip } from "../support/spawned.ts";

const config = suite("runner concurrency and metrics port settings");

config(
  "the runner's concurrency defaults to this machine's cores; 0 is an API-only process; anything else is refused with what to do",
  () => {
    assert.is(loadConfig({}).runnerConcurrency, availableParallelism());
    assert.is(loadConfig({ STACKSHIP_RUNNER_CONCURRENCY: "" }).runnerConcurrency, availableParallelism());
    assert.is(loadConfig({ STACKSHIP_RUNNER_CONCURRENCY: "0" }).runnerConcurrency, 0);
    assert.is(loadConfig({ STACKSHIP_RUNNER_CONCURRENCY: "1" }).runnerConcurrency, 1);
    assert.is(loadConfig({ STACKSHIP_RUNNER_CONCURRENCY: "16" }).runnerConcurrency, 16);
    for (const bad of ["-1", "1.5", "two", "0x2"]) {
      assert.throws(
        () => loadConfig({ STACKSHIP_RUNNER_CONCURRENCY: bad }),
        (error: Error) =>
          error.message.includes(`got '${bad}'`) &&
          error.message.includes("0 = API only") &&
          error.message.includes("Unset it"),
      );
    }
  },
);

config(
  "STACKSHIP_RUNNER_METRICS_PORT: unset serves nothing, 0 is any free port, 65535 the last port, 65536 is refused",
  () => {
    assert.is(loadConfig({}).runnerMetricsPort, null);
    assert.is(loadConfig({ STACKSHIP_RUNNER_METRICS_PORT: "0" }).runnerMetricsPort, 0);
    assert.is(loadConfig({ STACKSHIP_RUNNER_METRICS_PORT: "65535" }).runnerMetricsPort, 65535);
    assert.throws(
      () => loadConfig({ STACKSHIP_RUNNER_METRICS_PORT: "65536" }),
      /STACKSHIP_RUNNER_METRICS_PORT must be a port number/,
    );
  },
);

const processes = suite("an API-only process");

processes(
  "STACKSHIP_RUNNER_CONCURRENCY=0: main says it is API only, starts no runner and serves the API and /metrics; a runner-only process with 0 refuses to start",
  async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "ss-api-only-"));
    const api = spawnStackShip("main.ts", {
      STACKSHIP_DATA_DIR: dataDir,
      STACKSHIP_HTTP_PORT: "0",
      STACKSHIP_HTTPS_PORT: "off",
      STACKSHIP_RUNNER_CONCURRENCY: "0",
      STACKSHIP_LOG_LEVEL: "warn",
    });
    try {
      const url = (await api.line(/StackShip is listening on (http:\/\/\S+)/))[1];
      assert.ok(
        api.output.some((line) =>
          line.includes("API only (STACKSHIP_RUNNER_CONCURRENCY=0): no runner in this process"),
        ),
        api.output.join("\n"),
      );
      assert.not.ok(
        api.output.some((line) => /runner \S+ started|runner is NOT started/.test(line)),
        api.output.join("\n"),
      );
      const metrics = await scrape(`${url}/metrics`);
      assert.is(metrics.value("stackship_run_queue_depth"), 0);
      assert.ok(metrics.text.includes('stackship_runs{status="pending"} 0'), metrics.text);
      const runner = spawnStackShip(
        "runner-main.ts",
        { STACKSHIP_DATA_DIR: dataDir, STACKSHIP_API_URL: url, STACKSHIP_RUNNER_CONCURRENCY: "0" },
        { quietStderr: true },
      );
      const code = await new Promise((resolve) => runner.child.once("exit", resolve));
      assert.is(code, 1);
      assert.match(runner.errors.join(""), /STACKSHIP_RUNNER_CONCURRENCY=0 means no runner.*set it to 1 or more/);
    } finally {
      await api.kill("SIGTERM");
      await rm(dataDir, { recursive: true, force: true });
    }
  },
);

config.run();
processes.run();
