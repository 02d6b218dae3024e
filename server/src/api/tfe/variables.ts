import { createVariable, updateVariable } from "../../commands/variables.ts";
import { variableDeletionHandler } from "../variables.ts";
import { principalOf } from "../authorize.ts";
import { loadVariable, loadWorkspace, refuseOtherId } from "../lookup.ts";
import { presentVariable } from "./presenters.ts";
import { paginate } from "./query.ts";
import type { H } from "./types.ts";

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
    const { variable } = await loadVariable(ctx, path, "workspace:read");
    return { status: 200, body: { data: presentVariable(variable) } };
  },

  async updateVariable({ path, body, ctx }) {
    const { workspace, variable } = await loadVariable(ctx, path, "workspace:write");
    refuseOtherId(body.data?.id, variable.id, "the variable");
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

  ...variableDeletionHandler,
} satisfies Partial<H>;
