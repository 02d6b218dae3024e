import type { Knex } from "knex";
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

  /** Runs `fn` in the caller's transaction when the repository was given one, else in a new one (for writes that span tables). */
  protected atomically<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    const executor = this.db as Knex.Transaction;
    if (executor.isTransaction === true) return fn(executor);
    return (this.db as Knex).transaction(fn);
  }
}
