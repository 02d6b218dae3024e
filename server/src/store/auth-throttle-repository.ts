import { delayAfterFailures, type ThrottlePolicy } from "../domain/auth-throttle.ts";
import { Repository } from "./repository.ts";
import { translating } from "./translate-error.ts";
import { numberFromRow } from "./values.ts";
import { sha256Hex } from "../domain/canonical-json.ts";

interface AuthThrottleRow {
  key: string;
  failures: number | string;
  last_failure_ms: number | string;
  blocked_until_ms: number | string | null;
}

/** One throttled key: what it is (for the row key) and the policy that applies to it. */
export interface ThrottleKey {
  kind: "account" | "address";
  /** The email (lower-cased by the caller) or the client address; stored only as a SHA-256. */
  value: string;
  policy: ThrottlePolicy;
}

/** The outcome of reserving an attempt: allowed, or blocked until a time. */
export type Reservation = { allowed: true } | { allowed: false; blockedUntilMs: number };

class Blocked extends Error {
  constructor(readonly blockedUntilMs: number) {
    super("blocked");
  }
}

function rowKey(key: ThrottleKey): string {
  return `${key.kind}:${sha256Hex(key.value)}`;
}

/**
 * Failed password checks per account and per client address, shared by every API process.
 *
 * An attempt is counted as a failure before its password is checked (`reserve`), and given back
 * when it succeeds (`succeeded`); so a burst of concurrent attempts cannot all pass a check made
 * before any of them failed. On PostgreSQL the counting upsert takes the row's lock, so
 * concurrent reservations of one key queue; on SQLite the write transaction serializes them.
 */
export class AuthThrottleRepository extends Repository {
  /**
   * Counts one attempt against every key, unless one of them is blocked at `nowMs` (then nothing
   * is counted and the latest end of the blocks is returned).
   */
  async reserve(keys: readonly ThrottleKey[], nowMs: number): Promise<Reservation> {
    return translating(this.dialect, async () => {
      try {
        await this.db.transaction(async (trx) => {
          let blockedUntil = 0;
          for (const key of keys) {
            const id = rowKey(key);
            const forgetBefore = nowMs - key.policy.forgetAfterMs;
            await trx<AuthThrottleRow>("auth_throttles")
              .insert({ key: id, failures: 1, last_failure_ms: nowMs, blocked_until_ms: null })
              .onConflict("key")
              .merge({
                failures: trx.raw("CASE WHEN ?? < ? THEN 1 ELSE ?? + 1 END", [
                  "auth_throttles.last_failure_ms",
                  forgetBefore,
                  "auth_throttles.failures",
                ]) as unknown as number,
                last_failure_ms: nowMs,
              });
            const row = (await trx<AuthThrottleRow>("auth_throttles").where({ key: id }).first())!;
            const until = row.blocked_until_ms === null ? 0 : numberFromRow(row.blocked_until_ms);
            if (until > nowMs) blockedUntil = Math.max(blockedUntil, until);
            const delay = delayAfterFailures(key.policy, numberFromRow(row.failures));
            if (delay > 0) {
              await trx<AuthThrottleRow>("auth_throttles")
                .where({ key: id })
                .update({ blocked_until_ms: Math.max(until, nowMs + delay) });
            }
          }
          // Rolls the counting back: an attempt refused for a block is not another failure.
          if (blockedUntil > 0) throw new Blocked(blockedUntil);
        });
        return { allowed: true as const };
      } catch (error) {
        if (error instanceof Blocked) return { allowed: false as const, blockedUntilMs: error.blockedUntilMs };
        throw error;
      }
    });
  }

  /**
   * A reserved attempt succeeded: the account keys start again from zero; an address key gives
   * the attempt back (its failures from other attempts stay counted, and so does a block the
   * reservation may have started).
   */
  async succeeded(keys: readonly ThrottleKey[]): Promise<void> {
    return translating(this.dialect, async () => {
      for (const key of keys) {
        const id = rowKey(key);
        if (key.kind === "account") await this.db<AuthThrottleRow>("auth_throttles").where({ key: id }).delete();
        else
          await this.db<AuthThrottleRow>("auth_throttles")
            .where({ key: id })
            .andWhere("failures", ">", 0)
            .decrement("failures", 1);
      }
    });
  }

  /** The failures counted against a key (0 when none), for tests and diagnostics. */
  async failuresOf(key: Omit<ThrottleKey, "policy">): Promise<number> {
    return translating(this.dialect, async () => {
      const row = await this.db<AuthThrottleRow>("auth_throttles")
        .where({ key: rowKey(key as ThrottleKey) })
        .first();
      return row ? numberFromRow(row.failures) : 0;
    });
  }
}
