import { newId } from "../domain/ids.ts";
import { Repository } from "./repository.ts";
import type { RunRow, RunTokenRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite } from "./values.ts";
import { rowMapper } from "./columns.ts";

/** The phases a run token is scoped to. */
export const RUN_TOKEN_PHASES = ["plan", "apply"] as const;
/** A run token's phase. */
export type RunTokenPhase = (typeof RUN_TOKEN_PHASES)[number];

/** A run-scoped, phase-scoped token; only the SHA-256 of its secret is stored. */
export interface RunToken {
  id: string;
  runId: string;
  phase: RunTokenPhase;
  tokenHash: string;
  /** The workspace-lock fence an apply-phase token is bound to; null for plan. */
  fence: number | null;
  expiresAt: string;
  createdAt: string;
  revokedAt: string | null;
}

/** What creating a run token needs. */
export interface CreateRunTokenInput {
  id?: string;
  runId: string;
  phase: RunTokenPhase;
  tokenHash: string;
  fence: number | null;
  expiresAt: Date | string;
  createdAt: Date | string;
}

/** A run token found by its hash, with where its run lives. */
export interface FoundRunToken {
  token: RunToken;
  workspaceId: string;
  organizationId: string;
}

/**
 * A new id with a prefix that domain/ids.ts does not list yet (`sv`, `rtk`): the same 16 unbiased
 * characters as every other id.
 */
export function newPrefixedId(prefix: "sv" | "rtk"): string {
  return `${prefix}-${newId("run").slice("run-".length)}`;
}

/** Run tokens: the credentials a run's sandboxed `tofu` uses against the compatibility API. */
export class RunTokenRepository extends Repository {
  /** Creates a token; a duplicate hash throws CONSTRAINT_VIOLATION. */
  async create(input: CreateRunTokenInput): Promise<RunToken> {
    const row = toRunToken.write({ ...input, id: input.id ?? newPrefixedId("rtk"), revokedAt: null });
    return translating(this.dialect, async () => {
      await this.db<RunTokenRow>("run_tokens").insert(row);
      return toRunToken(row);
    });
  }

  /** The token with this hash (revoked and expired ones included: the caller decides), with its run's workspace. */
  async findByTokenHash(tokenHash: string): Promise<FoundRunToken | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<RunTokenRow>("run_tokens")
        .join<RunRow>("runs", "runs.id", "run_tokens.run_id")
        .where("run_tokens.token_hash", tokenHash)
        .first<(RunTokenRow & { workspace_id: string; organization_id: string }) | undefined>("run_tokens.*", {
          workspace_id: "runs.workspace_id",
          organization_id: "runs.organization_id",
        });
      if (row === undefined) return undefined;
      return { token: toRunToken(row), workspaceId: row.workspace_id, organizationId: row.organization_id };
    });
  }

  /** The run's tokens, oldest first. */
  async listByRun(runId: string): Promise<RunToken[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<RunTokenRow>("run_tokens")
        .where({ run_id: runId })
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return rows.map(toRunToken);
    });
  }

  /** Revokes every unrevoked token of the run (of one phase, when given) at `now`; how many were revoked. */
  async revokeByRun(runId: string, now: Date | string, phase?: RunTokenPhase): Promise<number> {
    const revokedAt = isoForWrite(now);
    return translating(this.dialect, () =>
      this.db<RunTokenRow>("run_tokens")
        .where({ run_id: runId, ...(phase === undefined ? {} : { phase }) })
        .whereNull("revoked_at")
        .update({ revoked_at: revokedAt }),
    );
  }
}

const toRunToken = rowMapper<RunTokenRow, RunToken>()(
  "id run_id phase:as token_hash fence:number? expires_at:iso created_at:iso revoked_at:iso?",
);
