import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/** The session cookie's name. */
export const SESSION_COOKIE = "stackship_session";
/** The header carrying the CSRF token on cookie-authenticated changes. */
export const CSRF_HEADER = "x-csrf-token";
/** How long a session lives after sign-in. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/**
 * The most live sessions one user holds: signing in once more ends the oldest, so signing in again
 * and again cannot multiply the per-session live-socket limit (or keep stolen sessions alive).
 */
export const MAX_SESSIONS_PER_USER = 10;
/** How long a step-up stays fresh: a step-up exactly 15 minutes old still counts. */
export const STEP_UP_FRESH_MS = 15 * 60 * 1000;
/** The shortest password a new user may get. */
export const MIN_PASSWORD_LENGTH = 12;

/** Whether a step-up stamped at `steppedUpAt` is still fresh at `now` (no older than 15 minutes). */
export function isStepUpFresh(steppedUpAt: string | null, now: Date): boolean {
  if (steppedUpAt === null) return false;
  const age = now.getTime() - Date.parse(steppedUpAt);
  return age >= 0 && age <= STEP_UP_FRESH_MS;
}

/** When a step-up stamped at `steppedUpAt` stops being fresh. */
export function stepUpFreshUntil(steppedUpAt: string | null): string | null {
  return steppedUpAt === null ? null : new Date(Date.parse(steppedUpAt) + STEP_UP_FRESH_MS).toISOString();
}

// scrypt at N=2^15, r=8, p=1: 32 MiB and tens of milliseconds per check (OWASP's baseline).
const SCRYPT = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } satisfies ScryptOptions;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFC"), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** An scrypt hash of the password: `scrypt$N$r$p$salt$key`, salt and key base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, SCRYPT);
  return ["scrypt", SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** Whether the password matches the stored hash; a malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every(Number.isInteger)) return false;
  const salt = Buffer.from(parts[4], "base64url");
  const expected = Buffer.from(parts[5], "base64url");
  if (expected.length !== KEY_LENGTH) return false;
  const key = await derive(password, salt, { N, r, p, maxmem: SCRYPT.maxmem });
  return timingSafeEqual(key, expected);
}

/** A hash that matches no password, checked for unknown emails so they take as long as known ones. */
export const DECOY_PASSWORD_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${Buffer.alloc(16).toString("base64url")}$${Buffer.alloc(KEY_LENGTH).toString("base64url")}`;
