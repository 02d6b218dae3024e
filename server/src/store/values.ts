import type { DbBoolean, DbTimestamp } from "./rows.ts";

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A caller-supplied time as the toISOString() text every repository writes. */
export function isoForWrite(value: Date | string): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError("invalid Date");
    return value.toISOString();
  }
  // Anything but the exact toISOString() form would sort wrongly as SQLite text.
  if (!ISO_TIMESTAMP.test(value) || new Date(value).toISOString() !== value) {
    throw new TypeError(`timestamp must be in toISOString() form, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** A timestamp read from either driver as toISOString() text. */
export function isoFromRow(value: DbTimestamp): string {
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

/** A nullable timestamp read from either driver. */
export function optionalIsoFromRow(value: DbTimestamp | null): string | null {
  return value === null ? null : isoFromRow(value);
}

/** A boolean read from either driver. */
export function booleanFromRow(value: DbBoolean): boolean {
  return value === true || value === 1;
}

/** A count(*) or bigint read from either driver (pg returns strings). */
export function numberFromRow(value: number | string | bigint): number {
  const result = Number(value);
  if (!Number.isSafeInteger(result)) throw new TypeError(`not a safe integer: ${String(value)}`);
  return result;
}
