import type { Role } from "../domain/authorization.ts";
import { newId } from "../domain/ids.ts";
import type { ApiToken, PermissionGrant, Principal } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import { toGrant } from "./grant-repository.ts";
import { toPrincipal } from "./principal-repository.ts";
import type { ApiTokenRow, PermissionGrantRow, PrincipalRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite } from "./values.ts";
import { rowMapper } from "./columns.ts";

/** What creating an API token needs; only the hash of its secret is stored. */
export interface CreateTokenInput {
  id?: string;
  principalId: string;
  organizationId: string | null;
  role: Role | null;
  description: string | null;
  tokenHash: string;
  createdAt: Date | string;
  /** When it stops working on its own; null or absent: until revoked. */
  expiresAt?: Date | string | null;
}

/** A token found by its hash, with who holds it and what they may do. */
export interface AuthenticatedToken {
  token: ApiToken;
  principal: Principal;
  grants: PermissionGrant[];
}

/** API tokens. */
export class TokenRepository extends Repository {
  /** Creates a token; a duplicate hash throws CONSTRAINT_VIOLATION. */
  async createToken(input: CreateTokenInput): Promise<ApiToken> {
    const row = toToken.write({
      ...input,
      id: input.id ?? newId("apiToken"),
      lastUsedAt: null,
      expiresAt: input.expiresAt ?? null,
      revokedAt: null,
    });
    return translating(this.dialect, async () => {
      await this.db<ApiTokenRow>("api_tokens").insert(row);
      return toToken(row);
    });
  }

  /** The token with this hash, its principal and the principal's grants, if any. */
  async findByTokenHash(tokenHash: string): Promise<AuthenticatedToken | undefined> {
    return translating(this.dialect, async () => {
      const tokenRow = await this.db<ApiTokenRow>("api_tokens").where({ token_hash: tokenHash }).first();
      if (tokenRow === undefined) return undefined;
      const principalRow = await this.db<PrincipalRow>("principals").where({ id: tokenRow.principal_id }).first();
      if (principalRow === undefined) return undefined;
      const grantRows = await this.db<PermissionGrantRow>("permission_grants")
        .where({ principal_id: principalRow.id })
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return { token: toToken(tokenRow), principal: toPrincipal(principalRow), grants: grantRows.map(toGrant) };
    });
  }

  /** The organization's tokens that were not revoked, oldest first. */
  async listByOrganization(organizationId: string): Promise<ApiToken[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<ApiTokenRow>("api_tokens")
        .where({ organization_id: organizationId })
        .whereNull("revoked_at")
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return rows.map(toToken);
    });
  }

  /** Revokes the organization's token; false when there is no such token or it was revoked already. */
  async revoke(tokenId: string, organizationId: string, at: Date | string): Promise<boolean> {
    return translating(this.dialect, async () => {
      const changed = await this.db<ApiTokenRow>("api_tokens")
        .where({ id: tokenId, organization_id: organizationId })
        .whereNull("revoked_at")
        .update({ revoked_at: isoForWrite(at) });
      return changed > 0;
    });
  }

  /** Records that the token was just used. */
  async touchLastUsed(tokenId: string, usedAt: Date | string): Promise<void> {
    const lastUsedAt = isoForWrite(usedAt);
    return translating(this.dialect, async () => {
      await this.db<ApiTokenRow>("api_tokens").where({ id: tokenId }).update({ last_used_at: lastUsedAt });
    });
  }
}

const toToken = rowMapper<ApiTokenRow, ApiToken>()(
  "id principal_id organization_id role:as description token_hash created_at:iso last_used_at:iso? expires_at:iso? revoked_at:iso?",
);
