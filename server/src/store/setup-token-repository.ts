import { Repository } from "./repository.ts";
import { translating } from "./translate-error.ts";
import { numberFromRow } from "./values.ts";

interface SetupTokenRow {
  token_hash: string;
  created_at_ms: number | string;
  expires_at_ms: number | string;
  used_at_ms: number | string | null;
}

/** A setup link's token that can still complete setup. */
export interface UsableSetupToken {
  tokenHash: string;
  expiresAtMs: number;
}

/**
 * The one-time setup links (commands/setup.ts), by the SHA-256 of their token. At most one is
 * usable at a time: issuing a link retires every earlier one, and spending one retires them all.
 */
export class SetupTokenRepository extends Repository {
  /** Whether any deployment administrator exists (then no setup link is issued or accepted). */
  async administratorExists(): Promise<boolean> {
    return translating(
      this.dialect,
      async () => (await this.db("users").where({ site_admin: true }).first("id")) !== undefined,
    );
  }

  /** Stores a new link's token hash and retires every unused earlier link. */
  async issue(input: { tokenHash: string; createdAtMs: number; expiresAtMs: number }): Promise<void> {
    return translating(this.dialect, async () => {
      await this.db<SetupTokenRow>("setup_tokens").whereNull("used_at_ms").update({ used_at_ms: input.createdAtMs });
      await this.db<SetupTokenRow>("setup_tokens").insert({
        token_hash: input.tokenHash,
        created_at_ms: input.createdAtMs,
        expires_at_ms: input.expiresAtMs,
        used_at_ms: null,
      });
    });
  }

  /** The token if it is known, unused and not expired at `nowMs`. */
  async findUsable(tokenHash: string, nowMs: number): Promise<UsableSetupToken | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<SetupTokenRow>("setup_tokens")
        .where({ token_hash: tokenHash })
        .whereNull("used_at_ms")
        .where("expires_at_ms", ">", nowMs)
        .first();
      return row ? { tokenHash: row.token_hash, expiresAtMs: numberFromRow(row.expires_at_ms) } : undefined;
    });
  }

  /**
   * Spends the token: true only for the one caller that marks it used while it is unused and not
   * expired (a conditional update, so two concurrent setups cannot both succeed); every other
   * unused link is retired with it.
   */
  async consume(tokenHash: string, nowMs: number): Promise<boolean> {
    return translating(this.dialect, async () => {
      const spent = await this.db<SetupTokenRow>("setup_tokens")
        .where({ token_hash: tokenHash })
        .whereNull("used_at_ms")
        .where("expires_at_ms", ">", nowMs)
        .update({ used_at_ms: nowMs });
      if (spent !== 1) return false;
      await this.db<SetupTokenRow>("setup_tokens").whereNull("used_at_ms").update({ used_at_ms: nowMs });
      return true;
    });
  }
}
