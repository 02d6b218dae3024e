// Throttling of failed password checks (sign-in and step-up): pure rules, no I/O.
//
// Each attempt counts against two keys, the account (the email as typed, lower-cased) and the
// client address. A key's failures are consecutive: they are forgotten an hour after the last
// one, and a successful sign-in or step-up clears the account's count. Up to `freeFailures`
// failures cost nothing; after that each failure blocks the key for the base delay doubled per
// further failure, up to the cap. While a key is blocked, attempts are answered 429 without the
// password being checked (and without counting again).

/** How one kind of key is throttled. */
export interface ThrottlePolicy {
  /** Failures in a row that carry no delay. */
  freeFailures: number;
  /** The delay after the first failure beyond the free ones. */
  baseDelayMs: number;
  /** The longest delay. */
  maxDelayMs: number;
  /** A key whose last failure is older than this starts again at zero. */
  forgetAfterMs: number;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/**
 * Per account: the 5th failure in a row blocks the account for 1 s, the 6th for 2 s, the 7th for
 * 4 s, … up to 15 minutes (from the 15th on). An attacker gets about a dozen guesses in the first
 * half hour and four an hour after that; its owner is never locked out for longer than 15 minutes.
 */
export const ACCOUNT_THROTTLE: ThrottlePolicy = {
  freeFailures: 4,
  baseDelayMs: SECOND,
  maxDelayMs: 15 * MINUTE,
  forgetAfterMs: 60 * MINUTE,
};

/**
 * Per client address: more room, for offices behind one address, and the same backoff from the
 * 20th failure in a row, against guessing one password across many accounts.
 */
export const ADDRESS_THROTTLE: ThrottlePolicy = {
  freeFailures: 19,
  baseDelayMs: SECOND,
  maxDelayMs: 15 * MINUTE,
  forgetAfterMs: 60 * MINUTE,
};

/** How long a key is blocked after its `failures`-th failure in a row (0: not blocked). */
export function delayAfterFailures(policy: ThrottlePolicy, failures: number): number {
  if (failures <= policy.freeFailures) return 0;
  const doublings = failures - policy.freeFailures - 1;
  // 2^doublings overflows nothing before the cap at any realistic count; clamp the exponent anyway.
  return Math.min(policy.baseDelayMs * 2 ** Math.min(doublings, 40), policy.maxDelayMs);
}

/** The `Retry-After` of a block ending at `blockedUntilMs`, in whole seconds (at least 1). */
export function retryAfterSeconds(blockedUntilMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((blockedUntilMs - nowMs) / SECOND));
}
