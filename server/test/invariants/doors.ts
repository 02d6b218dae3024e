// Shared set-up for the invariant tests: a workspace that can run, a template of a valid run (so
// every refused attempt differs from an accepted one in exactly one field), and the checks that
// a refusal left the database as it was.
import type { Knex } from "knex";
import * as assert from "uvu/assert";
import { createRun, type Run } from "../../../client/src/index.ts";
import { DomainError, isDomainError, type ErrorCode } from "../../src/domain/errors.ts";
import { newId } from "../../src/domain/ids.ts";
import type { CreateRunInput } from "../../src/store/index.ts";
import { translateError } from "../../src/store/translate-error.ts";
import { countRows, WRITE_TABLES } from "../support/database.ts";
import { createOrganizationWithToken, createWorkspace, uploadConfiguration } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import type { TestServer } from "../support/test-server.ts";

/** The tables an attempted run creation must leave untouched: those of any refused request, and the run's attempts. */
export const RUN_TABLES = [...WRITE_TABLES, "run_attempts"] as const;

/** A workspace with an uploaded configuration and one accepted run to copy from. */
export interface Runnable {
  organizationName: string;
  token: string;
  workspaceId: string;
  configurationVersionId: string;
  acceptedRun: Run;
  /** A valid repository input (the accepted run's, under a fresh id). */
  repositoryInput(): CreateRunInput;
  /** A valid raw `runs` row (the accepted run's, under a fresh id). */
  rawRow(): Promise<Record<string, unknown>>;
}

/** Creates an organization, a workspace, an uploaded configuration and one accepted run. */
export async function seedRunnable(server: TestServer): Promise<Runnable> {
  const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
  const workspace = await createWorkspace(server, token, organizationName, { name: "networking" });
  const { configurationVersion } = await uploadConfiguration(server, token, workspace.id);
  const acceptedRun = expectStatus(
    await createRun({
      client: server.v1(token),
      path: { workspace_id: workspace.id },
      body: { data: { type: "runs" } },
    }),
    201,
  ).data;
  const stored = await server.services.stores.runs.getById(acceptedRun.id);
  assert.ok(stored);
  const { organizationId, projectId, workspaceId, configurationVersionId, inputSnapshotId, kind } = stored;
  const { configDigest, inputDigest, opentofuVersion, executionRegion, platform } = stored;
  return {
    organizationName,
    token,
    workspaceId: workspace.id,
    configurationVersionId: configurationVersion.id,
    acceptedRun,
    repositoryInput: () => ({
      organizationId,
      projectId,
      workspaceId,
      configurationVersionId,
      inputSnapshotId,
      kind,
      configDigest,
      inputDigest,
      opentofuVersion,
      executionRegion,
      platform,
      id: newId("run"),
      message: "repository door",
      source: "api",
      createdBy: null,
      createdAt: new Date(Date.parse("2026-12-02T10:00:00.000Z")),
    }),
    rawRow: async () => ({
      ...(await server.db.knex("runs").where({ id: acceptedRun.id }).first<Record<string, unknown>>()),
      id: newId("run"),
      message: "raw door",
    }),
  };
}

/** Runs `attempt`, expects it to reject, and checks that no run-related row appeared. */
export async function refusedWithoutWrites(
  server: TestServer,
  label: string,
  attempt: () => Promise<unknown>,
): Promise<unknown> {
  const before = await countRows(server, RUN_TABLES);
  let outcome: { error: unknown } | { value: unknown };
  try {
    outcome = { value: await attempt() };
  } catch (error) {
    outcome = { error };
  }
  assert.equal(await countRows(server, RUN_TABLES), before, `${label}: the attempt wrote rows`);
  if ("value" in outcome) assert.unreachable(`${label}: the attempt was accepted: ${JSON.stringify(outcome.value)}`);
  return (outcome as { error: unknown }).error;
}

/** Asserts a DomainError with the code (the repository door). */
export function expectDomainError(error: unknown, code: ErrorCode, label: string): void {
  assert.ok(error instanceof DomainError, `${label}: not a DomainError: ${String(error)}`);
  assert.ok(isDomainError(error, code), `${label}: ${error.code} instead of ${code}`);
}

/** Asserts that the store's translation of a raw driver error is a DomainError with the code. */
export function expectTranslated(server: TestServer, error: unknown, code: ErrorCode, label: string): void {
  assert.not.ok(error instanceof DomainError, `${label}: a raw driver error was expected`);
  expectDomainError(translateError(server.dialect, error), code, `${label} (translated)`);
}

/** Asserts that a raw driver error is a constraint violation the store translates to some DomainError. */
export function expectConstraintRefusal(server: TestServer, error: unknown, label: string): void {
  const translated = translateError(server.dialect, error);
  assert.ok(translated instanceof DomainError, `${label}: not a constraint violation: ${String(error)}`);
}

/** A raw `insert into runs (…) values (…)` with `literal` spliced in as the SQL text of `column`. */
export function rawInsertWithLiteral(
  server: TestServer,
  row: Record<string, unknown>,
  column: string,
  literal: string,
) {
  const columns = Object.keys(row).filter((name) => name !== column);
  const identifiers = [...columns, column].map(() => "??").join(", ");
  const values = [...columns.map(() => "?"), literal].join(", ");
  return server.db.knex.raw(`insert into runs (${identifiers}) values (${values})`, [
    ...columns,
    column,
    ...columns.map((name) => row[name] as Knex.Value),
  ]);
}

/** Whether the named CHECK constraint is part of the runs table on this database. */
export async function hasCheckConstraint(server: TestServer, name: string): Promise<boolean> {
  if (server.dialect === "sqlite") {
    const row = await server.db
      .knex("sqlite_master")
      .where({ type: "table", name: "runs" })
      .first<{ sql: unknown } | undefined>("sql");
    return typeof row?.sql === "string" && row.sql.includes(name);
  }
  const rows = await server.db.knex.raw<{ rows: unknown[] }>(
    "select conname from pg_constraint where conrelid = 'runs'::regclass and contype = 'c' and conname = ?",
    [name],
  );
  return rows.rows.length === 1;
}
