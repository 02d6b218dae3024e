import type { DbBoolean } from "./rows.ts";
import { booleanFromRow, isoForWrite, isoFromRow, numberFromRow, optionalIsoFromRow } from "./values.ts";

/**
 * Row → record mappers declared as one line of column names instead of a hand-written object
 * literal per table. A spec is the record's fields in order, separated by spaces; each is
 *
 *   column            the record field camelCase(column) takes the stored value as it is
 *   column:kind       ... read through a reader (below)
 *   field=column:kind a field whose name is not camelCase(column)
 *
 * Readers: `number`, `number?` (null stays null), `boolean` (a column a row lacks is false), `iso`, `iso?` (values.ts), `json`,
 * `json?` (JSON text parsed, typed as the record's field, as a cast would), `as` (the stored text
 * is the record's narrower type, e.g. a status the CHECK constraint bounds, as a cast would).
 *
 * The spec is checked against both types at compile time: every record field named once, every
 * column a column of the row, every value assignable to its field (the error names the offending
 * fields). At run time only the named columns are read, so a column the record does not declare
 * never reaches it.
 *
 * The mapper also writes: `mapper.write(record)` is the row of the named columns, each value the
 * way the store writes it (timestamps, given as Dates or ISO text, in toISOString() form; JSON as
 * text). Columns the spec does not name (defaults, flags) are the caller's to add. Where a field's
 * value would not fit its column (a nullable field into a non-null column, say), `write` does not
 * compile and names the fields.
 */
export function rowMapper<Row extends object, Rec extends object>() {
  return <const S extends string>(spec: S & SpecCheck<Row, Rec, S>): RowMapper<Row, Rec, S> => {
    const fields = spec
      .split(" ")
      .filter((word) => word !== "")
      .map((word) => {
        const parsed = /^(?:(\w+)=)?(\w+)(?::([\w?]+))?$/.exec(word);
        if (!parsed) throw new TypeError(`bad column spec ${JSON.stringify(word)}`);
        const [, field, column = "", kind] = parsed;
        const read = kind === undefined ? same : readers[kind as keyof typeof readers];
        if (read === undefined) throw new TypeError(`unknown column reader ${JSON.stringify(kind)}`);
        const write = kind === undefined ? same : writers[kind as keyof typeof writers];
        return { field: field ?? camel(column), column, read: read as (value: unknown) => unknown, write };
      });
    const mapper = (row: Row): Rec => {
      const stored = row as Record<string, unknown>;
      const record: Record<string, unknown> = {};
      for (const { field, column, read } of fields) record[field] = read(stored[column]);
      return record as Rec;
    };
    const write = (record: Writable<Rec, S>): Written<Row, S> => {
      const given = record as Record<string, unknown>;
      const row: Record<string, unknown> = {};
      for (const { field, column, write } of fields) row[column] = write(given[field]);
      return row as Written<Row, S>;
    };
    return Object.assign(mapper, { write }) as RowMapper<Row, Rec, S>;
  };
}

/** A row → record mapper whose `write` turns a record back into the row's named columns. */
export type RowMapper<Row, Rec, S extends string> = ((row: Row) => Rec) & {
  write: [WriteMisfits<Row, Rec, S>] extends [never]
    ? (record: Writable<Rec, S>) => Written<Row, S>
    : { fieldsThatDoNotFitTheirColumns: WriteMisfits<Row, Rec, S> };
};

const same = (value: unknown): unknown => value;

const readers = {
  number: (value: number | string | bigint): number => numberFromRow(value),
  "number?": (value: number | string | bigint | null): number | null => (value === null ? null : numberFromRow(value)),
  boolean: (value: DbBoolean | undefined): boolean => value !== undefined && booleanFromRow(value),
  iso: isoFromRow,
  "iso?": optionalIsoFromRow,
  json: (value: string): unknown => JSON.parse(value),
  "json?": (value: string | null): unknown => (value === null ? null : JSON.parse(value)),
  as: same,
};

