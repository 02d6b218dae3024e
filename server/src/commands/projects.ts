import type { Organization, Project } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { DomainError } from "../domain/errors.ts";
import { DEFAULT_PROJECT_NAME } from "./organizations.ts";
import { audited } from "./audited.ts";

/** Creates a project in an organization, audited, in one transaction (both API surfaces). */
export function createProject(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
  name: string,
): Promise<Project> {
  return audited(services, { organizationId: organization.id, actorId: actor.id }, async (stores, record, now) => {
    const created = await stores.projects.create({ organizationId: organization.id, name, createdAt: now });
    await record("project.created", ["projects", created.id], { name: created.name });
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
  return audited(services, { organizationId: project.organizationId, actorId: actor.id }, async (stores, record) => {
    const renamed = await stores.projects.rename(project.id, name);
    if (!renamed) return project;
    await record("project.renamed", ["projects", project.id], {
      from: project.name,
      to: name,
    });
    return renamed;
  });
}
