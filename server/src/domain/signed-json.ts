import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The one wire form of the opaque values the server signs and later reads back (list cursors,
 * signed URL tokens): `base64url(JSON).base64url(MAC)`. The MAC is HMAC-SHA256 over `label` and
 * the payload's text, truncated to 128 bits; the label keeps one kind of value from passing for
 * another under the same key.
 *
 * Both parts must be the canonical base64url of their bytes. Buffer.from ignores stray trailing
 * bits, so without that check two spellings would decode to the same MAC, and a test (or client)
 * that "tampers" with the last characters could be told the value is still good.
 */

const MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/u;

function mac(payloadPart: string, key: Buffer, label: string): Buffer {
  return createHmac("sha256", key).update(`${label}${payloadPart}`, "utf8").digest().subarray(0, MAC_BYTES);
}

/** Signs `value` (a JSON object) under `key` and `label`. */
export function signJson(value: Readonly<Record<string, unknown>>, key: Buffer, label: string): string {
  const payloadPart = Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
  return `${payloadPart}.${mac(payloadPart, key, label).toString("base64url")}`;
}

/**
 * The JSON object signJson() signed with this key and label, or undefined for anything else:
 * not a string, empty or longer than `maxLength`, malformed, a non-canonical spelling, tampered,
 * signed with another key or label, or not a JSON object. The MAC is checked before the payload
 * is parsed, so nothing an attacker wrote reaches JSON.parse.
 */
export function openSignedJson(
  token: unknown,
  key: Buffer,
  label: string,
  maxLength = Number.POSITIVE_INFINITY,
): Record<string, unknown> | undefined {
  if (typeof token !== "string" || token.length === 0 || token.length > maxLength) return undefined;
  const parts = token.split(".");
  if (parts.length !== 2) return undefined;
  const [payloadPart, macPart] = parts;
  const payloadBytes = decodeBase64Url(payloadPart);
  const macBytes = decodeBase64Url(macPart);
  if (payloadBytes === undefined || macBytes === undefined || macBytes.length !== MAC_BYTES) return undefined;
  if (!timingSafeEqual(macBytes, mac(payloadPart, key, label))) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(payloadBytes.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return undefined;
  return payload as Record<string, unknown>;
}

/** Strict base64url: only the URL alphabet, no padding, and the canonical encoding of its bytes. */
function decodeBase64Url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text)) return undefined;
  const bytes = Buffer.from(text, "base64url");
  return bytes.toString("base64url") === text ? bytes : undefined;
}
