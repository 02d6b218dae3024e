import type { Project } from "../../domain/records.ts";
import { DomainError } from "../../domain/errors.ts";
import { createProject, renameProject } from "../../commands/projects.ts";
import { authorize, notFound, principalOf } from "../authorize.ts";
import { loadOrganization } from "../lookup.ts";
import { paginate } from "./query.ts";
import type { H, S } from "./types.ts";

function presentProject(project: Project, organizationName: string): S["Project"] {
  return {
    type: "projects",
    id: project.id,
    attributes: { name: project.name, "created-at": project.createdAt },
    relationships: { organization: { data: { type: "organizations", id: organizationName } } },
  };
}

/** Projects, enough for a `project` in the `cloud` block (contract §5.2). */
export const projectHandlers = {
  async listProjects({ path, query, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "workspace:read");
    const names = query["filter[names]"]
      ?.split(",")
      .map((name) => name.trim())
      .filter((name) => name.length > 0);
    const all = await ctx.services.stores.projects.listByOrganization(organization.id);
    const text = query.q?.toLowerCase();
    const matching = all.filter(
      (project) =>
        (!names || names.length === 0 || names.includes(project.name)) &&
        (!text || project.name.toLowerCase().includes(text)),
    );
    const { data, meta } = paginate(matching, query["page[number]"], query["page[size]"]);
    return { status: 200, body: { data: data.map((project) => presentProject(project, organization.name)), meta } };
  },

  async getProject({ path, ctx }) {
    const project = await ctx.services.stores.projects.getById(path.project_id);
    const what = `Project ${path.project_id}`;
    if (!project) throw notFound(what);
    authorize(ctx, "workspace:read", { organizationId: project.organizationId, projectId: project.id }, what);
    const organization = await ctx.services.stores.organizations.getById(project.organizationId);
    if (!organization) throw notFound(what);
    return { status: 200, body: { data: presentProject(project, organization.name) } };
  },

  async updateProject({ path, body, ctx }) {
    const found = await ctx.services.stores.projects.getById(path.project_id);
    const what = `Project ${path.project_id}`;
    if (!found) throw notFound(what);
    authorize(ctx, "org:admin", { organizationId: found.organizationId, projectId: found.id }, what);
    const organization = await ctx.services.stores.organizations.getById(found.organizationId);
    if (!organization) throw notFound(what);
    const a = body.data.attributes ?? {};
    refuseDescription(a.description);
    const project = a.name === undefined ? found : await renameProject(ctx.services, principalOf(ctx), found, a.name);
    return { status: 200, body: { data: presentProject(project, organization.name) } };
  },

  async createProject({ path, body, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    refuseDescription(body.data.attributes.description);
    const project = await createProject(ctx.services, principalOf(ctx), organization, body.data.attributes.name);
    return { status: 201, body: { data: presentProject(project, organization.name) } };
  },
} satisfies Partial<H>;

/** Projects keep no description: an empty one (or none) is accepted, anything else refused, never dropped. */
function refuseDescription(description: string | null | undefined): void {
  if (description !== undefined && description !== null && description !== "") {
    throw new DomainError(
      "DOCUMENT_INVALID",
      "StackShip projects keep no description; send an empty description or leave it out.",
      {
        source: { pointer: "/data/attributes/description" },
      },
    );
  }
}
