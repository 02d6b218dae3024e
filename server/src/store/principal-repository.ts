import { newId } from "../domain/ids.ts";
import type { Principal, PrincipalKind } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import type { PrincipalRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { rowMapper } from "./columns.ts";

/** What creating a principal needs. */
export interface CreatePrincipalInput {
  id?: string;
  kind: PrincipalKind;
  organizationId: string | null;
  name: string;
  createdAt: Date | string;
}

/** Principals: who acts. */
export class PrincipalRepository extends Repository {
  /** Creates a principal. */
  async createPrincipal(input: CreatePrincipalInput): Promise<Principal> {
    const row = toPrincipal.write({ ...input, id: input.id ?? newId("principal") });
    return translating(this.dialect, async () => {
      await this.db<PrincipalRow>("principals").insert(row);
      return toPrincipal(row);
    });
  }

  /** The principal with this id, if any. */
  async getById(id: string): Promise<Principal | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<PrincipalRow>("principals").where({ id }).first();
      return row && toPrincipal(row);
    });
  }
}

/** Maps a principals row to its record. */
export const toPrincipal = rowMapper<PrincipalRow, Principal>()("id kind:as organization_id name created_at:iso");
