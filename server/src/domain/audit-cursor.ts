import { createHmac, timingSafeEqual } from "node:crypto";
import { DomainError } from "./errors.ts";

/** Which audit list a cursor continues. */
export type AuditCursorKind = "events" | "checkpoints";

/** Where an audit list page continues: the chain and the next position (event sequence or checkpoint tree size). */
export interface AuditCursorKey {
  kind: AuditCursorKind;
  chain: string;
  position: number;
}

const MAX_LENGTH = 512;
const MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/u;

function mac(payload: string, secret: Buffer): Buffer {
  return createHmac("sha256", secret).update(`stackship/audit-cursor/v1:${payload}`).digest().subarray(0, MAC_BYTES);
}

/** Encodes an audit list position as an opaque, HMAC-protected cursor. */
export function encodeAuditCursor(key: AuditCursorKey, secret: Buffer): string {
  if (!Number.isSafeInteger(key.position) || key.position < 0)
    throw new TypeError("encodeAuditCursor: position is a whole number");
  const payload = Buffer.from(JSON.stringify({ v: 1, k: key.kind, c: key.chain, p: key.position }), "utf8").toString(
    "base64url",
  );
  return `${payload}.${mac(payload, secret).toString("base64url")}`;
}

/**
 * Decodes a cursor made by encodeAuditCursor() for this list and chain. Anything else (malformed,
 * tampered, another list's or another organization's) throws AUDIT_CURSOR_INVALID.
 */
export function decodeAuditCursor(
  token: string,
  secret: Buffer,
  expected: { kind: AuditCursorKind; chain: string },
): number {
  const position = tryDecode(token, secret, expected);
  if (position === undefined) {
    throw new DomainError(
      "AUDIT_CURSOR_INVALID",
      "The cursor is not one this server issued for this audit list. Start again from the first page.",
      {
        source: { parameter: "cursor" },
      },
    );
  }
  return position;
}

function tryDecode(
  token: string,
  secret: Buffer,
  expected: { kind: AuditCursorKind; chain: string },
): number | undefined {
  if (token.length === 0 || token.length > MAX_LENGTH) return undefined;
  const parts = token.split(".");
  if (parts.length !== 2 || !BASE64URL.test(parts[0]) || !BASE64URL.test(parts[1])) return undefined;
  const macBytes = Buffer.from(parts[1], "base64url");
  if (macBytes.length !== MAC_BYTES || !timingSafeEqual(macBytes, mac(parts[0], secret))) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[0], "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof payload !== "object" || payload === null) return undefined;
  const { v, k, c, p } = payload as Record<string, unknown>;
  if (
    v !== 1 ||
    k !== expected.kind ||
    c !== expected.chain ||
    typeof p !== "number" ||
    !Number.isSafeInteger(p) ||
    p < 0
  )
    return undefined;
  return p;
}
