import type { VariableCategory } from "../../domain/input-snapshot.ts";
import type { Workspace, WorkspaceVariable } from "../../domain/records.ts";
import type { AuthenticatedPrincipal } from "../../http/principal.ts";
import type { Services } from "../../services.ts";
import { inTransaction } from "../../store/index.ts";

/** What a new variable carries. */
export interface NewVariable {
  key: string;
  value: string;
  category: VariableCategory;
  hcl: boolean;
  sensitive: boolean;
  description?: string;
}

/** Creates a workspace variable; a sensitive value is sealed before it reaches the store. */
export function createVariable(services: Services, actor: AuthenticatedPrincipal, workspace: Workspace, input: NewVariable): Promise<WorkspaceVariable> {
  const now = services.clock();
  const base = { workspaceId: workspace.id, key: input.key, category: input.category, hcl: input.hcl, description: input.description ?? null, createdAt: now };
  return inTransaction(services.db, async (stores) => {
    const variable = input.sensitive
      ? await stores.variables.create({ ...base, sensitive: true, valueCiphertext: services.keys.secrets.sealText(input.value) })
      : await stores.variables.create({ ...base, sensitive: false, value: input.value });
    await stores.audit.record({
      organizationId: workspace.organizationId,
      actorId: actor.id,
      action: "variable.created",
      targetType: "variables",
      targetId: variable.id,
      data: { key: input.key, category: input.category, sensitive: input.sensitive },
      createdAt: now,
    });
    return variable;
  });
}
