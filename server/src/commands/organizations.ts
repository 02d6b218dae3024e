import type { Organization, Project } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { inTransaction, type Stores } from "../store/index.ts";

/** The project every new organization starts with, as in HCP Terraform. */
export const DEFAULT_PROJECT_NAME = "Default Project";

/** Creates an organization with its Default Project, audited, in one transaction. */
export function createOrganization(
  services: Services,
  actor: AuthenticatedPrincipal,
  name: string,
): Promise<{ organization: Organization; defaultProject: Project }> {
  const now = services.clock();
  return inTransaction(services.db, (stores) => createOrganizationIn(stores, actor.id, name, now));
}

/** The organization, its Default Project and the audit event, in the caller's transaction. */
export async function createOrganizationIn(
  stores: Stores,
  actorId: string,
  name: string,
  now: Date,
): Promise<{ organization: Organization; defaultProject: Project }> {
  const organization = await stores.organizations.create({ name, createdAt: now });
  const defaultProject = await stores.projects.create({
    organizationId: organization.id,
    name: DEFAULT_PROJECT_NAME,
    createdAt: now,
  });
  await stores.audit.record({
    organizationId: organization.id,
    actorId,
    action: "organization.created",
    targetType: "organizations",
    targetId: organization.id,
    data: { name },
    createdAt: now,
  });
  return { organization, defaultProject };
}
