import type { Organization, Project } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { inTransaction } from "../store/index.ts";

/** Creates a project in an organization, audited, in one transaction (both API surfaces). */
export function createProject(services: Services, actor: AuthenticatedPrincipal, organization: Organization, name: string): Promise<Project> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const created = await stores.projects.create({ organizationId: organization.id, name, createdAt: now });
    await stores.audit.recordAction({ organizationId: organization.id, actorId: actor.id, createdAt: now }, "project.created", ["projects", created.id], { name: created.name });
    return created;
  });
}
