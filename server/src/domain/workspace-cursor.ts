import { openListCursor } from "./cursor.ts";
import { signJson } from "./signed-json.ts";

/** Where a workspace list page continues: after this name, in this organization. */
export interface WorkspaceCursorKey {
  organizationId: string;
  name: string;
}

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
  return openListCursor(
    token,
    secret,
    { label: MAC_LABEL, code: "WORKSPACE_LIST_CURSOR_INVALID", list: "this workspace list" },
    ({ v, o, n, ...rest }) =>
      Object.keys(rest).length === 0 && v === 1 && o === organizationId && typeof n === "string" ? n : undefined,
  );
}
