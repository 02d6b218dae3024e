import { deleteSourceConnection, putSourceConnection } from "../../commands/source-connections.ts";
import { receiveWebhook } from "../../commands/github-webhooks.ts";
import type { Workspace } from "../../domain/records.ts";
import type { RequestContext } from "../../http/app.ts";
import type { GitHubDelivery, GitHubInstallation, SourceConnection } from "../../store/index.ts";
import { principalOf } from "../authorize.ts";
import { loadOrganization, loadWorkspace } from "../lookup.ts";
import {
  bindInstallation,
  createInstallationState,
  isOrganizationAdmin,
  releaseInstallation,
} from "../../commands/github-installations.ts";
import type { H, S } from "./types.ts";

/** How many deliveries the source document lists. */
export const SOURCE_RECENT_DELIVERIES = 20;

/** The v1 delivery resource (never its payload). */
export function presentDelivery(delivery: GitHubDelivery): S["GitHubDelivery"] {
  return {
    type: "github-deliveries",
    id: delivery.id,
    attributes: {
      event: delivery.event,
      action: delivery.action,
      repository: delivery.repository,
      installation_id: delivery.installationId,
      status: delivery.status,
      outcome: delivery.outcome,
      detail: delivery.detail,
      attempts: delivery.attempts,
      run_ids: delivery.runIds,
      received_at: delivery.receivedAt,
      processed_at: delivery.processedAt,
    },
  };
}

function repositoryAccess(
  connection: SourceConnection,
  installation: GitHubInstallation | undefined,
): "granted" | "not_granted" | "unknown" {
  if (!installation) return "unknown";
  if (installation.deleted || installation.suspended) return "not_granted";
  if (installation.repositorySelection === "all") return "granted";
  return installation.repositories.includes(connection.repository.toLowerCase()) ? "granted" : "not_granted";
}

async function sourceDocument(
  ctx: RequestContext,
  workspace: Workspace,
  connection: SourceConnection | undefined,
): Promise<S["SourceConnectionDocument"]> {
  const settings = ctx.services.config.github;
  // The App id and the API URL are deployment details: administrators only.
  const admin = isOrganizationAdmin(principalOf(ctx), workspace.organizationId);
  const on = settings.state === "on";
  const pipeline: S["SourcePipeline"] = {
    state: settings.state,
    detail: on
      ? admin
        ? `The GitHub App ${settings.appId} is configured (API ${settings.apiUrl}).`
        : "The GitHub App is configured."
      : settings.detail,
    webhook_url: `${ctx.baseUrl}/v1/github/webhooks`,
    app_id: on && admin ? settings.appId : null,
    api_url: on && admin ? settings.apiUrl : null,
  };
  if (!connection) return { data: null, meta: { pipeline, deliveries: [] } };
  const [installation, binding] = await Promise.all([
    ctx.services.stores.github.getInstallation(connection.installationId),
    ctx.services.stores.github.getBinding(connection.installationId),
  ]);
  // Only deliveries through the connection's own installation, while it is this organization's, and
  // since it became this organization's (an installation moved here shows nothing of its past owner's).
  const deliveries =
    binding?.organizationId === workspace.organizationId && connection.organizationId === workspace.organizationId
      ? await ctx.services.stores.github.recentDeliveries(
          connection.repository,
          connection.installationId,
          binding.boundAt,
          SOURCE_RECENT_DELIVERIES,
        )
      : [];
  return {
    data: {
      type: "source-connections",
      id: workspace.id,
      attributes: {
        provider: "github",
        installation_id: connection.installationId,
        repository: connection.repository,
        tracked_branch: workspace.trackedBranch,
        working_directory: workspace.workingDirectory,
        trigger_paths: connection.triggerPaths,
        repository_access: repositoryAccess(connection, installation),
        created_at: connection.createdAt,
        updated_at: connection.updatedAt,
      },
      relationships: { workspace: { data: { type: "workspaces", id: workspace.id } } },
      links: { self: `/v1/workspaces/${workspace.id}/source` },
    },
    meta: { pipeline, deliveries: deliveries.map(presentDelivery) },
  };
}

/** The GitHub webhook and the workspace source connection. */
export const githubHandlers = {
  async receiveGithubWebhook({ body, ctx }) {
    const { delivery, created } = await receiveWebhook(ctx.services, ctx.headers, body);
    return { status: created ? 202 : 200, body: { data: presentDelivery(delivery) } };
  },

  async getWorkspaceSource({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:read");
    const connection = await ctx.services.stores.github.getConnection(workspace.id);
    return { status: 200, body: await sourceDocument(ctx, workspace, connection) };
  },

  async createGithubInstallationState({ path, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    const issued = await createInstallationState(ctx.services, principalOf(ctx), organization);
    return {
      status: 201,
      body: {
        data: {
          type: "github-installation-states",
          id: issued.id,
          attributes: {
            state: issued.state,
            organization: organization.name,
            expires_at: issued.expiresAt,
            install_url: issued.installUrl,
          },
        },
      },
    };
  },

  async bindGithubInstallation({ body, ctx }) {
    const a = body.data.attributes;
    const { binding, created, organization } = await bindInstallation(ctx.services, principalOf(ctx), {
      installationId: a.installation_id,
      state: a.state,
      organizationName: a.organization,
    });
    return {
      status: created ? 201 : 200,
      body: {
        data: {
          type: "github-installations",
          id: String(binding.installationId),
          attributes: {
            installation_id: binding.installationId,
            organization: organization.name,
            account: binding.account,
            bound_at: binding.boundAt,
          },
        },
      },
    };
  },

  async releaseGithubInstallation({ path, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    await releaseInstallation(ctx.services, principalOf(ctx), organization, Number(path.installation_id));
    return { status: 204, body: undefined };
  },

  async putWorkspaceSource({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const a = body.data.attributes;
    const stored = await putSourceConnection(ctx.services, principalOf(ctx), workspace, {
      installationId: a.installation_id,
      repository: a.repository,
      trackedBranch: a.tracked_branch,
      workingDirectory: a.working_directory,
      triggerPaths: a.trigger_paths,
    });
    return { status: 200, body: await sourceDocument(ctx, stored.workspace, stored.connection) };
  },

  async deleteWorkspaceSource({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    await deleteSourceConnection(ctx.services, principalOf(ctx), workspace);
    return { status: 204, body: undefined };
  },
} satisfies Partial<H>;
