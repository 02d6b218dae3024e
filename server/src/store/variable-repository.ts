import { newId } from "../domain/ids.ts";
import type { VariableCategory } from "../domain/input-snapshot.ts";
import type { WorkspaceVariable } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import type { WorkspaceVariableRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { booleanFromRow, isoForWrite, isoFromRow } from "./values.ts";

interface CreateVariableBase {
  id?: string;
  workspaceId: string;
  key: string;
  category: VariableCategory;
  hcl: boolean;
  description?: string | null;
  createdAt: Date | string;
}

/** What creating a variable needs: a plaintext value, or for a sensitive one only its ciphertext. */
export type CreateVariableInput =
  | (CreateVariableBase & { sensitive: false; value: string })
  | (CreateVariableBase & { sensitive: true; valueCiphertext: string });

/** The fields an update replaces (everything but identity and creation time). */
export type VariableFields = CreateVariableInput extends infer T
  ? T extends unknown
    ? Omit<T, "id" | "workspaceId" | "createdAt">
    : never
  : never;

/**
 * The columns of a variable's fields: a sensitive variable as ciphertext only (a stale caller
 * could still pass a plaintext value with sensitive: true; it is never stored).
 */
function fieldColumns(fields: VariableFields) {
  if (fields.sensitive && (fields as { value?: unknown }).value !== undefined) {
    throw new TypeError("a sensitive variable is stored as ciphertext only; do not pass its value");
  }
  return {
    key: fields.key,
    category: fields.category,
    hcl: fields.hcl,
    sensitive: fields.sensitive,
    value: fields.sensitive ? null : fields.value,
    value_ciphertext: fields.sensitive ? fields.valueCiphertext : null,
    description: fields.description ?? null,
  };
}

/** Workspace variables. Sensitive values are stored and returned only as ciphertext. */
export class VariableRepository extends Repository {
  /** Creates a variable; a key taken in the workspace and category throws VARIABLE_KEY_TAKEN. */
  async create(input: CreateVariableInput): Promise<WorkspaceVariable> {
    const row: WorkspaceVariableRow = {
      id: input.id ?? newId("variable"),
      workspace_id: input.workspaceId,
      ...fieldColumns(input),
      created_at: isoForWrite(input.createdAt),
    };
    return translating(this.dialect, async () => {
      await this.db<WorkspaceVariableRow>("workspace_variables").insert(row);
      return toVariable(row);
    });
  }

  /** One variable by id. */
  async getById(id: string): Promise<WorkspaceVariable | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<WorkspaceVariableRow>("workspace_variables").where({ id }).first();
      return row && toVariable(row);
    });
  }

  /**
   * Replaces a variable's fields. A sensitive variable is written as ciphertext only; a new key
   * taken in the workspace and category throws VARIABLE_KEY_TAKEN.
   */
  async update(id: string, next: VariableFields): Promise<WorkspaceVariable | undefined> {
    const columns = fieldColumns(next);
    return translating(this.dialect, async () => {
      await this.db<WorkspaceVariableRow>("workspace_variables").where({ id }).update(columns);
      const row = await this.db<WorkspaceVariableRow>("workspace_variables").where({ id }).first();
      return row && toVariable(row);
    });
  }

  /** Deletes a variable; whether it existed. */
  async delete(id: string): Promise<boolean> {
    return translating(this.dialect, async () => (await this.db("workspace_variables").where({ id }).delete()) > 0);
  }

  /** The workspace's variables by category then key; sensitive ones carry ciphertext for the caller to unseal. */
  async listByWorkspace(workspaceId: string): Promise<WorkspaceVariable[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<WorkspaceVariableRow>("workspace_variables")
        .where({ workspace_id: workspaceId })
        .orderBy([
          { column: "category", order: "asc" },
          { column: "key", order: "asc" },
        ]);
      return rows.map(toVariable);
    });
  }
}

function toVariable(row: WorkspaceVariableRow): WorkspaceVariable {
  const base = {
    id: row.id,
    workspaceId: row.workspace_id,
    key: row.key,
    category: row.category as VariableCategory,
    hcl: booleanFromRow(row.hcl),
    description: row.description,
    createdAt: isoFromRow(row.created_at),
  };
  // The CHECK constraint guarantees exactly one of value / value_ciphertext per sensitivity.
  if (booleanFromRow(row.sensitive)) {
    return { ...base, sensitive: true, value: null, valueCiphertext: row.value_ciphertext ?? "" };
  }
  return { ...base, sensitive: false, value: row.value ?? "", valueCiphertext: null };
}
