import type { Dialect, Executor } from "./dialect.ts";

/**
 * What every repository holds: the executor it queries through (the database, or the transaction
 * inTransaction opened) and the dialect it writes its SQL for.
 */
export abstract class Repository {
  constructor(
    protected readonly db: Executor,
    protected readonly dialect: Dialect,
  ) {}
}
