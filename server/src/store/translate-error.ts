import { DomainError, type ErrorCode } from "../domain/errors.ts";
import { AUTO_APPLY_FORBIDDEN_DETAIL, DESTROY_FORBIDDEN_DETAIL } from "../domain/run.ts";
import type { Dialect } from "./dialect.ts";

interface Translation {
  code: ErrorCode;
  detail: string;
}

const CHECK_CONSTRAINTS: Record<string, Translation> = {
  runs_auto_apply_false: { code: "RUN_AUTO_APPLY_FORBIDDEN", detail: AUTO_APPLY_FORBIDDEN_DETAIL },
  runs_is_destroy_false: { code: "RUN_DESTROY_FORBIDDEN", detail: DESTROY_FORBIDDEN_DETAIL },
};

const UNIQUE_CONSTRAINTS: Record<string, Translation> = {
  organizations_name_unique: {
    code: "ORGANIZATION_NAME_TAKEN",
    detail: "An organization with this name already exists.",
  },
  projects_organization_id_name_unique: {
    code: "PROJECT_NAME_TAKEN",
    detail: "A project with this name already exists in the organization.",
  },
  workspaces_organization_id_name_unique: {
    code: "WORKSPACE_NAME_TAKEN",
    detail: "A workspace with this name already exists in the organization.",
  },
  workspace_variables_workspace_id_category_key_unique: {
    code: "VARIABLE_KEY_TAKEN",
    detail: "The workspace already has a variable with this key in this category.",
  },
  users_email_unique: { code: "USER_EMAIL_TAKEN", detail: "A user with this email already exists." },
  memberships_user_scope_unique: {
    code: "MEMBERSHIP_EXISTS",
    detail: "The user already has a role at this scope; memberships are not replaced implicitly.",
  },
  federation_profiles_workspace_name_unique: {
    code: "FEDERATION_PROFILE_NAME_TAKEN",
    detail: "The workspace already has a federation profile with this name.",
  },
};

// SQLite names the columns of a failed unique constraint, not the index; these are the
// column lists of the unique indexes above, as its message spells them.
const SQLITE_UNIQUE_COLUMNS: Record<string, string> = {
  "organizations.name": "organizations_name_unique",
  "projects.organization_id, projects.name": "projects_organization_id_name_unique",
  "workspaces.organization_id, workspaces.name": "workspaces_organization_id_name_unique",
  "workspace_variables.workspace_id, workspace_variables.category, workspace_variables.key":
    "workspace_variables_workspace_id_category_key_unique",
  "users.email": "users_email_unique",
  "memberships.user_id, memberships.scope_kind, memberships.scope_id": "memberships_user_scope_unique",
  "federation_profiles.workspace_id, federation_profiles.name": "federation_profiles_workspace_name_unique",
};

const GENERIC_DETAIL = "The change conflicts with existing data or violates a data rule.";

interface DriverError {
  code?: unknown;
  constraint?: unknown;
  message?: unknown;
}

/** Turns a driver error into a DomainError when it is a constraint violation; otherwise returns it unchanged. */
export function translateError(dialect: Dialect, error: unknown): unknown {
  if (error instanceof DomainError) return error;
  return dialect === "sqlite" ? translateSqliteError(error) : translatePostgresError(error);
}

/**
 * better-sqlite3: codes `SQLITE_CONSTRAINT_*`; the message (which knex prefixes with the SQL)
 * ends with `CHECK constraint failed: <name>` or `UNIQUE constraint failed: <table.col, …>`.
 */
export function translateSqliteError(error: unknown): unknown {
  if (!isObject(error) || typeof error.code !== "string" || !error.code.startsWith("SQLITE_CONSTRAINT")) return error;
  const message = typeof error.message === "string" ? error.message : "";
  if (error.code === "SQLITE_CONSTRAINT_CHECK") {
    const name = /CHECK constraint failed: (\w+)/.exec(message)?.[1];
    return build((name && CHECK_CONSTRAINTS[name]) || undefined, error);
  }
  if (error.code === "SQLITE_CONSTRAINT_UNIQUE") {
    const columns = /UNIQUE constraint failed: (.+)$/.exec(message)?.[1]?.trim();
    const name = columns === undefined ? undefined : SQLITE_UNIQUE_COLUMNS[columns];
    return build(name === undefined ? undefined : UNIQUE_CONSTRAINTS[name], error);
  }
  // NOTE: SQLite does not say which foreign key failed (`FOREIGN KEY constraint failed`), and
  // reports primary key, NOT NULL and foreign key violations only by code; all of these become
  // CONSTRAINT_VIOLATION.
  return build(undefined, error);
}

/** node-postgres: SQLSTATE class 23 (integrity constraint violation), with `constraint` naming the constraint. */
export function translatePostgresError(error: unknown): unknown {
  if (!isObject(error) || typeof error.code !== "string" || !error.code.startsWith("23")) return error;
  const name = typeof error.constraint === "string" ? error.constraint : undefined;
  if (error.code === "23514" && name !== undefined) return build(CHECK_CONSTRAINTS[name], error);
  if (error.code === "23505" && name !== undefined) return build(UNIQUE_CONSTRAINTS[name], error);
  // NOTE: 23502 (not null) carries a column rather than a constraint; 23503 (foreign key) and
  // any other class-23 error carry names we do not map; all become CONSTRAINT_VIOLATION.
  return build(undefined, error);
}

/** Runs a query and rethrows its failure translated for the dialect. */
export async function translating<T>(dialect: Dialect, query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (error) {
    throw translateError(dialect, error);
  }
}

function build(translation: Translation | undefined, cause: unknown): DomainError {
  const { code, detail } = translation ?? { code: "CONSTRAINT_VIOLATION" as const, detail: GENERIC_DETAIL };
  return new DomainError(code, detail, { cause });
}

function isObject(value: unknown): value is DriverError {
  return typeof value === "object" && value !== null;
}