/** How each reader's field is written back. */
const writers: Record<keyof typeof readers, (value: unknown) => unknown> = {
  number: same,
  "number?": same,
  boolean: same,
  iso: (value) => isoForWrite(value as Date | string),
  "iso?": (value) => (value === null ? null : isoForWrite(value as Date | string)),
  json: (value) => JSON.stringify(value),
  "json?": (value) => (value === null ? null : JSON.stringify(value)),
  as: same,
};

function camel(column: string): string {
  return column.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

type Readers = typeof readers;
type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
type Words<S extends string, Acc = never> = S extends `${infer H} ${infer T}` ? Words<T, Acc | H> : Acc | S;
type Unnamed<W extends string> = W extends `${string}=${infer C}` ? C : W;
type ColumnOf<W extends string> = Unnamed<W> extends `${infer C}:${string}` ? C : Unnamed<W>;
type KindOf<W extends string> = Unnamed<W> extends `${string}:${infer K}` ? K : "";
type FieldOf<W extends string> = W extends `${infer F}=${string}` ? F : Camel<ColumnOf<W>>;
type FieldType<Rec, F> = F extends keyof Rec ? Rec[F] : never;

/** The value a spec word gives its field `F` of type T, or never when the word does not fit. */
type Read<Row, W extends string, T> =
  ColumnOf<W> extends keyof Row
    ? KindOf<W> extends ""
      ? Row[ColumnOf<W>]
      : KindOf<W> extends "json"
        ? [Row[ColumnOf<W>]] extends [string]
          ? T
          : never
        : KindOf<W> extends "json?"
          ? [Row[ColumnOf<W>]] extends [string | null]
            ? T
            : never
          : KindOf<W> extends "as"
            ? [T] extends [Row[ColumnOf<W>]]
              ? T
              : never
            : KindOf<W> extends keyof Readers
              ? [Row[ColumnOf<W>]] extends [Parameters<Readers[KindOf<W>]>[0]]
                ? ReturnType<Readers[KindOf<W>]>
                : never
              : never
    : never;

/** What `write` gives the column of word W for the field's value of type T. */
type WriteOf<W extends string, T> =
  KindOf<W> extends "" | "as" | "number" | "number?" | "boolean"
    ? T
    : KindOf<W> extends "iso" | "json"
      ? string
      : null extends T
        ? string | null
        : string;
type WriteMisfits<Row, Rec, S extends string> = {
  [W in Words<S>]: ColumnOf<W> extends keyof Row
    ? [WriteOf<W, FieldType<Rec, FieldOf<W>>>] extends [Row[ColumnOf<W>]]
      ? never
      : FieldOf<W>
    : FieldOf<W>;
}[Words<S>];
/** The fields a spec reads as timestamps. */
type IsoFields<W extends string> = W extends string ? (KindOf<W> extends "iso" | "iso?" ? FieldOf<W> : never) : never;
/** What `write` takes: the record, its timestamps as Dates or ISO text. */
type Writable<Rec, S extends string> = { [K in keyof Rec]: K extends IsoFields<Words<S>> ? Rec[K] | Date : Rec[K] };
/** The row's columns a spec names. */
type Written<Row, S extends string> = Pick<Row, ColumnsOf<Words<S>> & keyof Row>;
type ColumnsOf<W extends string> = W extends string ? ColumnOf<W> : never;

type Built<Row, Rec, S extends string> = { [W in Words<S> as FieldOf<W>]: Read<Row, W, FieldType<Rec, FieldOf<W>>> };
type Misfits<B, Rec> = {
  [K in keyof B]: [B[K]] extends [never] ? K : K extends keyof Rec ? ([B[K]] extends [Rec[K]] ? never : K) : K;
}[keyof B];
type SpecCheck<Row, Rec, S extends string> = [
  Exclude<keyof Rec, keyof Built<Row, Rec, S>> | Misfits<Built<Row, Rec, S>, Rec>,
] extends [never]
  ? unknown
  : { missingFields: Exclude<keyof Rec, keyof Built<Row, Rec, S>>; misfitFields: Misfits<Built<Row, Rec, S>, Rec> };
