import type { Knex } from "knex";
import type { Dialect } from "../dialect.ts";

// Column conventions every migration shares.

/** The width of every id column. */
export const ID = 32;
// Timestamps are written by the repositories from an injected clock, never by DB defaults.
// PostgreSQL keeps them as timestamptz(3). SQLite has no timestamp type, so they are stored as
// the 24-character toISOString() text, which sorts chronologically; a GLOB CHECK keeps any
// other spelling (which would sort wrongly) out.
export const ISO_GLOB = "[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9].[0-9][0-9][0-9]Z";

/** Dialect-aware column builders. */
export interface Columns {
  timestamp(column: string, options?: { nullable?: boolean }): void;
}

/** Column builders for one table. */
export function columnsFor(dialect: Dialect, table: string, t: Knex.CreateTableBuilder): Columns {
  return {
    timestamp(column, { nullable = false } = {}) {
      const builder =
        dialect === "postgres" ? t.timestamp(column, { useTz: true, precision: 3 }) : t.string(column, 24);
      if (!nullable) builder.notNullable();
      if (dialect === "sqlite") t.check(`?? GLOB '${ISO_GLOB}'`, [column], `${table}_${column}_iso`);
    },
  };
}

/** The primary key. */
export function idColumn(t: Knex.CreateTableBuilder): void {
  // NOTE: SQLite lets a non-INTEGER primary key hold NULL unless it is declared NOT NULL.
  t.string("id", ID).notNullable().primary();
}

/** A foreign key to `table.id`. */
export function reference(t: Knex.CreateTableBuilder, column: string, table: string, { nullable = false } = {}): void {
  const builder = t.string(column, ID).references("id").inTable(table);
  if (!nullable) builder.notNullable();
}
