import { DomainError } from "./errors.ts";
import { isId } from "./ids.ts";
import { openSignedJson, signJson } from "./signed-json.ts";

/** The position a run list page continues after: the last run's creation time and id. */
export interface RunCursorKey {
  createdAt: string;
  id: string;
}

/** The longest cursor decodeRunCursor() will look at. */
export const MAX_RUN_CURSOR_LENGTH = 512;
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
  const key = tryDecode(token, secret);
  if (key === undefined) {
    throw new DomainError(
      "RUN_LIST_CURSOR_INVALID",
      "The cursor is not one this server issued for the run list. Start again from the first page.",
      {
        source: { parameter: "cursor" },
      },
    );
  }
  return key;
}

function tryDecode(token: unknown, secret: Buffer): RunCursorKey | undefined {
  const payload = openSignedJson(token, secret, MAC_LABEL, MAX_RUN_CURSOR_LENGTH);
  if (payload === undefined) return undefined;
  const { v, c, i, ...rest } = payload;
  if (Object.keys(rest).length > 0 || v !== VERSION) return undefined;
  if (!isCanonicalTimestamp(c) || !isId("run", i)) return undefined;
  return { createdAt: c, id: i };
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
