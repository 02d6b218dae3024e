/**
 * What the run benchmarks share: the configuration they plan, the local `tofu` baseline (init,
 * plan -out, show -json in a fresh directory), and a StackShip on the embedded default with its
 * in-process runner and real bubblewrap sandboxes, with workspaces holding that configuration.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "../../server/src/config.ts";
import { RunnerEngine, type RunnerOptions } from "../../server/src/runner/engine.ts";
import { isTerminalRunStatus } from "../../server/src/domain/run.ts";
import { openRunChangeFeed } from "../../server/src/store/run-events.ts";
import type { AttemptTimings } from "../../server/src/runner/execution.ts";
import type { V1 } from "../../server/test/support/documents.ts";
import {
  api,
  configurationTarball,
  createBenchOrganization,
  createBenchWorkspace,
  startBenchServer,
  uploadConfiguration,
} from "./support.ts";

export const CONFIG =
  'resource "terraform_data" "a" {\n  input = "one"\n}\nresource "terraform_data" "b" {\n  input = terraform_data.a.output\n}\n';
const tofu = join(REPO_ROOT, ".tools/bin/tofu");
const run = promisify(execFile);

/** The machine's load averages, printed with every figure (the machine may be shared). */
export function load(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

/** One local `tofu init` + `plan -out` + `show -json` of CONFIG in a fresh directory; its wall-clock ms. */
export async function localPlan(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "ss-bench-local-"));
  try {
    writeFileSync(join(dir, "main.tf"), CONFIG);
    writeFileSync(
      join(dir, "cli.tfrc"),
      `provider_installation {\n  filesystem_mirror {\n    path = "${join(REPO_ROOT, ".tools/providers")}"\n  }\n}\n`,
    );
    const options = {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: dir,
        TF_CLI_CONFIG_FILE: join(dir, "cli.tfrc"),
        TF_IN_AUTOMATION: "1",
        CHECKPOINT_DISABLE: "1",
      },
      maxBuffer: 64 * 1024 * 1024,
    };
    const started = process.hrtime.bigint();
    await run(tofu, ["init", "-input=false", "-no-color"], options);
    await run(tofu, ["plan", "-input=false", "-no-color", "-out=plan.tfplan"], options);
    await run(tofu, ["show", "-json", "plan.tfplan"], options);
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** N local plans (`localPlan`), `concurrency` at a time; wall-clock ms. */
export async function localDrain(n: number, concurrency: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        await localPlan();
      }
    }),
  );
  return performance.now() - started;
}

/** The benchmark configuration as the .tar.gz a configuration version uploads. */
export function configTarball() {
  return configurationTarball(CONFIG);
}

/** A StackShip with its runner, an organization and an admin token. */
export async function startBenchStackShip(runnerOptions: Partial<RunnerOptions>) {
  const { dataDir, bootstrapToken, stackship, http, port, base } = await startBenchServer("ss-bench-runs-");
  const timings = new Map<string, AttemptTimings>();
  const runner = new RunnerEngine(
    {
      services: stackship.services,
      api: { host: "127.0.0.1", port },
      phaseTimeoutMs: 300_000,
      onAttemptTimings: (t) => timings.set(t.runId, t),
    },
    // The runner's default poll interval: on SQLite a run queued in this process wakes it at once,
    // and a 10 ms poll only loads the process that runs the plans.
    { warmSandboxes: process.env.BENCH_WARM !== "0", ...runnerOptions },
  );
  await runner.start();
  const token = await createBenchOrganization(base, bootstrapToken);
  const tarball = configTarball();
  const feed = openRunChangeFeed(stackship.services.db);
  return {
    stackship,
    runner,
    base,
    token,
    timings,
    /** A workspace whose current configuration version is CONFIG. */
    async workspace(name: string, attributes: Record<string, unknown> = {}): Promise<string> {
      const workspace = await createBenchWorkspace(base, token, name, attributes);
      await uploadConfiguration(base, token, workspace.id, tarball);
      return workspace.id;
    },
    /** Queues a speculative run on the workspace's current configuration. */
    async speculative(workspaceId: string): Promise<string> {
      return (
        await api<V1["RunDocument"]>(base, token, "POST", `/v1/workspaces/${workspaceId}/runs`, {
          data: { type: "runs", attributes: { kind: "speculative" } },
        })
      ).data.id;
    },
    /**
     * Listens (from now on) to the run change feed: `of(runId)` resolves once that run is terminal.
     * Call it before creating the run, so its notices cannot be missed.
     */
    runEnded(): { of(runId: string): Promise<void> } {
      const ended = new Set<string>();
      const waiting = new Map<string, () => void>();
      const subscribed = feed.subscribe({
        notice: (notice) => {
          if (notice.kind !== "run" || !isTerminalRunStatus(notice.status)) return;
          ended.add(notice.runId);
          waiting.get(notice.runId)?.();
        },
        resync: () => undefined,
      });
      return {
        async of(runId: string): Promise<void> {
          const unsubscribe = await subscribed;
          try {
            if (!ended.has(runId)) await new Promise<void>((resolve) => waiting.set(runId, resolve));
          } finally {
            unsubscribe();
          }
        },
      };
    },
    /** Job queued → first attempt started, ms. */
    async queueToStart(runId: string): Promise<number> {
      const [job] = await stackship.services.stores.jobs.listByRun(runId);
      const [attempt] = await stackship.services.stores.attempts.listByRun(runId);
      return new Date(attempt.startedAt).getTime() - new Date(job.createdAt).getTime();
    },
    /**
     * Resolves once every run's plan finished (throws on an errored one). Runs finish roughly in
     * queue order: only the oldest unfinished one is polled (through the store, not HTTP), so the
     * polling does not load the process that runs the runner.
     */
    async allPlanned(runs: readonly string[]): Promise<void> {
      for (let next = 0; next < runs.length;) {
        const run = await stackship.services.stores.runs.getById(runs[next]);
        if (run?.status === "planned_and_finished") next++;
        else if (run?.status === "errored") throw new Error(`run ${runs[next]} errored`);
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close(): Promise<void> {
      await runner.stop({ interrupt: true });
      await feed.close();
      http.close();
      await stackship.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
