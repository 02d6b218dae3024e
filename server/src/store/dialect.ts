import type { Knex } from "knex";

/** The databases StackShip runs on. */
export type Dialect = "sqlite" | "postgres";

/** What a repository runs its queries on: the database or an open transaction. */
export type Executor = Knex | Knex.Transaction;

/** The dialect a Knex instance (or transaction) talks to. */
export function dialectOf(executor: Knex | Knex.Transaction): Dialect {
  const client: unknown = (executor.client as { config?: { client?: unknown } }).config?.client;
  if (client === "better-sqlite3") return "sqlite";
  if (client === "pg") return "postgres";
  throw new Error(`unsupported knex client ${String(client)}`);
}
