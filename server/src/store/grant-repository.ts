import type { ScopeKind } from "../domain/authorization.ts";
import { newId } from "../domain/ids.ts";
import type { PermissionGrant } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import type { PermissionGrantRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { rowMapper } from "./columns.ts";

/** What granting a permission needs. */
export interface GrantInput {
  id?: string;
  principalId: string;
  scopeKind: ScopeKind;
  scopeId: string;
  permission: string;
  createdAt: Date | string;
}

/** Permission grants. */
export class GrantRepository extends Repository {
  /** Grants a permission on a scope; granting the same one twice throws CONSTRAINT_VIOLATION. */
  async grant(input: GrantInput): Promise<PermissionGrant> {
    const row = toGrant.write({ ...input, id: input.id ?? newId("grant") });
    return translating(this.dialect, async () => {
      await this.db<PermissionGrantRow>("permission_grants").insert(row);
      return toGrant(row);
    });
  }

  /** The principal's grants, oldest first. */
  async listForPrincipal(principalId: string): Promise<PermissionGrant[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<PermissionGrantRow>("permission_grants")
        .where({ principal_id: principalId })
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return rows.map(toGrant);
    });
  }
}

/** Maps a permission_grants row to its record. */
export const toGrant = rowMapper<PermissionGrantRow, PermissionGrant>()(
  "id principal_id scope_kind:as scope_id permission created_at:iso",
);
