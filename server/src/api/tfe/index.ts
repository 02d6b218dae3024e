import type { Handlers } from "../../../../generated/tfe/handlers.gen.ts";
import { operations } from "../../../../generated/tfe/operations.gen.ts";
import { DomainError } from "../../domain/errors.ts";
import { DESTROY_FORBIDDEN_DETAIL } from "../../domain/run.ts";
import type { RequestContext, SurfaceBinding } from "../../http/app.ts";
import { authorize, notFound, principalOf } from "../authorize.ts";
import { createRun } from "../../commands/runs.ts";
import { createWorkspace, resolveOpenTofuVersion, setStructuredRunOutput, updateWorkspaceSettings } from "../../commands/workspaces.ts";
import { inTransaction } from "../../store/index.ts";
import { organizationHandlers } from "./organizations.ts";
import { projectHandlers } from "./projects.ts";
import { planJsonHandlers } from "./plan-json.ts";
import { runHandlers } from "./runs.ts";
import { loadOrganization, loadProjectForNewWorkspace, loadWorkspace } from "../lookup.ts";
import { loadOrganizationForCli, runMaySee } from "./access.ts";
import { renderTfeError } from "./errors.ts";
import { presentRun } from "./presenters.ts";
import { stateHandlers } from "./state.ts";
import { variableHandlers } from "./variables.ts";
import { refuseFixedWorkspaceSettings, workspaceResource, workspaceResources, workspaceTagHandlers } from "./workspaces.ts";

/** The API version the CLI requires (≥ 2.5 for the `cloud` block). */
export const TFP_API_VERSION = "2.5";

/**
 * The Terraform Enterprise release StackShip answers as (`vYYYYMM-N`): the first one whose CLI
 * runs render structured run output (OpenTofu's internal/cloud shouldRenderStructuredRunOutput).
 */
export const TFE_VERSION = "v202302-1";

