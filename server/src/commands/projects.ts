import type { Organization, Project } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { inTransaction } from "../store/index.ts";
import { DomainError } from "../domain/errors.ts";
import { DEFAULT_PROJECT_NAME } from "./organizations.ts";

/** Creates a project in an organization, audited, in one transaction (both API surfaces). */
export function createProject(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
  name: string,
): Promise<Project> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const created = await stores.projects.create({ organizationId: organization.id, name, createdAt: now });
    await stores.audit.recordAction(
      { organizationId: organization.id, actorId: actor.id, createdAt: now },
      "project.created",
      ["projects", created.id],
      { name: created.name },
    );
    return created;
  });
}

/**
 * Renames a project, audited, in one transaction; the same name changes nothing. The Default
 * Project keeps its name: new workspaces without a project go to it by that name.
 */
export function renameProject(
  services: Services,
  actor: AuthenticatedPrincipal,
  project: Project,
  name: string,
): Promise<Project> {
  if (name === project.name) return Promise.resolve(project);
  if (project.name === DEFAULT_PROJECT_NAME) {
    return Promise.reject(
      new DomainError(
        "DOCUMENT_INVALID",
        `The ${DEFAULT_PROJECT_NAME} keeps its name: new workspaces without a project go to it.`,
        {
          source: { pointer: "/data/attributes/name" },
        },
      ),
    );
  }
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const renamed = await stores.projects.rename(project.id, name);
    if (!renamed) return project;
    await stores.audit.recordAction(
      { organizationId: project.organizationId, actorId: actor.id, createdAt: now },
      "project.renamed",
      ["projects", project.id],
      {
        from: project.name,
        to: name,
      },
    );
    return renamed;
  });
}
