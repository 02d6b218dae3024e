import type { Handlers } from "../../../../generated/tfe/handlers.gen.ts";
import { operations } from "../../../../generated/tfe/operations.gen.ts";
import { DomainError } from "../../domain/errors.ts";
import { DESTROY_FORBIDDEN_DETAIL } from "../../domain/run.ts";
import type { RequestContext, SurfaceBinding } from "../../http/app.ts";
import { authorize, notFound, principalOf } from "../authorize.ts";
import { DEFAULT_PROJECT_NAME } from "../commands/organizations.ts";
import { createRun } from "../commands/runs.ts";
import { createWorkspace } from "../commands/workspaces.ts";
import { loadOrganization, loadWorkspace } from "../lookup.ts";
import { loadOrganizationForCli, runMaySee } from "./access.ts";
import { renderTfeError } from "./errors.ts";
import { presentRun, presentWorkspace } from "./presenters.ts";
import { stateHandlers } from "./state.ts";

/** The API version the CLI requires (≥ 2.5 for the `cloud` block). */
export const TFP_API_VERSION = "2.5";

/** The compatibility handlers; `satisfies` makes a missing operation a compile error. */
export const tfeHandlers = {
  async getDiscovery() {
    const base = "/api/v2/";
    return { status: 200, body: { "tfe.v2": base, "tfe.v2.1": base, "tfe.v2.2": base, "state.v2": base } };
  },

  async ping() {
    // NOTE: no TFP-AppName and no X-TFE-Version: structured run output must stay off.
    return { status: 204, body: undefined, headers: { "TFP-API-Version": TFP_API_VERSION } };
  },

  async getEntitlementSet({ path, ctx }) {
    const organization = await loadOrganizationForCli(ctx, path.organization_name);
    return {
      status: 200,
      body: {
        data: {
          type: "entitlement-sets",
          id: organization.id,
          attributes: { operations: true, "state-storage": true, "private-module-registry": false, sentinel: false, teams: false, "vcs-integrations": false },
        },
      },
    };
  },

  async getWorkspaceByName({ path, ctx }) {
    const organization = await loadOrganizationForCli(ctx, path.organization_name);
    const workspace = await ctx.services.stores.workspaces.getByName(organization.id, path.workspace_name);
    if (!workspace) throw notFound(`Workspace '${path.workspace_name}'`);
    if (!runMaySee(ctx, workspace)) {
      authorize(ctx, "workspace:read", { organizationId: organization.id, projectId: workspace.projectId, workspaceId: workspace.id }, `Workspace '${workspace.name}'`);
    }
    const lock = await ctx.services.stores.workspaceLocks.current(workspace.id);
    return { status: 200, body: { data: presentWorkspace(workspace, organization.name, principalOf(ctx), lock) } };
  },

  async createWorkspace({ path, body, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "workspace:read");
    const projectId = body.data.relationships?.project?.data?.id;
    const project = projectId
      ? await ctx.services.stores.projects.getById(projectId)
      : await ctx.services.stores.projects.getByName(organization.id, DEFAULT_PROJECT_NAME);
    if (!project || project.organizationId !== organization.id) throw notFound(`Project ${projectId ?? DEFAULT_PROJECT_NAME}`);
    authorize(ctx, "workspace:write", { organizationId: organization.id, projectId: project.id }, `Project ${project.name}`);
    const a = body.data.attributes;
    const workspace = await createWorkspace(ctx.services, principalOf(ctx), organization, project, {
      name: a.name,
      description: a.description,
      workingDirectory: a["working-directory"],
      opentofuVersion: a["terraform-version"],
    });
    return { status: 201, body: { data: presentWorkspace(workspace, organization.name, principalOf(ctx), undefined) } };
  },

  async createRun({ body, ctx }) {
    const workspaceId = body.data.relationships.workspace.data?.id;
    if (!workspaceId) throw new DomainError("DOCUMENT_INVALID", "The run needs a workspace relationship.", { source: { pointer: "/data/relationships/workspace" } });
    const workspace = await loadWorkspace(ctx, workspaceId, "run:create");
    const a = body.data.attributes ?? {};
    // `tofu destroy -auto-approve` sends both flags; the destroy refusal is the one that helps.
    if (a["is-destroy"] !== undefined && a["is-destroy"] !== false) throw new DomainError("RUN_DESTROY_FORBIDDEN", DESTROY_FORBIDDEN_DETAIL);
    const run = await createRun(ctx.services, principalOf(ctx), workspace, {
      kind: a["plan-only"] === true ? "speculative" : "plan_and_apply",
      message: a.message,
      autoApply: a["auto-apply"],
      isDestroy: a["is-destroy"],
      configurationVersionId: body.data.relationships["configuration-version"]?.data?.id,
      source: "tfe-api",
    });
    return { status: 201, body: { data: presentRun(run) } };
  },

  ...stateHandlers,
} satisfies Handlers<RequestContext>;

/** The compatibility surface as the app binds it. */
export const tfeSurface: SurfaceBinding = {
  name: "tfe",
  operations,
  handlers: tfeHandlers,
  renderError: renderTfeError,
  prefix: "/api/v2",
};
