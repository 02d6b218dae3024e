import { randomBytes } from "node:crypto";
import { DomainError } from "../domain/errors.ts";
import type { Run } from "../domain/records.ts";
import { RUN_TOKEN_SECRET_PREFIX, hashTokenSecret } from "../domain/token-secrets.ts";
import type { Services } from "./services.ts";
import { RUN_TOKEN_PHASES, inTransaction, type RunToken, type RunTokenPhase } from "../store/index.ts";

/** The longest a run token may live (a phase's wall-clock limit is far below this). */
export const MAX_RUN_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Mints the token a run's sandboxed `tofu` uses against the compatibility API, scoped to one run
 * and one phase. The secret is returned once; only its SHA-256 is stored.
 *
 * An apply-phase token is bound to the fence of the workspace lock the run holds now, so the run
 * must hold the lock (lockWorkspaceForRun first; RUN_TOKEN_LOCK_REQUIRED otherwise). If the lock
 * is later released and taken again, even by the same run, that token's state writes are refused
 * as stale; mint a new one under the new fence. A speculative run never gets an apply token.
 */
export async function mintRunToken(
  services: Services,
  run: Run,
  phase: RunTokenPhase,
  ttlMs: number,
): Promise<{ secret: string; token: RunToken }> {
  if (!(RUN_TOKEN_PHASES as readonly string[]).includes(phase))
    throw new TypeError(`unknown run token phase '${String(phase)}'`);
  if (!Number.isFinite(ttlMs) || ttlMs <= 0 || ttlMs > MAX_RUN_TOKEN_TTL_MS)
    throw new RangeError(`run token ttl must be in (0, ${MAX_RUN_TOKEN_TTL_MS}] ms, got ${ttlMs}`);
  if (phase === "apply" && run.kind === "speculative") {
    throw new DomainError(
      "RUN_TRANSITION_INVALID",
      `Run ${run.id} is speculative and never applies, so it gets no apply-phase token.`,
    );
  }
  const now = services.clock();
  const secret = `${RUN_TOKEN_SECRET_PREFIX}${randomBytes(32).toString("base64url")}`;
  return inTransaction(services.db, async (stores) => {
    let fence: number | null = null;
    if (phase === "apply") {
      const lock = await stores.workspaceLocks.current(run.workspaceId, { forUpdate: true });
      if (!lock || lock.holder.kind !== "run" || lock.holder.id !== run.id) {
        throw new DomainError(
          "RUN_TOKEN_LOCK_REQUIRED",
          `Run ${run.id} does not hold the lock of workspace ${run.workspaceId}; take it with lockWorkspaceForRun before minting an apply-phase token.`,
        );
      }
      fence = lock.fence;
    }
    const token = await stores.runTokens.create({
      runId: run.id,
      phase,
      tokenHash: hashTokenSecret(secret),
      fence,
      expiresAt: new Date(now.getTime() + ttlMs),
      createdAt: now,
    });
    await stores.audit.record({
      organizationId: run.organizationId,
      actorId: null,
      action: "run_token.minted",
      targetType: "runs",
      targetId: run.id,
      data: { run_token_id: token.id, phase, fence, expires_at: token.expiresAt },
      createdAt: now,
    });
    return { secret, token };
  });
}

/**
 * Revokes the run's live tokens, all of them or one phase's (call it when a phase or the run
 * ends); how many were revoked. A revoked token is refused with 401 from then on.
 */
export async function revokeRunTokens(services: Services, runId: string, phase?: RunTokenPhase): Promise<number> {
  return services.stores.runTokens.revokeByRun(runId, services.clock(), phase);
}
