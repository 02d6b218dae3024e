import { openListCursor } from "./cursor.ts";
import { signJson } from "./signed-json.ts";

/** Which audit list a cursor continues. */
export type AuditCursorKind = "events" | "checkpoints";

/** Where an audit list page continues: the chain and the next position (event sequence or checkpoint tree size). */
export interface AuditCursorKey {
  kind: AuditCursorKind;
  chain: string;
  position: number;
}

const MAC_LABEL = "stackship/audit-cursor/v1:";

/** Encodes an audit list position as an opaque, HMAC-protected cursor. */
export function encodeAuditCursor(key: AuditCursorKey, secret: Buffer): string {
  if (!Number.isSafeInteger(key.position) || key.position < 0)
    throw new TypeError("encodeAuditCursor: position is a whole number");
  return signJson({ v: 1, k: key.kind, c: key.chain, p: key.position }, secret, MAC_LABEL);
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
  return openListCursor(
    token,
    secret,
    { label: MAC_LABEL, code: "AUDIT_CURSOR_INVALID", list: "this audit list" },
    ({ v, k, c, p }) =>
      v === 1 &&
      k === expected.kind &&
      c === expected.chain &&
      typeof p === "number" &&
      Number.isSafeInteger(p) &&
      p >= 0
        ? p
        : undefined,
  );
}
