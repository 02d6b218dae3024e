import { createHmac } from "node:crypto";
import { openSignedJson, signJson } from "./signed-json.ts";

/**
 * Signed, expiring, purpose-bound tokens: the proof carried in the path of a URL that is used
 * without an Authorization header (configuration uploads, state uploads, CLI log reads).
 *
 * A token is `base64url(JSON claims + exp).base64url(mac)`. The MAC is HMAC-SHA256, truncated to
 * 128 bits, under a key derived from the caller's signing key for the token's purpose alone, so a
 * token minted for one purpose never verifies for another, even with the same claims. `exp` is
 * whole Unix seconds (the expiry floored); a token is accepted up to and including that second's
 * first millisecond, and refused from the next millisecond on.
 *
 * Pure given the key: no clock (the caller passes `now`), no store, no I/O.
 */

/** What a token may be used for; each purpose signs with its own derived key. */
export type TokenPurpose = "configuration-upload" | "state-upload" | "state-json-upload" | "log-read";

/** The claims a token carries: short string fields naming what it grants access to. */
export type TokenClaims = Readonly<Record<string, string>>;

/** The key of one purpose, derived from the signing key (HMAC-SHA256 as a PRF, purpose as label). */
function purposeKey(key: Buffer, purpose: TokenPurpose): Buffer {
  return createHmac("sha256", key).update(`stackship/signed-token/${purpose}`).digest();
}

/** A token for `purpose` carrying `claims`, valid until `expiresAt` (floored to the second). */
export function signToken(key: Buffer, purpose: TokenPurpose, claims: TokenClaims, expiresAt: Date): string {
  if ("exp" in claims) throw new Error("a token claim may not be named exp");
  return signJson({ ...claims, exp: Math.floor(expiresAt.getTime() / 1000) }, purposeKey(key, purpose), "");
}

/**
 * The claims of a token signed with `key` for `purpose` that has not expired at `now`, or null
 * (malformed, tampered, signed with another key or for another purpose, or expired). Only the
 * claims named in `names` are returned, and each must be a string.
 */
export function verifyToken<N extends string>(
  key: Buffer,
  purpose: TokenPurpose,
  token: string,
  names: readonly N[],
  now: Date,
): Record<N, string> | null {
  const parsed = openSignedJson(token, purposeKey(key, purpose), "");
  if (parsed === undefined || typeof parsed.exp !== "number" || parsed.exp * 1000 < now.getTime()) return null;
  const claims = {} as Record<N, string>;
  for (const name of names) {
    const value = parsed[name];
    if (typeof value !== "string") return null;
    claims[name] = value;
  }
  return claims;
}
