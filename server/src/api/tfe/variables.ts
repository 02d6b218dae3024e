import { DomainError } from "../../domain/errors.ts";
import type { WorkspaceVariable } from "../../domain/records.ts";
import type { RequestContext } from "../../http/app.ts";
import { createVariable, deleteVariable, updateVariable } from "../../commands/variables.ts";
import { notFound, principalOf } from "../authorize.ts";
import { loadWorkspace } from "../lookup.ts";
import { presentVariable } from "./presenters.ts";
import { paginate } from "./query.ts";
import type { H } from "./types.ts";

async function loadVariable(ctx: RequestContext, workspaceId: string, variableId: string): Promise<WorkspaceVariable> {
  const variable = await ctx.services.stores.variables.getById(variableId);
  if (!variable || variable.workspaceId !== workspaceId) throw notFound(`Variable ${variableId}`);
  return variable;
}

/**
 * Workspace variables: the same records, commands, permissions, audit events and validation as
 * /v1's (commands/variables.ts), so a variable written through one API is the other's too.
 */
export const variableHandlers = {
  async listVariables({ path, query, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:read");
    const variables = await ctx.services.stores.variables.listByWorkspace(workspace.id);
    const { data, meta } = paginate(variables, query["page[number]"], query["page[size]"]);
    return { status: 200, body: { data: data.map(presentVariable), meta } };
  },

  async createVariable({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const a = body.data.attributes;
    const variable = await createVariable(ctx.services, principalOf(ctx), workspace, {
      key: a.key,
      // go-tfe omits an empty value.
      value: a.value ?? "",
      category: a.category,
      hcl: a.hcl ?? false,
      sensitive: a.sensitive ?? false,
      description: a.description,
    });
    return { status: 201, body: { data: presentVariable(variable) } };
  },

  async getVariable({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:read");
    return { status: 200, body: { data: presentVariable(await loadVariable(ctx, workspace.id, path.variable_id)) } };
  },

  async updateVariable({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const variable = await loadVariable(ctx, workspace.id, path.variable_id);
    if (body.data?.id !== undefined && body.data.id !== variable.id) {
      throw new DomainError("DOCUMENT_INVALID", "data.id does not match the variable in the path.", {
        source: { pointer: "/data/id" },
      });
    }
    const a = body.data?.attributes ?? {};
    const updated = await updateVariable(ctx.services, principalOf(ctx), workspace, variable, {
      key: a.key,
      value: a.value,
      category: a.category,
      hcl: a.hcl,
      sensitive: a.sensitive,
      description: a.description,
    });
    return { status: 200, body: { data: presentVariable(updated) } };
  },

  async deleteVariable({ path, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const variable = await loadVariable(ctx, workspace.id, path.variable_id);
    await deleteVariable(ctx.services, principalOf(ctx), workspace, variable);
    return { status: 204, body: undefined };
  },
} satisfies Partial<H>;
