import { newId } from "../domain/ids.ts";
import type { Project } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import type { ProjectRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { rowMapper } from "./columns.ts";

/** What creating a project needs. */
export interface CreateProjectInput {
  id?: string;
  organizationId: string;
  name: string;
  createdAt: Date | string;
}

/** Projects. */
export class ProjectRepository extends Repository {
  /** Creates a project; a name taken in the organization throws PROJECT_NAME_TAKEN. */
  async create(input: CreateProjectInput): Promise<Project> {
    const row = toProject.write({ ...input, id: input.id ?? newId("project") });
    return translating(this.dialect, async () => {
      await this.db<ProjectRow>("projects").insert(row);
      return toProject(row);
    });
  }

  /** The project with this id, if any. */
  async getById(id: string): Promise<Project | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<ProjectRow>("projects").where({ id }).first();
      return row && toProject(row);
    });
  }

  /** The project with this name in the organization, if any. */
  async getByName(organizationId: string, name: string): Promise<Project | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<ProjectRow>("projects").where({ organization_id: organizationId, name }).first();
      return row && toProject(row);
    });
  }

  /** Renames a project; a name taken in the organization throws PROJECT_NAME_TAKEN. */
  async rename(id: string, name: string): Promise<Project | undefined> {
    return translating(this.dialect, async () => {
      await this.db<ProjectRow>("projects").where({ id }).update({ name });
      const row = await this.db<ProjectRow>("projects").where({ id }).first();
      return row && toProject(row);
    });
  }

  /** The organization's projects, by name. */
  async listByOrganization(organizationId: string): Promise<Project[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<ProjectRow>("projects")
        .where({ organization_id: organizationId })
        .orderBy([
          { column: "name", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return rows.map(toProject);
    });
  }
}

const toProject = rowMapper<ProjectRow, Project>()("id organization_id name created_at:iso");
