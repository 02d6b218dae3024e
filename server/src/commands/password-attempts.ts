import { ACCOUNT_THROTTLE, ADDRESS_THROTTLE, retryAfterSeconds } from "../domain/auth-throttle.ts";
import { DomainError } from "../domain/errors.ts";
import type { Services } from "./services.ts";
import type { ThrottleKey } from "../store/index.ts";
import { sha256Hex } from "../domain/canonical-json.ts";

/** What a password attempt is counted against: the account as typed and the client address. */
export function attemptKeys(email: string, clientAddress: string): ThrottleKey[] {
  return [
    { kind: "account", value: email.trim().toLowerCase(), policy: ACCOUNT_THROTTLE },
    { kind: "address", value: clientAddress, policy: ADDRESS_THROTTLE },
  ];
}

/** The SHA-256 of an email as typed (lower-cased): audit events name accounts that may not exist by it, never by the text. */
export function emailDigest(email: string): string {
  return sha256Hex(email.trim().toLowerCase());
}

/** One failed or refused password attempt, as the audit trail records it. */
export interface FailedAttempt {
  action: "session.sign_in_failed" | "session.step_up_failed" | "user.password_change_failed";
  /** The user, when the email named one (never told to the caller). */
  userId: string | null;
  targetType: "users" | "sessions";
  targetId: string;
  email: string;
  clientAddress: string;
  refusal: "CREDENTIALS_INVALID" | "STEP_UP_PASSWORD_INVALID" | "PASSWORD_CURRENT_INVALID" | "AUTH_THROTTLED";
}

/** Audits a failed or throttled attempt (every one of them). */
export async function auditFailedAttempt(services: Services, attempt: FailedAttempt): Promise<void> {
  await services.stores.audit.record({
    organizationId: null,
    actorId: attempt.userId,
    action: attempt.action,
    targetType: attempt.targetType,
    targetId: attempt.targetId,
    data: { refusal: attempt.refusal, client_address: attempt.clientAddress, email_sha256: emailDigest(attempt.email) },
    createdAt: services.clock(),
  });
}

/**
 * Counts the attempt against its keys before the password is checked; a blocked key refuses it
 * with 429 AUTH_THROTTLED and `Retry-After` (audited by `onThrottled`), the same for accounts
 * that exist and ones that do not.
 */
export async function reserveAttempt(
  services: Services,
  keys: readonly ThrottleKey[],
  onThrottled: () => Promise<void>,
): Promise<void> {
  const now = services.clock().getTime();
  const reservation = await services.stores.authThrottles.reserve(keys, now);
  if (reservation.allowed) return;
  await onThrottled();
  const seconds = retryAfterSeconds(reservation.blockedUntilMs, now);
  throw new DomainError(
    "AUTH_THROTTLED",
    `Too many failed attempts for this account or from this address. Wait ${seconds} second${seconds === 1 ? "" : "s"} and try again.`,
    {
      retryAfterSeconds: seconds,
      meta: { retry_after_seconds: seconds },
    },
  );
}
