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
  const pool = new pg.Pool({ connectionString: db.url, max });
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
  options: { concurrency: number; execute: (runJobId: string) => Promise<void>; log: (message: string, meta?: unknown) => void },
): Promise<{ runner: Runner; pool: pg.Pool }> {
  const runPhase = async (payload: unknown) => {
    const runJobId = (payload as { run_job_id?: unknown })?.run_job_id;
    if (typeof runJobId === "string") await options.execute(runJobId);
  };
  return startGraphileTasks(db, { concurrency: options.concurrency, log: options.log, tasks: { [RUN_PHASE_TASK]: runPhase } });
}

/** Starts a graphile-worker runner for other tasks than run phases (it takes only the jobs of `tasks`). */
export async function startGraphileTasks(
  db: Database,
  options: { concurrency: number; tasks: Record<string, (payload: unknown) => Promise<void>>; log: (message: string, meta?: unknown) => void },
): Promise<{ runner: Runner; pool: pg.Pool }> {
  const pool = poolFor(db, options.concurrency + 2);
  const runner = await run({
    pgPool: pool,
    concurrency: options.concurrency,
    noHandleSignals: true,
    pollInterval: 2_000,
    logger: graphileLogger(options.log),
    taskList: Object.fromEntries(Object.entries(options.tasks).map(([name, fn]) => [name, (async (payload) => fn(payload)) as Task])),
  });
  return { runner, pool };
}
