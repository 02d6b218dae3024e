import { DomainError, type ErrorCode } from "./errors.ts";
import { isId } from "./ids.ts";
import { openSignedJson, signJson } from "./signed-json.ts";

/** The position a run list page continues after: the last run's creation time and id. */
export interface RunCursorKey {
  createdAt: string;
  id: string;
}

/** The longest list cursor the server will look at. */
export const MAX_CURSOR_LENGTH = 512;
/** The shortest HMAC secret the codec accepts. */
export const MIN_CURSOR_SECRET_BYTES = 16;

const VERSION = 1;
/** Run cursors were the first; their MAC covers the payload alone. */
const MAC_LABEL = "";
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Encodes a run-list position as an opaque, HMAC-protected cursor. */
export function encodeRunCursor(key: RunCursorKey, secret: Buffer): string {
  assertSecret(secret);
  if (!isCanonicalTimestamp(key.createdAt))
    throw new TypeError("encodeRunCursor: createdAt is not a toISOString() timestamp");
  if (!isId("run", key.id)) throw new TypeError("encodeRunCursor: id is not a run id");
  return signJson({ v: VERSION, c: key.createdAt, i: key.id }, secret, MAC_LABEL);
}

/**
 * Decodes a cursor made by encodeRunCursor() with the same secret.
 * Any malformed, tampered, foreign or outdated cursor throws RUN_LIST_CURSOR_INVALID.
 */
export function decodeRunCursor(token: string, secret: Buffer): RunCursorKey {
  assertSecret(secret);
  return openListCursor(token, secret, RUN_CURSOR, ({ v, c, i, ...rest }) =>
    Object.keys(rest).length === 0 && v === VERSION && isCanonicalTimestamp(c) && isId("run", i)
      ? { createdAt: c, id: i }
      : undefined,
  );
}

/** What tells one list's cursors from another's: the MAC label, and the error naming the list. */
export interface ListCursor {
  label: string;
  code: ErrorCode;
  /** The list, as the error names it ("the run list"). */
  list: string;
}

const RUN_CURSOR: ListCursor = { label: MAC_LABEL, code: "RUN_LIST_CURSOR_INVALID", list: "the run list" };

/**
 * The position in a cursor the server signed for `cursor`'s list: `read` gets the signed payload
 * and returns the position, or undefined when the payload is not one of this list's (another
 * organization's, another version). A cursor that is malformed, tampered, longer than
 * MAX_CURSOR_LENGTH or signed for another list, and one `read` refuses, throws `cursor.code`
 * (400, source `cursor`), telling the client to start again from the first page.
 */
export function openListCursor<T>(
  token: unknown,
  secret: Buffer,
  cursor: ListCursor,
  read: (payload: Record<string, unknown>) => T | undefined,
): T {
  const payload = openSignedJson(token, secret, cursor.label, MAX_CURSOR_LENGTH);
  const position = payload === undefined ? undefined : read(payload);
  if (position === undefined) {
    throw new DomainError(
      cursor.code,
      `The cursor is not one this server issued for ${cursor.list}. Start again from the first page.`,
      { source: { parameter: "cursor" } },
    );
  }
  return position;
}

function isCanonicalTimestamp(value: unknown): value is string {
  if (typeof value !== "string" || !ISO_TIMESTAMP.test(value)) return false;
  const date = new Date(value);
  return !Number.isNaN(date.getTime()) && date.toISOString() === value;
}

function assertSecret(secret: Buffer): void {
  if (!Buffer.isBuffer(secret) || secret.length < MIN_CURSOR_SECRET_BYTES) {
    throw new TypeError(`cursor secret must be a Buffer of at least ${MIN_CURSOR_SECRET_BYTES} bytes`);
  }
}
