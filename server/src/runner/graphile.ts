import { Logger, run, runMigrations, type Runner, type Task } from "graphile-worker";
import pg from "pg";
import type { Database } from "../store/index.ts";

/** The graphile-worker task every run phase is dispatched as; its payload names the run_jobs row. */
export const RUN_PHASE_TASK = "stackship_run_phase";

/** graphile-worker's own logging goes through pino at debug level (its info lines are per job). */
function graphileLogger(log: (message: string, meta?: unknown) => void): Logger {
  return new Logger(() => (level, message, meta) => {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-comparison -- graphile's LogLevel values are these strings
    if (level === "error" || level === "warning") log(`graphile-worker ${level}: ${message}`, meta);
  });
}

/** A pg pool on the same database the Knex instance talks to. */
export function poolFor(db: Database, max = 4): pg.Pool {
  // A connection that cannot be had within 10 s is an error (graphile-worker then retries, or the
  // supervision below starts it again), never a wait without end while the database is away.
  const pool = new pg.Pool({ connectionString: db.url, max, connectionTimeoutMillis: 10_000 });
  // An idle client can be cut by the server; without handlers that would crash the process.
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  return pool;
}

/**
 * Installs or upgrades graphile-worker's schema (`graphile_worker`) next to StackShip's tables.
 * PostgreSQL only; idempotent.
 */
export async function migrateGraphileWorker(db: Database): Promise<void> {
  if (db.dialect !== "postgres") return;
  const pool = poolFor(db, 1);
  try {
    await runMigrations({ pgPool: pool, logger: graphileLogger(() => undefined) });
  } finally {
    await pool.end();
  }
}

/** Starts a graphile-worker runner that hands each run-phase job to `execute`. */
export function startGraphileRunner(
  db: Database,
  options: {
    concurrency: number;
    execute: (runJobId: string) => Promise<void>;
    log: (message: string, meta?: unknown) => void;
  },
): Promise<{ runner: SupervisedRunner; pool: pg.Pool }> {
  const runPhase = async (payload: unknown) => {
    const runJobId = (payload as { run_job_id?: unknown })?.run_job_id;
    if (typeof runJobId === "string") await options.execute(runJobId);
  };
  return startGraphileTasks(db, {
    concurrency: options.concurrency,
    log: options.log,
    tasks: { [RUN_PHASE_TASK]: runPhase },
  });
}

/** A graphile-worker runner that is started again when it dies (its database went away), until stopped. */
export interface SupervisedRunner {
  /** Stops fetching jobs and waits for the ones handed over (no restart afterwards). */
  stop(): Promise<void>;
}

/** The wait before starting a dead runner again: 1 s, doubling, at most 30 s. */
export function restartDelayMs(attempt: number): number {
  return Math.min(30_000, 1_000 * 2 ** Math.max(0, attempt - 1));
}

/**
 * Starts a graphile-worker runner for `tasks` (it takes only their jobs), supervised: graphile's
 * `runner.promise` rejects when its pool cannot reach PostgreSQL (a restart, a failover), which
 * left unobserved ended the process, or left the worker dead with new runs pending. Here that is
 * logged and the runner is started again with backoff until it runs or `stop()` is called.
 */
export async function startGraphileTasks(
  db: Database,
  options: {
    concurrency: number;
    tasks: Record<string, (payload: unknown) => Promise<void>>;
    log: (message: string, meta?: unknown) => void;
  },
): Promise<{ runner: SupervisedRunner; pool: pg.Pool }> {
  const pool = poolFor(db, options.concurrency + 2);
  const taskList = Object.fromEntries(
    Object.entries(options.tasks).map(([name, fn]): [string, Task] => [name, async (payload) => fn(payload)]),
  );
  const start = () =>
    run({
      pgPool: pool,
      concurrency: options.concurrency,
      noHandleSignals: true,
      pollInterval: 2_000,
      logger: graphileLogger(options.log),
      taskList,
      // Without batching graphile-worker leaves the promise of completing or failing a job floating:
      // when PostgreSQL is unreachable (a restart) its rejection is unhandled and ends the process.
      // Batched (delay 0: within the same tick) it retries and, failing, shuts the pool down, which
      // rejects runner.promise — and the supervision below starts the runner again.
      preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    });
  let stopped = false;
  let current: Runner | null = await start();
  let restarting: Promise<void> | null = null;
  /** Ends the current backoff wait at once (stop() must not wait for it). */
  let wake: () => void = () => undefined;

  const supervise = (runner: Runner): void => {
    runner.promise.then(
      () => undefined,
      (error: unknown) => {
        if (stopped || current !== runner) return;
        current = null;
        options.log(
          `graphile-worker stopped (${(error as Error)?.message ?? String(error)}); starting it again`,
          error,
        );
        restarting = restart();
      },
    );
  };

  const restart = async (): Promise<void> => {
    for (let attempt = 1; !stopped; attempt++) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, restartDelayMs(attempt));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (stopped) return;
      try {
        const runner = await start();
        if (stopped) {
          await runner.stop().catch(() => undefined);
          return;
        }
        current = runner;
        supervise(runner);
        options.log("graphile-worker running again");
        return;
      } catch (error) {
        options.log(
          `graphile-worker could not start again (attempt ${attempt}): ${(error as Error)?.message ?? String(error)}`,
          error,
        );
      }
    }
  };

  supervise(current);
  return {
    pool,
    runner: {
      async stop() {
        stopped = true;
        wake();
        await restarting;
        const runner = current;
        current = null;
        if (runner) await runner.stop().catch((error: unknown) => options.log("graphile-worker stop failed", error));
      },
    },
  };
}
