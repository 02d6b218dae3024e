// Shared arrange and assert helpers of the state and lock suites (state-locks.test.ts,
// state-publication.test.ts): an organization with a workspace, runs as the runner sees them,
// state files and their create bodies, and the checks that a refusal changed nothing.
import { createHash } from "node:crypto";
import * as assert from "uvu/assert";
import { createRun as v1CreateRun } from "../../../client/src/index.ts";
import { createStateVersion, downloadStateVersion } from "../../../generated/tfe/client/index.ts";
import * as tfeValidators from "../../../generated/tfe/validators.gen.js";
import { mintRunToken } from "../../src/commands/run-tokens.ts";
import { confirmStatePublication, type StatePublication } from "../../src/commands/state-versions.ts";
import { lockWorkspaceForRun } from "../../src/commands/workspace-locks.ts";
import type { Run } from "../../src/domain/records.ts";
import type { StateVersion } from "../../src/store/index.ts";
import { countRows } from "../support/database.ts";
import { createOrganizationWithToken, createWorkspace, putUpload, uploadConfiguration } from "../support/factories.ts";
import { expectStatus, expectTfeError, type SdkResult, type TfeErrorObject } from "../support/responses.ts";
import { type TestServer } from "../support/test-server.ts";

export const MINUTE = 60_000;
/** The tables a refused state or lock request must leave as they were. */
export const STATE_TABLES = ["state_versions", "workspace_locks", "workspace_lock_fences", "run_tokens"] as const;

// ---------------------------------------------------------------------------------------------
// Fixtures

export interface Fixture {
  organizationName: string;
  organizationId: string;
  /** An organization admin's API token. */
  token: string;
  workspaceId: string;
  workspaceName: string;
}

export async function setUp(server: TestServer, name = "acme"): Promise<Fixture> {
  const { organizationName, organizationId, token } = await createOrganizationWithToken(server, name, "admin");
  const workspace = await createWorkspace(server, token, organizationName, { name: "networking" });
  await uploadConfiguration(server, token, workspace.id);
  return {
    organizationName,
    organizationId,
    token,
    workspaceId: workspace.id,
    workspaceName: workspace.attributes.name,
  };
}

/** A run of the workspace, created through v1, as the runner sees it. */
export async function newRun(
  server: TestServer,
  f: Fixture,
  kind: "plan_and_apply" | "speculative" = "plan_and_apply",
): Promise<Run> {
  const created = await v1CreateRun({
    client: server.v1(f.token),
    path: { workspace_id: f.workspaceId },
    body: { data: { type: "runs", attributes: { kind } } },
  });
  const id = expectStatus(created, 201).data.id;
  return (await server.services.stores.runs.getById(id))!;
}

/** What the runner does before an apply: take the lock, then mint the apply-phase token under its fence. */
export async function startApply(server: TestServer, run: Run): Promise<{ fence: number; secret: string }> {
  const fence = await lockWorkspaceForRun(server.services, run.workspaceId, run.id);
  const { secret } = await mintRunToken(server.services, run, "apply", 10 * MINUTE);
  return { fence, secret };
}

/** A workspace (setUp) with a run that has started its apply: the lock taken, the apply token minted. */
export async function applyingRun(server: TestServer) {
  const f = await setUp(server);
  const run = await newRun(server, f);
  return { f, run, ...(await startApply(server, run)) };
}

/** A state file as `tofu` writes it (pretty-printed, trailing newline: the bytes must survive exactly). */
export function stateFile(
  serial: number,
  lineage: string,
  outputs: Record<string, { value: unknown; type: unknown; sensitive?: boolean }> = {},
): Buffer {
  return Buffer.from(
    `${JSON.stringify({ version: 4, terraform_version: "1.10.6", serial, lineage, outputs, resources: [], check_results: null }, null, 2)}\n`,
  );
}

export function hex(algorithm: "md5" | "sha256", bytes: Uint8Array): string {
  return createHash(algorithm).update(bytes).digest("hex");
}

export function base64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64");
}

/** The create document go-tfe sends (relationship `run` only when TFE_RUN_ID is set). */
export function createBody(
  bytes: Buffer,
  serial: number,
  lineage: string,
  options: { runId?: string; outputs?: unknown; force?: boolean } = {},
) {
  return {
    data: {
      type: "state-versions" as const,
      attributes: {
        serial,
        md5: hex("md5", bytes),
        lineage,
        force: options.force ?? false,
        "json-state-outputs": base64Json(options.outputs ?? {}),
      },
      ...(options.runId ? { relationships: { run: { data: { type: "runs", id: options.runId } } } } : {}),
    },
  };
}