/** The compatibility handlers; `satisfies` makes a missing operation a compile error. */
export const tfeHandlers = {
  async getDiscovery() {
    const base = "/api/v2/";
    return { status: 200, body: { "tfe.v2": base, "tfe.v2.1": base, "tfe.v2.2": base, "state.v2": base } };
  },

  async ping() {
    // X-TFE-Version (no TFP-AppName: the CLI takes StackShip for an Enterprise server) is what
    // makes the CLI honour a run's `structured-run-output-enabled` (a release from 2023-02 on);
    // the plan and apply logs of such a run are `-json` UI lines (api/tfe/logs.ts).
    return { status: 204, body: undefined, headers: { "TFP-API-Version": TFP_API_VERSION, "X-TFE-Version": TFE_VERSION } };
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

  async getWorkspaceByName({ path, query, ctx }) {
    const organization = await loadOrganizationForCli(ctx, path.organization_name);
    const workspace = await ctx.services.stores.workspaces.getByName(organization.id, path.workspace_name);
    if (!workspace) throw notFound(`Workspace '${path.workspace_name}'`);
    if (!runMaySee(ctx, workspace)) {
      authorize(ctx, "workspace:read", { organizationId: organization.id, projectId: workspace.projectId, workspaceId: workspace.id }, `Workspace '${workspace.name}'`);
    }
    const { data, included } = await workspaceResources(ctx, [workspace], query.include, organization.name);
    return { status: 200, body: included ? { data: data[0]!, included } : { data: data[0]! } };
  },

  async createWorkspace({ path, body, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "workspace:read");
    const project = await loadProjectForNewWorkspace(ctx, organization, body.data.relationships?.project?.data?.id);
    const a = body.data.attributes;
    refuseFixedWorkspaceSettings(a);
    const workspace = await createWorkspace(ctx.services, principalOf(ctx), organization, project, {
      name: a.name,
      description: a.description,
      workingDirectory: a["working-directory"],
      opentofuVersion: a["terraform-version"],
      structuredRunOutputEnabled: a["structured-run-output-enabled"],
      tags: body.data.relationships?.tags?.data.map((tag) => tag.attributes.name),
    });
    return { status: 201, body: { data: await workspaceResource(ctx, workspace, organization.name) } };
  },

  async createRun({ body, ctx }) {
    const workspaceId = body.data.relationships.workspace.data?.id;
    if (!workspaceId) throw new DomainError("DOCUMENT_INVALID", "The run needs a workspace relationship.", { source: { pointer: "/data/relationships/workspace" } });
    const workspace = await loadWorkspace(ctx, workspaceId, "run:create");
    const a = body.data.attributes ?? {};
    // `tofu destroy -auto-approve` sends both flags; the destroy refusal is the one that helps.
    if (a["is-destroy"] !== undefined && a["is-destroy"] !== false) throw new DomainError("RUN_DESTROY_FORBIDDEN", DESTROY_FORBIDDEN_DETAIL);
    refuseUnsupportedRunOptions(a);
    // The CLI never sends plan-only: a speculative configuration version (`tofu plan` without
    // -out) is its only signal of a plan-only run. createRun checks the version itself.
    const configurationVersionId = body.data.relationships["configuration-version"]?.data?.id;
    const configurationVersion = configurationVersionId ? await ctx.services.stores.configurationVersions.getById(configurationVersionId) : undefined;
    const speculative = a["plan-only"] === true || (configurationVersion?.workspaceId === workspace.id && configurationVersion.speculative);
    const run = await createRun(ctx.services, principalOf(ctx), workspace, {
      kind: speculative ? "speculative" : "plan_and_apply",
      message: a.message,
      autoApply: a["auto-apply"],
      isDestroy: a["is-destroy"],
      configurationVersionId,
      source: "cli",
      runVariables: a.variables,
      allowConfigGeneration: a["allow-config-generation"] === true,
    });
    return { status: 201, body: { data: presentRun(run, principalOf(ctx)) } };
  },

  async updateWorkspace({ path, body, ctx }) {
    let workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const a = body?.data?.attributes ?? {};
    refuseFixedWorkspaceSettings(a);
    workspace = await updateWorkspaceSettings(ctx.services, principalOf(ctx), workspace, {
      name: a.name,
      description: a.description,
      workingDirectory: a["working-directory"],
    });
    const structured = a["structured-run-output-enabled"];
    if (structured !== undefined) workspace = await setStructuredRunOutput(ctx.services, principalOf(ctx), workspace, structured);
    const requested = a["terraform-version"];
    if (requested !== undefined) {
      // The CLI PATCHes its own version right after creating a workspace and only warns on a
      // failure: a version this deployment provides becomes the pin, anything else keeps it.
      let resolved: string | undefined;
      try {
        resolved = resolveOpenTofuVersion(requested, ctx.services.opentofuVersions);
      } catch {
        resolved = undefined;
      }
      if (resolved !== undefined && resolved !== workspace.opentofuVersion) {
        const now = ctx.services.clock();
        const actor = principalOf(ctx);
        const before = workspace.opentofuVersion;
        workspace = await inTransaction(ctx.services.db, async (stores) => {
          const updated = await stores.workspaces.updateOpentofuVersion(workspace.id, resolved, now);
          if (!updated) throw notFound(`Workspace ${workspace.id}`);
          await stores.audit.record({
            organizationId: workspace.organizationId,
            actorId: actor.id,
            action: "workspace.opentofu_version_changed",
            targetType: "workspaces",
            targetId: workspace.id,
            data: { from: before, to: resolved, requested },
            createdAt: now,
          });
          return updated;
        });
      }
    }
    return { status: 200, body: { data: await workspaceResource(ctx, workspace) } };
  },

  ...organizationHandlers,
  ...runHandlers,
  ...planJsonHandlers,
  ...projectHandlers,
  ...stateHandlers,
  ...variableHandlers,
  ...workspaceTagHandlers,
} satisfies Handlers<RequestContext>;

/**
 * Run options StackShip cannot honour yet are refused rather than silently dropped: a plan
 * without the user's targets or replacements would not be the plan they asked for.
 */
function refuseUnsupportedRunOptions(a: { "target-addrs"?: unknown[]; "replace-addrs"?: unknown[]; "refresh-only"?: boolean; refresh?: boolean }): void {
  const refuse = (what: string, pointer: string) =>
    new DomainError("DOCUMENT_INVALID", `StackShip does not support ${what} on runs from the CLI yet. Run the command again without it.`, {
      source: { pointer: `/data/attributes/${pointer}` },
    });
  if (a["target-addrs"] !== undefined && a["target-addrs"].length > 0) throw refuse("-target", "target-addrs");
  if (a["replace-addrs"] !== undefined && a["replace-addrs"].length > 0) throw refuse("-replace", "replace-addrs");
  if (a["refresh-only"] === true) throw refuse("-refresh-only", "refresh-only");
  if (a.refresh === false) throw refuse("-refresh=false", "refresh");
}

/** The compatibility surface as the app binds it. */
export const tfeSurface: SurfaceBinding = {
  name: "tfe",
  operations,
  handlers: tfeHandlers,
  renderError: renderTfeError,
  prefix: "/api/v2",
};
