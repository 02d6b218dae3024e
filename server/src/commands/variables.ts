import { DomainError } from "../domain/errors.ts";
import type { VariableCategory } from "../domain/input-snapshot.ts";
import type { Workspace, WorkspaceVariable } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { audited } from "./audited.ts";

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
export function createVariable(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  input: NewVariable,
): Promise<WorkspaceVariable> {
  const now = services.clock();
  const base = {
    workspaceId: workspace.id,
    key: input.key,
    category: input.category,
    hcl: input.hcl,
    description: input.description ?? null,
    createdAt: now,
  };
  return audited(
    services,
    { organizationId: workspace.organizationId, actorId: actor.id, at: now },
    async (stores, record) => {
      const variable = input.sensitive
        ? await stores.variables.create({
            ...base,
            sensitive: true,
            valueCiphertext: services.keys.secrets.sealText(input.value),
          })
        : await stores.variables.create({ ...base, sensitive: false, value: input.value });
      await record("variable.created", ["variables", variable.id], {
        key: input.key,
        category: input.category,
        sensitive: input.sensitive,
      });
      return variable;
    },
  );
}

/** The members an update may change; absent ones keep their value. */
export type VariableChanges = Partial<NewVariable>;

/**
 * Updates a variable. Making a sensitive variable non-sensitive is refused (its value was never
 * shown and must not become readable); a sensitive value not sent stays sealed as it was.
 */
export function updateVariable(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  current: WorkspaceVariable,
  changes: VariableChanges,
): Promise<WorkspaceVariable> {
  if (current.sensitive && changes.sensitive === false) {
    throw new DomainError(
      "VARIABLE_SENSITIVITY_IRREVERSIBLE",
      `Variable ${current.key} is sensitive and stays so. Delete it and create a new one instead.`,
      {
        source: { pointer: "/data/attributes/sensitive" },
      },
    );
  }
  const sensitive = changes.sensitive ?? current.sensitive;
  const base = {
    key: changes.key ?? current.key,
    category: changes.category ?? current.category,
    hcl: changes.hcl ?? current.hcl,
    description: changes.description ?? current.description,
  };
  return audited(services, { organizationId: workspace.organizationId, actorId: actor.id }, async (stores, record) => {
    const next = sensitive
      ? {
          ...base,
          sensitive: true as const,
          valueCiphertext:
            changes.value !== undefined
              ? services.keys.secrets.sealText(changes.value)
              : current.sensitive
                ? current.valueCiphertext
                : services.keys.secrets.sealText(current.value),
        }
      : { ...base, sensitive: false as const, value: changes.value ?? (current.value as string) };
    const updated = await stores.variables.update(current.id, next);
    if (!updated) throw new DomainError("NOT_FOUND", `Variable ${current.id} does not exist.`);
    await record("variable.updated", ["variables", current.id], {
      key: updated.key,
      category: updated.category,
      sensitive: updated.sensitive,
      value_changed: changes.value !== undefined,
    });
    return updated;
  });
}

/** Deletes a variable, audited. Existing input snapshots are immutable and keep it. */
export function deleteVariable(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  variable: WorkspaceVariable,
): Promise<void> {
  return audited(services, { organizationId: workspace.organizationId, actorId: actor.id }, async (stores, record) => {
    await stores.variables.delete(variable.id);
    await record("variable.deleted", ["variables", variable.id], { key: variable.key, category: variable.category });
  });
}