export function createWith(
  server: TestServer,
  secret: string | undefined,
  workspaceId: string,
  bytes: Buffer,
  serial: number,
  lineage: string,
  options: Parameters<typeof createBody>[3] = {},
) {
  return createStateVersion({
    client: server.tfe(secret),
    path: { workspace_id: workspaceId },
    body: createBody(bytes, serial, lineage, options),
  });
}

/** createWith on behalf of run `runId`, expected to answer 201: the created state version. */
export async function createdWith(
  server: TestServer,
  secret: string,
  workspaceId: string,
  runId: string,
  bytes: Buffer,
  serial: number,
  lineage: string,
) {
  return expectStatus(await createWith(server, secret, workspaceId, bytes, serial, lineage, { runId }), 201).data;
}

/** Creates a state version with the run token and PUTs the state and JSON state as the CLI does; returns the pending version. */
export async function writeState(
  server: TestServer,
  secret: string,
  run: Run,
  bytes: Buffer,
  serial: number,
  lineage: string,
  outputs?: unknown,
) {
  const created = expectStatus(
    await createWith(server, secret, run.workspaceId, bytes, serial, lineage, { runId: run.id, outputs }),
    201,
  ).data;
  const [state, json] = await Promise.all([
    putUpload(created.attributes["hosted-state-upload-url"]!, bytes),
    putUpload(created.attributes["hosted-json-state-upload-url"]!, Buffer.from('{"format_version":"1.0"}')),
  ]);
  assert.is(state.status, 204, await state.text());
  assert.is(json.status, 204, await json.text());
  return created;
}

export function publication(
  run: Run,
  stateVersionId: string,
  bytes: Buffer,
  serial: number,
  lineage: string,
  fence: number,
): StatePublication {
  return { runId: run.id, stateVersionId, serial, lineage, sha256: hex("sha256", bytes), fence };
}

export async function publishState(
  server: TestServer,
  run: Run,
  secret: string,
  fence: number,
  bytes: Buffer,
  serial: number,
  lineage: string,
  outputs?: unknown,
): Promise<StateVersion> {
  const created = await writeState(server, secret, run, bytes, serial, lineage, outputs);
  return confirmStatePublication(server.services, publication(run, created.id, bytes, serial, lineage, fence));
}

export async function downloadBytes(server: TestServer, secret: string | undefined, id: string) {
  const result = await downloadStateVersion({
    client: server.tfe(secret),
    path: { state_version_id: id },
    parseAs: "arrayBuffer",
  });
  return { result, bytes: result.data ? Buffer.from(result.data as unknown as ArrayBuffer) : undefined };
}

/** A 409 of the compatibility surface with a stable code. */
export function expectConflict(result: SdkResult, code: string, title: string): TfeErrorObject {
  const error = expectTfeError(result, 409, title);
  assert.is(error.code, code, error.detail);
  return error;
}

/** Snapshot of everything a refusal must leave unchanged: state rows, the lock, the current state. */
export async function stateSnapshot(server: TestServer, workspaceId: string) {
  const rows = await Promise.all(
    STATE_TABLES.map((table) =>
      server.db
        .knex(table)
        .select("*")
        .orderBy(table === "workspace_locks" || table === "workspace_lock_fences" ? "workspace_id" : "id"),
    ),
  );
  return {
    rows: JSON.parse(JSON.stringify(rows)) as unknown,
    counts: await countRows(server, [...STATE_TABLES, "audit_events"]),
    current: (await server.services.stores.stateVersions.current(workspaceId))?.id ?? null,
  };
}

export async function expectUnchanged<T>(server: TestServer, workspaceId: string, act: () => Promise<T>): Promise<T> {
  const before = await stateSnapshot(server, workspaceId);
  const result = await act();
  assert.equal(
    await stateSnapshot(server, workspaceId),
    before,
    "a refused request changed state, locks, tokens or the audit trail",
  );
  return result;
}

export function validWorkspaceDocument(result: SdkResult): {
  data: { id: string; attributes: { locked: boolean; permissions: Record<string, boolean> } };
} {
  assert.is(result.response.status, 200, JSON.stringify(result.error));
  assert.is(result.response.headers.get("content-type")?.split(";")[0], "application/vnd.api+json");
  assert.ok(result.data, "a lock action must answer with the workspace document, never an empty body");
  assert.ok(tfeValidators.WorkspaceDocument(result.data), JSON.stringify(tfeValidators.WorkspaceDocument.errors));
  return result.data as ReturnType<typeof validWorkspaceDocument>;
}

/** The body the CLI sends with `POST …/actions/lock`: a JSON:API document whose type is empty. */
export const CLI_LOCK_BODY = { data: { type: "", attributes: { reason: "Locked by OpenTofu" } } };
