import { DomainError } from "./errors.ts";
import { openSignedJson, signJson } from "./signed-json.ts";

/** Where a workspace list page continues: after this name, in this organization. */
export interface WorkspaceCursorKey {
  organizationId: string;
  name: string;
}

const MAX_LENGTH = 512;
const MAC_LABEL = "stackship/workspace-cursor/v1:";

/** Encodes a workspace list position as an opaque, HMAC-protected cursor. */
export function encodeWorkspaceCursor(key: WorkspaceCursorKey, secret: Buffer): string {
  return signJson({ v: 1, o: key.organizationId, n: key.name }, secret, MAC_LABEL);
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
  const payload = openSignedJson(token, secret, MAC_LABEL, MAX_LENGTH);
  if (payload === undefined) return undefined;
  const { v, o, n, ...rest } = payload;
  if (Object.keys(rest).length > 0 || v !== 1 || o !== organizationId || typeof n !== "string") return undefined;
  return n;
}
