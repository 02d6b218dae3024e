import { newId } from "../domain/ids.ts";
import type { Organization } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import type { OrganizationRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { rowMapper } from "./columns.ts";

/** What creating an organization needs. */
export interface CreateOrganizationInput {
  id?: string;
  name: string;
  createdAt: Date | string;
}

/** Organizations. */
export class OrganizationRepository extends Repository {
  /** Creates an organization; a taken name throws ORGANIZATION_NAME_TAKEN. */
  async create(input: CreateOrganizationInput): Promise<Organization> {
    const row = toOrganization.write({ ...input, id: input.id ?? newId("organization") });
    return translating(this.dialect, async () => {
      await this.db<OrganizationRow>("organizations").insert(row);
      return toOrganization(row);
    });
  }

  /** The organization with this id, if any. */
  async getById(id: string): Promise<Organization | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<OrganizationRow>("organizations").where({ id }).first();
      return row && toOrganization(row);
    });
  }

  /** The organizations with these ids (all of them when `ids` is null), ordered by name. */
  async list(ids: readonly string[] | null): Promise<Organization[]> {
    return translating(this.dialect, async () => {
      const query = this.db<OrganizationRow>("organizations").orderBy([{ column: "name", order: "asc" }]);
      if (ids !== null) {
        if (ids.length === 0) return [];
        query.whereIn("id", [...ids]);
      }
      return (await query).map(toOrganization);
    });
  }

  /** The organization with this name, if any. */
  async getByName(name: string): Promise<Organization | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<OrganizationRow>("organizations").where({ name }).first();
      return row && toOrganization(row);
    });
  }
}

const toOrganization = rowMapper<OrganizationRow, Organization>()("id name created_at:iso");
