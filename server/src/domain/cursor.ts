import { createHmac, timingSafeEqual } from "node:crypto";
import { DomainError } from "./errors.ts";
import { isId } from "./ids.ts";

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
const MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Encodes a run-list position as an opaque, HMAC-protected cursor. */
export function encodeRunCursor(key: RunCursorKey, secret: Buffer): string {
  assertSecret(secret);
  if (!isCanonicalTimestamp(key.createdAt))
    throw new TypeError("encodeRunCursor: createdAt is not a toISOString() timestamp");
  if (!isId("run", key.id)) throw new TypeError("encodeRunCursor: id is not a run id");
  const payload = Buffer.from(JSON.stringify({ v: VERSION, c: key.createdAt, i: key.id }), "utf8").toString(
    "base64url",
  );
  return `${payload}.${mac(payload, secret).toString("base64url")}`;
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
  if (typeof token !== "string" || token.length === 0 || token.length > MAX_RUN_CURSOR_LENGTH) return undefined;
  const parts = token.split(".");
  if (parts.length !== 2) return undefined;
  const [payloadPart, macPart] = parts;
  const payloadBytes = decodeBase64Url(payloadPart);
  const macBytes = decodeBase64Url(macPart);
  if (payloadBytes === undefined || macBytes === undefined || macBytes.length !== MAC_BYTES) return undefined;
  // Authenticate before parsing, so nothing an attacker wrote reaches JSON.parse.
  if (!timingSafeEqual(macBytes, mac(payloadPart, secret))) return undefined;

  let payload: unknown;
  try {
    payload = JSON.parse(payloadBytes.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return undefined;
  const { v, c, i, ...rest } = payload as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || v !== VERSION) return undefined;
  if (!isCanonicalTimestamp(c) || !isId("run", i)) return undefined;
  return { createdAt: c, id: i };
}

/** Strict base64url: only the URL alphabet, no padding, and the canonical encoding of its bytes. */
function decodeBase64Url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text)) return undefined;
  const bytes = Buffer.from(text, "base64url");
  // NOTE: Buffer.from ignores stray trailing bits, so two strings can decode to the same bytes;
  // requiring the canonical form makes every accepted cursor have exactly one spelling.
  return bytes.toString("base64url") === text ? bytes : undefined;
}

function mac(payloadPart: string, secret: Buffer): Buffer {
  return createHmac("sha256", secret).update(payloadPart, "utf8").digest().subarray(0, MAC_BYTES);
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
