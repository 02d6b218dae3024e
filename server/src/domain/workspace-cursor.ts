import { createHmac, timingSafeEqual } from "node:crypto";
import { DomainError } from "./errors.ts";

/** Where a workspace list page continues: after this name, in this organization. */
export interface WorkspaceCursorKey {
  organizationId: string;
  name: string;
}

const MAX_LENGTH = 512;
const MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/u;

function mac(payload: string, secret: Buffer): Buffer {
  return createHmac("sha256", secret)
    .update(`stackship/workspace-cursor/v1:${payload}`)
    .digest()
    .subarray(0, MAC_BYTES);
}

/** Encodes a workspace list position as an opaque, HMAC-protected cursor. */
export function encodeWorkspaceCursor(key: WorkspaceCursorKey, secret: Buffer): string {
  const payload = Buffer.from(JSON.stringify({ v: 1, o: key.organizationId, n: key.name }), "utf8").toString(
    "base64url",
  );
  return `${payload}.${mac(payload, secret).toString("base64url")}`;
}

/**
 * Decodes a cursor encodeWorkspaceCursor() made for this organization's list. Anything else
 * (malformed, tampered, another organization's) throws WORKSPACE_LIST_CURSOR_INVALID.
 */
export function decodeWorkspaceCursor(token: string, secret: Buffer, organizationId: string): string {
  const name = tryDecode(token, secret, organizationId);
  if (name === undefined) {
    throw new DomainError(
      "WORKSPACE_LIST_CURSOR_INVALID",
      "The cursor is not one this server issued for this workspace list. Start again from the first page.",
      {
        source: { parameter: "cursor" },
      },
    );
  }
  return name;
}

function tryDecode(token: string, secret: Buffer, organizationId: string): string | undefined {
  if (token.length === 0 || token.length > MAX_LENGTH) return undefined;
  const parts = token.split(".");
  if (parts.length !== 2 || !BASE64URL.test(parts[0]) || !BASE64URL.test(parts[1])) return undefined;
  const given = Buffer.from(parts[1], "base64url");
  if (
    given.length !== MAC_BYTES ||
    given.toString("base64url") !== parts[1] ||
    !timingSafeEqual(given, mac(parts[0], secret))
  )
    return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[0], "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return undefined;
  const { v, o, n, ...rest } = payload as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || v !== 1 || o !== organizationId || typeof n !== "string") return undefined;
  return n;
}
