import { DomainError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { Workspace } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import type { ProjectRow, WorkspaceRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite } from "./values.ts";
import { rowMapper } from "./columns.ts";

/** What creating a workspace needs; omitted optional fields get the documented defaults. */
export interface CreateWorkspaceInput {
  id?: string;
  organizationId: string;
  projectId: string;
  name: string;
  description?: string | null;
  /** Defaults to `main`. */
  trackedBranch?: string;
  /** Defaults to the repository root (``). */
  workingDirectory?: string;
  opentofuVersion: string;
  executionRegion: string;
  /** Defaults to 24 hours. */
  approvalTtlSeconds?: number;
  /** Defaults to false. */
  planRequiresCredential?: boolean;
  /** Defaults to false (issue 29: true once the CLI reads JSON logs). */
  structuredRunOutputEnabled?: boolean;
  createdAt: Date | string;
}

/** Workspaces. */
export class WorkspaceRepository extends Repository {
  /**
   * Creates a workspace in a project of the same organization; a name taken in the organization
   * throws WORKSPACE_NAME_TAKEN.
   */
  async create(input: CreateWorkspaceInput): Promise<Workspace> {
    const row = toWorkspace.write({
      ...input,
      id: input.id ?? newId("workspace"),
      description: input.description ?? null,
      trackedBranch: input.trackedBranch ?? "main",
      workingDirectory: input.workingDirectory ?? "",
      approvalTtlSeconds: input.approvalTtlSeconds ?? 86_400,
      planRequiresCredential: input.planRequiresCredential ?? false,
      // On for new workspaces (issue 29); the column's default (false) only kept existing ones as they were.
      structuredRunOutputEnabled: input.structuredRunOutputEnabled ?? true,
      updatedAt: input.createdAt,
    });
    return translating(this.dialect, async () => {
      const project = await this.db<ProjectRow>("projects").where({ id: input.projectId }).first("organization_id");
      // The foreign key alone would accept a project of another organization.
      if (project !== undefined && project.organization_id !== input.organizationId) {
        throw new DomainError("CONSTRAINT_VIOLATION", "The project belongs to another organization.");
      }
      await this.db<WorkspaceRow>("workspaces").insert(row);
      return toWorkspace(row);
    });
  }

  /** The workspace with this id, if any (a deleted workspace is not found). */
  async getById(id: string): Promise<Workspace | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<WorkspaceRow>("workspaces").where({ id }).whereNull("deleted_at").first();
      return row && toWorkspace(row);
    });
  }

  /** The workspace with this name in the organization, if any. */
  async getByName(organizationId: string, name: string): Promise<Workspace | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<WorkspaceRow>("workspaces")
        .where({ organization_id: organizationId, name })
        .whereNull("deleted_at")
        .first();
      return row && toWorkspace(row);
    });
  }

  /** Pins the workspace to another OpenTofu version (already resolved to a provided one). */
  async updateOpentofuVersion(id: string, opentofuVersion: string, now: Date | string): Promise<Workspace | undefined> {
    return translating(this.dialect, async () => {
      await this.db<WorkspaceRow>("workspaces")
        .where({ id })
        .update({ opentofu_version: opentofuVersion, updated_at: isoForWrite(now) });
      const row = await this.db<WorkspaceRow>("workspaces").where({ id }).first();
      return row && toWorkspace(row);
    });
  }

  /**
   * Renames the workspace and sets its description and working directory (each only when given);
   * a name taken in the organization throws WORKSPACE_NAME_TAKEN.
   */
  async updateSettings(
    id: string,
    input: { name?: string; description?: string | null; workingDirectory?: string; projectId?: string },
    now: Date | string,
  ): Promise<Workspace | undefined> {
    const changes: Partial<WorkspaceRow> = { updated_at: isoForWrite(now) };
    if (input.projectId !== undefined) changes.project_id = input.projectId;
    if (input.name !== undefined) changes.name = input.name;
    if (input.description !== undefined) changes.description = input.description;
    if (input.workingDirectory !== undefined) changes.working_directory = input.workingDirectory;
    return translating(this.dialect, async () => {
      await this.db<WorkspaceRow>("workspaces").where({ id }).update(changes);
      const row = await this.db<WorkspaceRow>("workspaces").where({ id }).first();
      return row && toWorkspace(row);
    });
  }

  /** Sets the tracked branch and working directory (what a source connection says). */
  async updateSource(
    id: string,
    input: { trackedBranch: string; workingDirectory: string },
    now: Date | string,
  ): Promise<Workspace | undefined> {
    return translating(this.dialect, async () => {
      await this.db<WorkspaceRow>("workspaces")
        .where({ id })
        .update({
          tracked_branch: input.trackedBranch,
          working_directory: input.workingDirectory,
          updated_at: isoForWrite(now),
        });
      const row = await this.db<WorkspaceRow>("workspaces").where({ id }).first();
      return row && toWorkspace(row);
    });
  }

  /** Sets whether a plan needs a cloud credential from a federation profile. */
  async updatePlanRequiresCredential(id: string, value: boolean, now: Date | string): Promise<Workspace | undefined> {
    return translating(this.dialect, async () => {
      await this.db<WorkspaceRow>("workspaces")
        .where({ id })
        .update({ plan_requires_credential: value, updated_at: isoForWrite(now) });
      const row = await this.db<WorkspaceRow>("workspaces").where({ id }).first();
      return row && toWorkspace(row);
    });
  }

  /** Sets the workspace's structured run output (issue 29); runs created afterwards record it. */
  async updateStructuredRunOutput(id: string, value: boolean, now: Date | string): Promise<Workspace | undefined> {
    return translating(this.dialect, async () => {
      await this.db<WorkspaceRow>("workspaces")
        .where({ id })
        .update({ structured_run_output_enabled: value, updated_at: isoForWrite(now) });
      const row = await this.db<WorkspaceRow>("workspaces").where({ id }).first();
      return row && toWorkspace(row);
    });
  }

  /** The organization's workspaces, by name. */
  async listByOrganization(organizationId: string): Promise<Workspace[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<WorkspaceRow>("workspaces")
        .where({ organization_id: organizationId })
        .whereNull("deleted_at")
        .orderBy([
          { column: "name", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return rows.map(toWorkspace);
    });
  }

  /**
   * Marks the workspace deleted: every lookup then misses it, and its name becomes
   * `deleted~<id>` (a character no workspace name has) so the old name can be taken again.
   * Everything that names the workspace (runs, state versions, variables, audit) is kept.
   * False when it was already deleted or never existed.
   */
  async markDeleted(id: string, now: Date | string): Promise<boolean> {
    return translating(this.dialect, async () => {
      const at = isoForWrite(now);
      const changed = await this.db<WorkspaceRow>("workspaces")
        .where({ id })
        .whereNull("deleted_at")
        .update({ name: `deleted~${id}`, deleted_at: at, updated_at: at } as Partial<WorkspaceRow>);
      return changed > 0;
    });
  }

  /** The workspace's tags, sorted. */
  async tagsOf(workspaceId: string): Promise<string[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db("workspace_tags").where({ workspace_id: workspaceId }).orderBy("name").select("name");
      return rows.map((row: { name: string }) => row.name);
    });
  }

  /** Adds tags to a workspace; tags it already carries are left as they are. */
  async addTags(workspaceId: string, names: readonly string[], at: Date | string): Promise<void> {
    const unique = [...new Set(names)];
    if (unique.length === 0) return;
    return translating(this.dialect, async () => {
      await this.db("workspace_tags")
        .insert(unique.map((name) => ({ workspace_id: workspaceId, name, created_at: isoForWrite(at) })))
        .onConflict(["workspace_id", "name"])
        .ignore();
    });
  }

  /** Removes tags from a workspace; names it does not carry are no error. */
  async removeTags(workspaceId: string, names: readonly string[]): Promise<void> {
    const unique = [...new Set(names)];
    if (unique.length === 0) return;
    return translating(this.dialect, async () => {
      await this.db("workspace_tags").where({ workspace_id: workspaceId }).whereIn("name", unique).delete();
    });
  }

  /** The organization's workspaces that carry every one of the tags, by name. */
  async listByTags(organizationId: string, tags: readonly string[]): Promise<Workspace[]> {
    const unique = [...new Set(tags)];
    return translating(this.dialect, async () => {
      let query = this.db<WorkspaceRow>("workspaces")
        .where({ organization_id: organizationId })
        .whereNull("deleted_at");
      if (unique.length > 0) {
        query = query.whereIn(
          "id",
          this.db("workspace_tags")
            .select("workspace_id")
            .whereIn("name", unique)
            .groupBy("workspace_id")
            .havingRaw("count(*) = ?", [unique.length]),
        );
      }
      const rows = await query.orderBy([
        { column: "name", order: "asc" },
        { column: "id", order: "asc" },
      ]);
      return rows.map(toWorkspace);
    });
  }
}

const toWorkspace = rowMapper<WorkspaceRow, Workspace>()(
  "id organization_id project_id name description tracked_branch working_directory opentofu_version execution_region approval_ttl_seconds:number plan_requires_credential:boolean structured_run_output_enabled:boolean created_at:iso updated_at:iso",
);
