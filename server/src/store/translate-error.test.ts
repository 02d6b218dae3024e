import { suite } from "uvu";
import * as assert from "uvu/assert";
import { DomainError } from "../domain/errors.ts";
import { translateError, translatePostgresError, translateSqliteError } from "./translate-error.ts";

function sqliteError(code: string, message: string): Error & { code: string } {
  // knex prefixes the driver message with the SQL.
  return Object.assign(new Error(`insert into \`t\` values (?) - ${message}`), { code });
}

function postgresError(code: string, constraint?: string): Error & { code: string; constraint?: string } {
  return Object.assign(new Error('insert into "t" - violates'), { code, constraint });
}

function codeOf(value: unknown): string {
  assert.instance(value, DomainError);
  return (value as DomainError).code;
}

const sqlite = suite("translateSqliteError");

sqlite("maps the run CHECK constraints to their codes", () => {
  assert.is(
    codeOf(
      translateSqliteError(sqliteError("SQLITE_CONSTRAINT_CHECK", "CHECK constraint failed: runs_auto_apply_false")),
    ),
    "RUN_AUTO_APPLY_FORBIDDEN",
  );
  assert.is(
    codeOf(
      translateSqliteError(sqliteError("SQLITE_CONSTRAINT_CHECK", "CHECK constraint failed: runs_is_destroy_false")),
    ),
    "RUN_DESTROY_FORBIDDEN",
  );
  assert.is(
    codeOf(translateSqliteError(sqliteError("SQLITE_CONSTRAINT_CHECK", "CHECK constraint failed: runs_kind_check"))),
    "CONSTRAINT_VIOLATION",
  );
  // A name that merely starts like a known one is not that constraint.
  assert.is(
    codeOf(
      translateSqliteError(sqliteError("SQLITE_CONSTRAINT_CHECK", "CHECK constraint failed: runs_auto_apply_false_v2")),
    ),
    "CONSTRAINT_VIOLATION",
  );
});

sqlite("maps unique violations by their column list", () => {
  const cases: Array<[string, string]> = [
    ["organizations.name", "ORGANIZATION_NAME_TAKEN"],
    ["projects.organization_id, projects.name", "PROJECT_NAME_TAKEN"],
    ["workspaces.organization_id, workspaces.name", "WORKSPACE_NAME_TAKEN"],
    ["workspace_variables.workspace_id, workspace_variables.category, workspace_variables.key", "VARIABLE_KEY_TAKEN"],
    ["api_tokens.token_hash", "CONSTRAINT_VIOLATION"],
    ["organizations.id", "CONSTRAINT_VIOLATION"],
  ];
  for (const [columns, code] of cases) {
    assert.is(
      codeOf(translateSqliteError(sqliteError("SQLITE_CONSTRAINT_UNIQUE", `UNIQUE constraint failed: ${columns}`))),
      code,
      columns,
    );
  }
  assert.is(
    codeOf(
      translateSqliteError(sqliteError("SQLITE_CONSTRAINT_PRIMARYKEY", "UNIQUE constraint failed: organizations.name")),
    ),
    "CONSTRAINT_VIOLATION",
  );
});

sqlite("maps other constraint failures to CONSTRAINT_VIOLATION and keeps the cause", () => {
  for (const code of [
    "SQLITE_CONSTRAINT_FOREIGNKEY",
    "SQLITE_CONSTRAINT_NOTNULL",
    "SQLITE_CONSTRAINT_PRIMARYKEY",
    "SQLITE_CONSTRAINT",
  ]) {
    const original = sqliteError(code, "constraint failed");
    const translated = translateSqliteError(original) as DomainError;
    assert.is(codeOf(translated), "CONSTRAINT_VIOLATION", code);
    assert.is(translated.cause, original);
    assert.is(translated.kind, "conflict");
  }
});

sqlite("returns anything else unchanged", () => {
  const busy = sqliteError("SQLITE_BUSY", "database is locked");
  assert.is(translateSqliteError(busy), busy);
  const plain = new Error("boom");
  assert.is(translateSqliteError(plain), plain);
  assert.is(translateSqliteError("text"), "text");
  assert.is(translateSqliteError(undefined), undefined);
  // A Postgres error seen by the SQLite translator is not a SQLite constraint error.
  const pg = postgresError("23505", "organizations_name_unique");
  assert.is(translateSqliteError(pg), pg);
});

const postgres = suite("translatePostgresError");

postgres("maps the run CHECK constraints and the unique names to their codes", () => {
  const cases: Array<[string, string, string]> = [
    ["23514", "runs_auto_apply_false", "RUN_AUTO_APPLY_FORBIDDEN"],
    ["23514", "runs_is_destroy_false", "RUN_DESTROY_FORBIDDEN"],
    ["23514", "workspace_variables_sensitive_value_check", "CONSTRAINT_VIOLATION"],
    ["23505", "organizations_name_unique", "ORGANIZATION_NAME_TAKEN"],
    ["23505", "projects_organization_id_name_unique", "PROJECT_NAME_TAKEN"],
    ["23505", "workspaces_organization_id_name_unique", "WORKSPACE_NAME_TAKEN"],
    ["23505", "workspace_variables_workspace_id_category_key_unique", "VARIABLE_KEY_TAKEN"],
    ["23505", "organizations_pkey", "CONSTRAINT_VIOLATION"],
    ["23503", "projects_organization_id_foreign", "CONSTRAINT_VIOLATION"],
  ];
  for (const [code, constraint, expected] of cases) {
    assert.is(codeOf(translatePostgresError(postgresError(code, constraint))), expected, constraint);
  }
  // A CHECK code does not borrow a unique mapping, nor the reverse.
  assert.is(
    codeOf(translatePostgresError(postgresError("23514", "organizations_name_unique"))),
    "CONSTRAINT_VIOLATION",
  );
  assert.is(codeOf(translatePostgresError(postgresError("23505", "runs_auto_apply_false"))), "CONSTRAINT_VIOLATION");
});

postgres("maps class-23 errors without a constraint name to CONSTRAINT_VIOLATION", () => {
  assert.is(codeOf(translatePostgresError(postgresError("23502"))), "CONSTRAINT_VIOLATION");
  assert.is(codeOf(translatePostgresError(postgresError("23P01"))), "CONSTRAINT_VIOLATION");
});

postgres("returns anything else unchanged", () => {
  for (const code of ["40001", "57014", "42P01", "08006"]) {
    const error = postgresError(code);
    assert.is(translatePostgresError(error), error, code);
  }
  const sqliteCheck = sqliteError("SQLITE_CONSTRAINT_CHECK", "CHECK constraint failed: runs_auto_apply_false");
  assert.is(translatePostgresError(sqliteCheck), sqliteCheck);
});

const dispatch = suite("translateError");

dispatch("dispatches by dialect and passes DomainErrors through", () => {
  assert.is(
    codeOf(
      translateError(
        "sqlite",
        sqliteError("SQLITE_CONSTRAINT_CHECK", "CHECK constraint failed: runs_is_destroy_false"),
      ),
    ),
    "RUN_DESTROY_FORBIDDEN",
  );
  assert.is(
    codeOf(translateError("postgres", postgresError("23514", "runs_is_destroy_false"))),
    "RUN_DESTROY_FORBIDDEN",
  );
  const domain = new DomainError("NOT_FOUND", "x");
  assert.is(translateError("sqlite", domain), domain);
  assert.is(translateError("postgres", domain), domain);
});

sqlite.run();
postgres.run();
dispatch.run();
