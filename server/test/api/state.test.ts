import { createHash } from "node:crypto";
import { storedArtifactKeys, storedObject } from "../support/artifacts.ts";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  createConfigurationVersion as v1CreateConfigurationVersion,
  createOrganizationToken as v1CreateOrganizationToken,
  createRun as v1CreateRun,
  createVariable as v1CreateVariable,
  createWorkspace as v1CreateWorkspace,
  getOrganization as v1GetOrganization,
  getRun as v1GetRun,
  getWorkspace as v1GetWorkspace,
  listWorkspaces as v1ListWorkspaces,
} from "../../../client/src/index.ts";
import {
  createRun as tfeCreateRun,
  createStateVersion,
  downloadStateVersion,
  forceUnlockWorkspace,
  getCurrentStateVersion,
  getEntitlementSet,
  getStateVersion,
  getStateVersionOutput,
  getWorkspace,
  getWorkspaceByName,
  listCurrentStateVersionOutputs,
  lockWorkspace,
  unlockWorkspace,
} from "../../../generated/tfe/client/index.ts";
import * as tfeValidators from "../../../generated/tfe/validators.gen.js";
import { mintRunToken, revokeRunTokens } from "../../src/commands/run-tokens.ts";
import { confirmStatePublication, listPendingStateVersions, type StatePublication } from "../../src/commands/state-versions.ts";
import { lockWorkspaceForRun, unlockWorkspaceForRun } from "../../src/commands/workspace-locks.ts";
import { isDomainError } from "../../src/domain/errors.ts";
import type { Run } from "../../src/domain/records.ts";
import type { StateVersion } from "../../src/store/index.ts";
import {
  countRows,
  createOrganizationWithToken,
  createToken,
  createWorkspace,
  databaseText,
  expectStatus,
  expectTfeError,
  putUpload,
  rejection,
  uploadConfiguration,
  type SdkResult,
  type TfeErrorObject,
} from "../support/factories.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const MINUTE = 60_000;
/** The tables a refused state or lock request must leave as they were. */
const STATE_TABLES = ["state_versions", "workspace_locks", "workspace_lock_fences", "run_tokens"] as const;

// ---------------------------------------------------------------------------------------------
// Fixtures

interface Fixture {
  organizationName: string;
  organizationId: string;
  /** An organization admin's API token. */
  token: string;
  workspaceId: string;
  workspaceName: string;
}

async function setUp(server: TestServer, name = "acme"): Promise<Fixture> {
  const { organizationName, organizationId, token } = await createOrganizationWithToken(server, name, "admin");
  const workspace = await createWorkspace(server, token, organizationName, { name: "networking" });
  await uploadConfiguration(server, token, workspace.id);
  return { organizationName, organizationId, token, workspaceId: workspace.id, workspaceName: workspace.attributes.name };
}

/** A run of the workspace, created through v1, as the runner sees it. */
async function newRun(server: TestServer, f: Fixture, kind: "plan_and_apply" | "speculative" = "plan_and_apply"): Promise<Run> {
  const created = await v1CreateRun({ client: server.v1(f.token), path: { workspace_id: f.workspaceId }, body: { data: { type: "runs", attributes: { kind } } } });
  const id = expectStatus(created, 201)!.data.id;
  return (await server.services.stores.runs.getById(id))!;
}

/** What the runner does before an apply: take the lock, then mint the apply-phase token under its fence. */
async function startApply(server: TestServer, run: Run): Promise<{ fence: number; secret: string }> {
  const fence = await lockWorkspaceForRun(server.services, run.workspaceId, run.id);
  const { secret } = await mintRunToken(server.services, run, "apply", 10 * MINUTE);
  return { fence, secret };
}

/** A state file as `tofu` writes it (pretty-printed, trailing newline: the bytes must survive exactly). */
function stateFile(serial: number, lineage: string, outputs: Record<string, { value: unknown; type: unknown; sensitive?: boolean }> = {}): Buffer {
  return Buffer.from(`${JSON.stringify({ version: 4, terraform_version: "1.10.6", serial, lineage, outputs, resources: [], check_results: null }, null, 2)}\n`);
}

function hex(algorithm: "md5" | "sha256", bytes: Uint8Array): string {
  return createHash(algorithm).update(bytes).digest("hex");
}

function base64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64");
}

/** The create document go-tfe sends (relationship `run` only when TFE_RUN_ID is set). */
function createBody(bytes: Buffer, serial: number, lineage: string, options: { runId?: string; outputs?: unknown; force?: boolean } = {}) {
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

function createWith(server: TestServer, secret: string | undefined, workspaceId: string, bytes: Buffer, serial: number, lineage: string, options: Parameters<typeof createBody>[3] = {}) {
  return createStateVersion({ client: server.tfe(secret), path: { workspace_id: workspaceId }, body: createBody(bytes, serial, lineage, options) });
}

/** Creates a state version with the run token and PUTs the state and JSON state as the CLI does; returns the pending version. */
async function writeState(server: TestServer, secret: string, run: Run, bytes: Buffer, serial: number, lineage: string, outputs?: unknown) {
  const created = expectStatus(await createWith(server, secret, run.workspaceId, bytes, serial, lineage, { runId: run.id, outputs }), 201)!.data;
  const [state, json] = await Promise.all([
    putUpload(created.attributes["hosted-state-upload-url"]!, bytes),
    putUpload(created.attributes["hosted-json-state-upload-url"]!, Buffer.from('{"format_version":"1.0"}')),
  ]);
  assert.is(state.status, 204, await state.text());
  assert.is(json.status, 204, await json.text());
  return created;
}

function publication(run: Run, stateVersionId: string, bytes: Buffer, serial: number, lineage: string, fence: number): StatePublication {
  return { runId: run.id, stateVersionId, serial, lineage, sha256: hex("sha256", bytes), fence };
}

async function publishState(server: TestServer, run: Run, secret: string, fence: number, bytes: Buffer, serial: number, lineage: string, outputs?: unknown): Promise<StateVersion> {
  const created = await writeState(server, secret, run, bytes, serial, lineage, outputs);
  return confirmStatePublication(server.services, publication(run, created.id, bytes, serial, lineage, fence));
}

async function downloadBytes(server: TestServer, secret: string | undefined, id: string) {
  const result = await downloadStateVersion({ client: server.tfe(secret), path: { state_version_id: id }, parseAs: "arrayBuffer" });
  return { result, bytes: result.data ? Buffer.from(result.data as unknown as ArrayBuffer) : undefined };
}

/** A 409 of the compatibility surface with a stable code. */
function expectConflict(result: SdkResult, code: string, title: string): TfeErrorObject {
  const error = expectTfeError(result, 409, title);
  assert.is(error.code, code, error.detail);
  return error;
}

/** Snapshot of everything a refusal must leave unchanged: state rows, the lock, the current state. */
async function stateSnapshot(server: TestServer, workspaceId: string) {
  const rows = await Promise.all(STATE_TABLES.map((table) => server.db.knex(table).select("*").orderBy(table === "workspace_locks" || table === "workspace_lock_fences" ? "workspace_id" : "id")));
  return {
    rows: JSON.parse(JSON.stringify(rows)) as unknown,
    counts: await countRows(server, [...STATE_TABLES, "audit_events"]),
    current: (await server.services.stores.stateVersions.current(workspaceId))?.id ?? null,
  };
}

async function expectUnchanged<T>(server: TestServer, workspaceId: string, act: () => Promise<T>): Promise<T> {
  const before = await stateSnapshot(server, workspaceId);
  const result = await act();
  assert.equal(await stateSnapshot(server, workspaceId), before, "a refused request changed state, locks, tokens or the audit trail");
  return result;
}

function validWorkspaceDocument(result: SdkResult): { data: { id: string; attributes: { locked: boolean; permissions: Record<string, boolean> } } } {
  assert.is(result.response.status, 200, JSON.stringify(result.error));
  assert.is(result.response.headers.get("content-type")?.split(";")[0], "application/vnd.api+json");
  assert.ok(result.data, "a lock action must answer with the workspace document, never an empty body");
  assert.ok(tfeValidators.WorkspaceDocument(result.data), JSON.stringify(tfeValidators.WorkspaceDocument.errors));
  return result.data as ReturnType<typeof validWorkspaceDocument>;
}

/** The body the CLI sends with `POST …/actions/lock`: a JSON:API document whose type is empty. */
const CLI_LOCK_BODY = { data: { type: "", attributes: { reason: "Locked by OpenTofu" } } };

// ---------------------------------------------------------------------------------------------
const locks = suite("workspace lock through /api/v2 (API tokens)");

testEachServer(locks, "lock, unlock and force-unlock answer 200 with the workspace document; locked shows on both workspace reads", async (server) => {
  const f = await setUp(server);
  const client = server.tfe(f.token);
  const path = { workspace_id: f.workspaceId };
  assert.is(validWorkspaceDocument(await getWorkspace({ client, path })).data.attributes.locked, false);

  // The CLI's exact request: Content-Type JSON:API, a body whose type is "".
  const locked = validWorkspaceDocument(await lockWorkspace({ client, path, body: CLI_LOCK_BODY as never }));
  assert.is(locked.data.id, f.workspaceId);
  assert.is(locked.data.attributes.locked, true);
  const byId = validWorkspaceDocument(await getWorkspace({ client, path }));
  assert.is(byId.data.attributes.locked, true);
  const byName = expectStatus(await getWorkspaceByName({ client, path: { organization_name: f.organizationName, workspace_name: f.workspaceName } }), 200)!;
  assert.is(byName.data.attributes.locked, true);
  const lock = await server.services.stores.workspaceLocks.current(f.workspaceId);
  assert.equal({ kind: lock?.holder.kind, reason: lock?.reason, fence: lock?.fence }, { kind: "user", reason: "Locked by OpenTofu", fence: 1 });

  const unlocked = validWorkspaceDocument(await unlockWorkspace({ client, path }));
  assert.is(unlocked.data.attributes.locked, false);
  assert.is(await server.services.stores.workspaceLocks.current(f.workspaceId), undefined);

  // An empty lock body is accepted too; the next acquisition has a larger fence.
  const raw = await fetch(`${server.baseUrl}/api/v2/workspaces/${f.workspaceId}/actions/lock`, {
    method: "POST",
    headers: { Authorization: `Bearer ${f.token}`, "Content-Type": "application/vnd.api+json", Accept: "application/vnd.api+json" },
  });
  assert.is(raw.status, 200);
  assert.ok(tfeValidators.WorkspaceDocument(await raw.json()));
  assert.is((await server.services.stores.workspaceLocks.current(f.workspaceId))?.fence, 2);

  const forced = validWorkspaceDocument(await forceUnlockWorkspace({ client, path }));
  assert.is(forced.data.attributes.locked, false);
  const events = (await server.services.stores.audit.listByOrganization(f.organizationId)).map((e) => e.action);
  assert.equal(events.filter((a) => /^workspace\.(force_)?(un)?locked$/.test(a)), ["workspace.locked", "workspace.unlocked", "workspace.locked", "workspace.force_unlocked"]);
});

testEachServer(locks, "fails 409 with the text the CLI matches: locked by someone (also the caller), locked by User, already unlocked; nothing changes", async (server) => {
  const f = await setUp(server);
  const other = await createToken(server, f.token, f.organizationName, "admin");
  const path = { workspace_id: f.workspaceId };
  validWorkspaceDocument(await lockWorkspace({ client: server.tfe(f.token), path, body: CLI_LOCK_BODY as never }));

  await expectUnchanged(server, f.workspaceId, async () => {
    const again = expectConflict(await lockWorkspace({ client: server.tfe(f.token), path, body: CLI_LOCK_BODY as never }), "WORKSPACE_LOCKED", "Workspace is locked");
    assert.match(again.detail!, /is locked by User prn-/);
    expectConflict(await lockWorkspace({ client: server.tfe(other.token), path }), "WORKSPACE_LOCKED", "Workspace is locked");
    const foreign = expectConflict(await unlockWorkspace({ client: server.tfe(other.token), path }), "WORKSPACE_LOCKED", "Workspace is locked");
    assert.match(foreign.detail!, /is locked by User prn-/);
  });

  validWorkspaceDocument(await unlockWorkspace({ client: server.tfe(f.token), path }));
  await expectUnchanged(server, f.workspaceId, async () => {
    const unlock = expectConflict(await unlockWorkspace({ client: server.tfe(f.token), path }), "WORKSPACE_NOT_LOCKED", "Workspace is not locked");
    assert.match(unlock.detail!, /already unlocked/);
    assert.not.match(unlock.detail!, /is locked by/);
    const force = expectConflict(await forceUnlockWorkspace({ client: server.tfe(f.token), path }), "WORKSPACE_NOT_LOCKED", "Workspace is not locked");
    assert.match(force.detail!, /already unlocked/);
  });
});

testEachServer(locks, "permissions: a viewer may not lock, an operator may lock but not force-unlock, another organization sees 404", async (server) => {
  const f = await setUp(server);
  const viewer = await createToken(server, f.token, f.organizationName, "viewer");
  const operator = await createToken(server, f.token, f.organizationName, "operator");
  const stranger = await createOrganizationWithToken(server, "other", "admin");
  const path = { workspace_id: f.workspaceId };
  await expectUnchanged(server, f.workspaceId, async () => {
    expectTfeError(await lockWorkspace({ client: server.tfe(viewer.token), path }), 403, "Permission denied");
    expectTfeError(await lockWorkspace({ client: server.tfe(stranger.token), path }), 404, "not found");
    expectTfeError(await getWorkspace({ client: server.tfe(stranger.token), path }), 404, "not found");
    expectTfeError(await lockWorkspace({ client: server.tfe(), path }), 401, "unauthorized");
  });
  const locked = validWorkspaceDocument(await lockWorkspace({ client: server.tfe(operator.token), path }));
  assert.is(locked.data.attributes.permissions["can-force-unlock"], false);
  await expectUnchanged(server, f.workspaceId, async () => {
    expectTfeError(await forceUnlockWorkspace({ client: server.tfe(operator.token), path }), 403, "Permission denied");
  });
  const admin = validWorkspaceDocument(await getWorkspace({ client: server.tfe(f.token), path }));
  assert.is(admin.data.attributes.permissions["can-force-unlock"], true);
  validWorkspaceDocument(await forceUnlockWorkspace({ client: server.tfe(f.token), path }));
});

testEachServer(locks, "two lock requests at once: exactly one gets the lock (fence 1), the other 409", async (server) => {
  const f = await setUp(server);
  const other = await createToken(server, f.token, f.organizationName, "admin");
  const path = { workspace_id: f.workspaceId };
  const results = await Promise.all([f.token, other.token, f.token, other.token].map((token) => lockWorkspace({ client: server.tfe(token), path, body: CLI_LOCK_BODY as never })));
  assert.equal(results.map((r) => r.response.status).sort(), [200, 409, 409, 409]);
  assert.is((await server.services.stores.workspaceLocks.current(f.workspaceId))?.fence, 1);
  assert.is(await server.services.stores.workspaceLocks.lastFence(f.workspaceId), 1);
});

// ---------------------------------------------------------------------------------------------
const runLocks = suite("the runner's lock and the run token (contract §12.3 (b))");

testEachServer(runLocks, "lockWorkspaceForRun is re-entrant with one fence, fences grow with every acquisition, unlockWorkspaceForRun is idempotent", async (server) => {
  const f = await setUp(server);
  const a = await newRun(server, f);
  const b = await newRun(server, f);
  const fence = await lockWorkspaceForRun(server.services, f.workspaceId, a.id);
  assert.is(fence, 1);
  assert.is(await lockWorkspaceForRun(server.services, f.workspaceId, a.id), 1, "re-entrant: the same fence");
  const refused = await rejection(lockWorkspaceForRun(server.services, f.workspaceId, b.id));
  assert.ok(isDomainError(refused, "WORKSPACE_LOCKED"), String(refused));
  assert.match((refused as Error).message, new RegExp(`is locked by Run ${a.id}`));
  assert.is(await unlockWorkspaceForRun(server.services, f.workspaceId, b.id), false, "b holds nothing");
  assert.is(await unlockWorkspaceForRun(server.services, f.workspaceId, a.id), true);
  assert.is(await unlockWorkspaceForRun(server.services, f.workspaceId, a.id), false, "idempotent");
  assert.is(await lockWorkspaceForRun(server.services, f.workspaceId, b.id), 2);
  assert.is(await unlockWorkspaceForRun(server.services, f.workspaceId, b.id), true);
  assert.is(await lockWorkspaceForRun(server.services, f.workspaceId, a.id), 3);
  const missing = await rejection(lockWorkspaceForRun(server.services, f.workspaceId, "run-0000000000000000"));
  assert.ok(isDomainError(missing, "NOT_FOUND"), String(missing));
});

testEachServer(runLocks, "two runs locking at once: one fence, the other WORKSPACE_LOCKED", async (server) => {
  const f = await setUp(server);
  const runs = await Promise.all([newRun(server, f), newRun(server, f), newRun(server, f)]);
  const outcomes = await Promise.allSettled(runs.map((run) => lockWorkspaceForRun(server.services, f.workspaceId, run.id)));
  const won = outcomes.filter((o) => o.status === "fulfilled");
  assert.is(won.length, 1, JSON.stringify(outcomes));
  assert.is((won[0] as PromiseFulfilledResult<number>).value, 1);
  for (const o of outcomes) if (o.status === "rejected") assert.ok(isDomainError(o.reason, "WORKSPACE_LOCKED"), String(o.reason));
});

testEachServer(runLocks, "the run's own token: lock is re-entrant (200, no new fence) and unlock leaves the run's lock to the runner", async (server) => {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const { fence, secret } = await startApply(server, run);
  const { secret: planSecret } = await mintRunToken(server.services, run, "plan", 10 * MINUTE);
  const path = { workspace_id: f.workspaceId };
  for (const token of [secret, planSecret]) {
    const locked = validWorkspaceDocument(await lockWorkspace({ client: server.tfe(token), path, body: CLI_LOCK_BODY as never }));
    assert.is(locked.data.attributes.locked, true);
    assert.is(locked.data.attributes.permissions["can-lock"], true);
    const unlocked = validWorkspaceDocument(await unlockWorkspace({ client: server.tfe(token), path }));
    assert.is(unlocked.data.attributes.locked, true, "the run keeps its lock until the runner releases it");
  }
  assert.equal(await server.services.stores.workspaceLocks.current(f.workspaceId), { workspaceId: f.workspaceId, holder: { kind: "run", id: run.id }, fence, reason: "Locked by StackShip for a run", lockedAt: (await server.services.stores.workspaceLocks.current(f.workspaceId))!.lockedAt });
  assert.is(await server.services.stores.workspaceLocks.lastFence(f.workspaceId), fence, "no new fence");

  // Others see the CLI's wording for a run's lock.
  await expectUnchanged(server, f.workspaceId, async () => {
    const userLock = expectConflict(await lockWorkspace({ client: server.tfe(f.token), path }), "WORKSPACE_LOCKED", "Workspace is locked");
    assert.match(userLock.detail!, new RegExp(`is locked by Run ${run.id}`));
    const userUnlock = expectConflict(await unlockWorkspace({ client: server.tfe(f.token), path }), "WORKSPACE_LOCKED", "Workspace is locked");
    assert.match(userUnlock.detail!, new RegExp(`is locked by Run ${run.id}`));
    expectTfeError(await forceUnlockWorkspace({ client: server.tfe(secret), path }), 403, "Permission denied");
  });

  // Once the runner released it: the apply token neither takes nor releases a lock, the plan token still passes.
  assert.ok(await unlockWorkspaceForRun(server.services, f.workspaceId, run.id));
  await expectUnchanged(server, f.workspaceId, async () => {
    expectConflict(await lockWorkspace({ client: server.tfe(secret), path, body: CLI_LOCK_BODY as never }), "RUN_TOKEN_LOCK_REQUIRED", "An apply token needs the run to hold the lock");
    expectConflict(await unlockWorkspace({ client: server.tfe(secret), path }), "WORKSPACE_NOT_LOCKED", "Workspace is not locked");
    assert.is(validWorkspaceDocument(await lockWorkspace({ client: server.tfe(planSecret), path })).data.attributes.locked, false, "a plan takes no lock");
    validWorkspaceDocument(await unlockWorkspace({ client: server.tfe(planSecret), path }));
  });
  // A person's lock does not stop a plan token either, and the apply token of another run is told who holds it.
  validWorkspaceDocument(await lockWorkspace({ client: server.tfe(f.token), path }));
  validWorkspaceDocument(await lockWorkspace({ client: server.tfe(planSecret), path }));
  const blocked = expectConflict(await lockWorkspace({ client: server.tfe(secret), path }), "WORKSPACE_LOCKED", "Workspace is locked");
  assert.match(blocked.detail!, /is locked by User prn-/);
});

testEachServer(runLocks, "an apply-phase token needs the run to hold the lock, and a speculative run gets none", async (server) => {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const before = await countRows(server, ["run_tokens"]);
  const unlocked = await rejection(mintRunToken(server.services, run, "apply", MINUTE));
  assert.ok(isDomainError(unlocked, "RUN_TOKEN_LOCK_REQUIRED"), String(unlocked));
  const speculative = await newRun(server, f, "speculative");
  const refused = await rejection(mintRunToken(server.services, speculative, "apply", MINUTE));
  assert.ok(isDomainError(refused, "RUN_TRANSITION_INVALID"), String(refused));
  assert.equal(await countRows(server, ["run_tokens"]), before);
  const { token } = await mintRunToken(server.services, speculative, "plan", MINUTE);
  assert.is(token.fence, null);
});

// ---------------------------------------------------------------------------------------------
const scope = suite("run token scope and lifetime");

testEachServer(scope, "a run token reaches its run's organization and workspace on /api/v2, and on v1 only reads that workspace", async (server) => {
  const f = await setUp(server);
  const sibling = await createWorkspace(server, f.token, f.organizationName, { name: "sibling" });
  const elsewhere = await setUp(server, "elsewhere");
  const run = await newRun(server, f);
  const { secret } = await mintRunToken(server.services, run, "plan", 10 * MINUTE);
  const tfe = server.tfe(secret);
  expectStatus(await getEntitlementSet({ client: tfe, path: { organization_name: f.organizationName } }), 200);
  const shown = expectStatus(await getWorkspaceByName({ client: tfe, path: { organization_name: f.organizationName, workspace_name: f.workspaceName } }), 200)!;
  assert.is(shown.data.id, f.workspaceId);
  assert.is(shown.data.attributes.permissions["can-queue-run"], false);
  validWorkspaceDocument(await getWorkspace({ client: tfe, path: { workspace_id: f.workspaceId } }));
  expectTfeError(await getEntitlementSet({ client: tfe, path: { organization_name: elsewhere.organizationName } }), 404, "not found");
  expectTfeError(await getWorkspaceByName({ client: tfe, path: { organization_name: f.organizationName, workspace_name: "sibling" } }), 404, "not found");
  expectTfeError(await getWorkspace({ client: tfe, path: { workspace_id: sibling.id } }), 404, "not found");
  expectTfeError(await lockWorkspace({ client: tfe, path: { workspace_id: elsewhere.workspaceId } }), 404, "not found");

  const v1 = server.v1(secret);
  expectStatus(await v1GetWorkspace({ client: v1, path: { workspace_id: f.workspaceId } }), 200);
  const refusals: Array<[string, SdkResult]> = [
    ["v1 getWorkspace (sibling)", await v1GetWorkspace({ client: v1, path: { workspace_id: sibling.id } })],
    ["v1 getOrganization", await v1GetOrganization({ client: v1, path: { organization_name: f.organizationName } })],
    ["v1 listWorkspaces", await v1ListWorkspaces({ client: v1, path: { organization_name: f.organizationName } })],
    ["v1 getRun", await v1GetRun({ client: v1, path: { run_id: run.id } })],
    ["v1 createRun", await v1CreateRun({ client: v1, path: { workspace_id: f.workspaceId }, body: { data: { type: "runs" } } })],
    ["v1 createWorkspace", await v1CreateWorkspace({ client: v1, path: { organization_name: f.organizationName }, body: { data: { type: "workspaces", attributes: { name: "x" } } } })],
    ["v1 createConfigurationVersion", await v1CreateConfigurationVersion({ client: v1, path: { workspace_id: f.workspaceId }, body: { data: { type: "configuration-versions" } } })],
    ["v1 createVariable", await v1CreateVariable({ client: v1, path: { workspace_id: f.workspaceId }, body: { data: { type: "variables", attributes: { key: "k", value: "v" } } } })],
    ["v1 createOrganizationToken", await v1CreateOrganizationToken({ client: v1, path: { organization_name: f.organizationName }, body: { data: { type: "tokens", attributes: { role: "admin" } } } })],
    [
      "tfe createRun",
      await tfeCreateRun({
        client: tfe,
        body: { data: { type: "runs", attributes: {}, relationships: { workspace: { data: { type: "workspaces", id: f.workspaceId } } } } },
      }),
    ],
  ];
  for (const [name, result] of refusals) assert.ok([403, 404].includes(result.response.status), `${name} answered ${result.response.status}`);
});

const clock = { now: Date.parse("2026-12-02T12:00:00.000Z") };

testEachServer(
  scope,
  "run tokens expire (401 after the TTL) and revoked ones are refused (401); an unknown run token is 401",
  async (server) => {
    clock.now = Date.parse("2026-12-02T12:00:00.000Z");
    const f = await setUp(server);
    const run = await newRun(server, f);
    const { secret: plan } = await mintRunToken(server.services, run, "plan", 5 * MINUTE);
    const path = { workspace_id: f.workspaceId };
    validWorkspaceDocument(await getWorkspace({ client: server.tfe(plan), path }));
    clock.now += 5 * MINUTE - 1;
    validWorkspaceDocument(await getWorkspace({ client: server.tfe(plan), path }));
    clock.now += 1;
    const expired = expectTfeError(await getWorkspace({ client: server.tfe(plan), path }), 401, "unauthorized");
    assert.match(expired.detail!, /expired/);

    const { fence, secret: apply } = await startApply(server, run);
    validWorkspaceDocument(await getWorkspace({ client: server.tfe(apply), path }));
    assert.is(await revokeRunTokens(server.services, run.id), 2);
    assert.is(await revokeRunTokens(server.services, run.id), 0);
    const revoked = expectTfeError(await getWorkspace({ client: server.tfe(apply), path }), 401, "unauthorized");
    assert.match(revoked.detail!, /revoked/);
    const bytes = stateFile(1, "lineage-a");
    await expectUnchanged(server, f.workspaceId, async () => {
      expectTfeError(await createWith(server, apply, f.workspaceId, bytes, 1, "lineage-a"), 401, "unauthorized");
    });
    expectTfeError(await getWorkspace({ client: server.tfe(`ssr.${"x".repeat(43)}`), path }), 401, "unauthorized");
    assert.is(fence, 1);
  },
  { clock: () => new Date(clock.now) },
);

// ---------------------------------------------------------------------------------------------
const publishing = suite("state publication through /api/v2");

testEachServer(publishing, "no state yet: current-state-version is 404 and current-state-version-outputs is {data: []}", async (server) => {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const { secret } = await mintRunToken(server.services, run, "plan", MINUTE);
  for (const token of [f.token, secret]) {
    expectTfeError(await getCurrentStateVersion({ client: server.tfe(token), path: { workspace_id: f.workspaceId } }), 404, "not found");
    const outputs = expectStatus(await listCurrentStateVersionOutputs({ client: server.tfe(token), path: { workspace_id: f.workspaceId } }), 200)!;
    assert.ok(tfeValidators.listCurrentStateVersionOutputsResponse200(outputs), JSON.stringify(tfeValidators.listCurrentStateVersionOutputsResponse200.errors));
    assert.equal(outputs.data, []);
  }
});

testEachServer(publishing, "create → 201 with absolute signed upload URLs; PUT; pending and not current until confirmed; then current, with the exact bytes and the outputs", async (server) => {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const { fence, secret } = await startApply(server, run);
  const lineage = "3b4e1d5c-0000-4000-8000-000000000001";
  const outputs = {
    endpoint: { sensitive: false, type: "string", value: "https://example.test" },
    ports: { sensitive: false, type: ["list", "number"], value: [80, 443] },
    password: { sensitive: true, type: "string", value: "s3cr3t-out-put" },
  };
  const bytes = stateFile(1, lineage, outputs);
  const path = { workspace_id: f.workspaceId };

  const created = await createWith(server, secret, f.workspaceId, bytes, 1, lineage, { runId: run.id, outputs });
  const document = expectStatus(created, 201)!;
  assert.ok(tfeValidators.createStateVersionResponse201(document), JSON.stringify(tfeValidators.createStateVersionResponse201.errors));
  const sv = document.data;
  assert.match(sv.id, /^sv-[0-9a-z]{16}$/);
  assert.is(sv.attributes.status, "pending");
  assert.is(sv.attributes.serial, 1);
  assert.is(sv.attributes.fence, fence);
  assert.equal(sv.relationships.run.data, { type: "runs", id: run.id });
  for (const url of [sv.attributes["hosted-state-upload-url"]!, sv.attributes["hosted-json-state-upload-url"]!]) {
    assert.ok(url.startsWith(`${server.baseUrl}/api/v2/uploads/`), url);
  }
  assert.is.not(sv.attributes["hosted-state-upload-url"], sv.attributes["hosted-json-state-upload-url"]);
  assert.match(sv.attributes["created-at"], /Z$/);

  // The two PUTs, concurrently and without Authorization, as the CLI does them.
  const [state, json] = await Promise.all([
    putUpload(sv.attributes["hosted-state-upload-url"]!, bytes),
    putUpload(sv.attributes["hosted-json-state-upload-url"]!, Buffer.from('{"format_version":"1.0","values":{}}')),
  ]);
  assert.is(state.status, 204);
  assert.is(json.status, 204);
  const shown = expectStatus(await getStateVersion({ client: server.tfe(secret), path: { state_version_id: sv.id } }), 200)!;
  assert.ok(tfeValidators.getStateVersionResponse200(shown));
  assert.is(shown.data.attributes.status, "pending");
  assert.is(shown.data.attributes.sha256, hex("sha256", bytes));
  assert.is(shown.data.attributes["hosted-state-upload-url"], undefined);

  // Stored encrypted: no artifact file holds the plaintext.
  const files = await storedArtifactKeys(server, "state-versions/");
  assert.is(files.length, 1);
  const sealed = await storedObject(server, files[0]);
  assert.not.ok(sealed.includes(Buffer.from(lineage)), "state must be stored encrypted");
  assert.not.ok(sealed.includes(Buffer.from("s3cr3t-out-put")));

  // Pending: not current, no outputs; only the run itself may read its pending bytes.
  expectTfeError(await getCurrentStateVersion({ client: server.tfe(f.token), path }), 404, "not found");
  assert.equal(expectStatus(await listCurrentStateVersionOutputs({ client: server.tfe(f.token), path }), 200)!.data, []);
  const own = await downloadBytes(server, secret, sv.id);
  assert.is(own.result.response.status, 200);
  assert.ok(own.bytes?.equals(bytes));
  const { secret: otherRunSecret } = await mintRunToken(server.services, await newRun(server, f), "plan", MINUTE);
  expectTfeError((await downloadBytes(server, otherRunSecret, sv.id)).result, 403, "Permission denied");
  // A person never reads an unpublished upload through this route, even with state:read.
  const unpublished = expectTfeError((await downloadBytes(server, f.token, sv.id)).result, 403, "Permission denied");
  assert.match(unpublished.detail!, /emergency-state/);
  assert.equal((await listPendingStateVersions(server.services, run.id)).map((v) => v.id), [sv.id]);

  // The runner confirms after a successful apply.
  const published = await confirmStatePublication(server.services, publication(run, sv.id, bytes, 1, lineage, fence));
  assert.is(published.status, "finalized");
  assert.ok(published.publishedAt);
  assert.equal(await listPendingStateVersions(server.services, run.id), []);

  for (const token of [secret, f.token]) {
    const current = expectStatus(await getCurrentStateVersion({ client: server.tfe(token), path }), 200)!;
    assert.ok(tfeValidators.getCurrentStateVersionResponse200(current), JSON.stringify(tfeValidators.getCurrentStateVersionResponse200.errors));
    assert.is(current.data.id, sv.id);
    assert.is(current.data.attributes.status, "finalized");
    assert.is(current.data.attributes["hosted-state-download-url"], `/api/v2/state-versions/${sv.id}/download`);
    assert.is(current.data.attributes["published-at"], published.publishedAt);
  }
  // The download URL is relative to the server; the CLI sends its token there. Byte for byte.
  const download = await fetch(`${server.baseUrl}/api/v2/state-versions/${sv.id}/download`, { headers: { Authorization: `Bearer ${otherRunSecret}`, Accept: "application/json" } });
  assert.is(download.status, 200);
  assert.ok(Buffer.from(await download.arrayBuffer()).equals(bytes), "the exact uploaded bytes");
  // People read published state (`tofu state pull`) with state:read, audited; a viewer has no state:read.
  const person = await downloadBytes(server, f.token, sv.id);
  assert.is(person.result.response.status, 200);
  assert.ok(person.bytes?.equals(bytes));
  const audit = await server.db.knex("audit_events").where({ action: "state_version.downloaded", target_id: sv.id });
  assert.is(audit.length, 1);
  const viewer = await createToken(server, f.token, f.organizationName, "viewer");
  const refused = expectTfeError((await downloadBytes(server, viewer.token, sv.id)).result, 403, "Permission denied");
  assert.match(refused.detail!, /state:read/);
  expectTfeError((await downloadBytes(server, undefined, sv.id)).result, 401, "unauthorized");

  const listed = expectStatus(await listCurrentStateVersionOutputs({ client: server.tfe(f.token), path }), 200)!;
  assert.ok(tfeValidators.listCurrentStateVersionOutputsResponse200(listed), JSON.stringify(tfeValidators.listCurrentStateVersionOutputsResponse200.errors));
  assert.equal(
    listed.data.map((o) => o.attributes),
    [
      { name: "endpoint", sensitive: false, type: "string", value: "https://example.test", "detailed-type": "string" },
      { name: "password", sensitive: true, type: "string", value: null, "detailed-type": "string" },
      { name: "ports", sensitive: false, type: "list", value: [80, 443], "detailed-type": ["list", "number"] },
    ],
  );
  const password = listed.data[1];
  const single = expectStatus(await getStateVersionOutput({ client: server.tfe(f.token), path: { state_version_output_id: password.id } }), 200)!;
  assert.ok(tfeValidators.getStateVersionOutputResponse200(single));
  assert.equal(single.data, password);
  expectTfeError(await getStateVersionOutput({ client: server.tfe(f.token), path: { state_version_output_id: `svo-${"0".repeat(16)}-0` } }), 404, "not found");
  assert.not.ok((await databaseText(server)).includes("s3cr3t-out-put"), "a sensitive output value is never stored");

  const events = (await server.services.stores.audit.listByOrganization(f.organizationId)).map((e) => e.action).filter((a) => a.startsWith("state_version."));
  assert.equal(events, ["state_version.created", "state_version.uploaded", "state_version.published", "state_version.downloaded"]);
  const again = await rejection(confirmStatePublication(server.services, publication(run, sv.id, bytes, 1, lineage, fence)));
  assert.ok(isDomainError(again, "STATE_VERSION_NOT_PENDING"), String(again));
});

testEachServer(publishing, "without relationships.run (no TFE_RUN_ID) the version is still linked to the token's run", async (server) => {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const { secret } = await startApply(server, run);
  const bytes = stateFile(4, "lineage-x");
  const created = expectStatus(await createWith(server, secret, f.workspaceId, bytes, 4, "lineage-x"), 201)!;
  assert.equal(created.data.relationships.run.data, { type: "runs", id: run.id });
});

testEachServer(publishing, "serial must increase and the lineage must stay (force or not); each refusal is 409 and changes nothing", async (server) => {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const { fence, secret } = await startApply(server, run);
  await publishState(server, run, secret, fence, stateFile(3, "lineage-a"), 3, "lineage-a");
  await expectUnchanged(server, f.workspaceId, async () => {
    for (const serial of [3, 2, 0]) {
      const error = expectConflict(await createWith(server, secret, f.workspaceId, stateFile(serial, "lineage-a"), serial, "lineage-a", { runId: run.id }), "STATE_VERSION_SERIAL_NOT_INCREASING", "State serial must increase");
      assert.match(error.detail!, /greater than the current state's serial 3/);
    }
    for (const force of [false, true]) {
      expectConflict(
        await createWith(server, secret, f.workspaceId, stateFile(9, "lineage-b"), 9, "lineage-b", { runId: run.id, force }),
        "STATE_VERSION_LINEAGE_MISMATCH",
        "State lineage differs from the current state",
      );
    }
  });
  const next = await publishState(server, run, secret, fence, stateFile(4, "lineage-a"), 4, "lineage-a");
  assert.is((await server.services.stores.stateVersions.current(f.workspaceId))?.id, next.id);
});

// ---------------------------------------------------------------------------------------------
const refusals = suite("state version refusals (invariant 4)");

testEachServer(refusals, "a plan-phase token, a user API token, and a relationships.run of another run: each 409, nothing written", async (server) => {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const { secret } = await startApply(server, run);
  const { secret: plan } = await mintRunToken(server.services, run, "plan", MINUTE);
  const other = await newRun(server, f);
  const bytes = stateFile(1, "lineage-a");
  await expectUnchanged(server, f.workspaceId, async () => {
    const phase = expectConflict(await createWith(server, plan, f.workspaceId, bytes, 1, "lineage-a", { runId: run.id }), "STATE_VERSION_PHASE_FORBIDDEN", "Only the apply phase may write state");
    assert.match(phase.detail!, /plan phase/);
    const user = expectConflict(await createWith(server, f.token, f.workspaceId, bytes, 1, "lineage-a"), "STATE_VERSION_RUN_REQUIRED", "State is published only by an apply");
    assert.match(user.detail!, /state push/);
    expectConflict(await createWith(server, server.bootstrapToken, f.workspaceId, bytes, 1, "lineage-a"), "STATE_VERSION_RUN_REQUIRED", "State is published only by an apply");
    expectConflict(await createWith(server, secret, f.workspaceId, bytes, 1, "lineage-a", { runId: other.id }), "STATE_VERSION_RUN_MISMATCH", "State version names another run");
  });
  // A viewer who cannot see the workspace at all gets 404, as for anything hidden.
  const stranger = await createOrganizationWithToken(server, "stranger", "admin");
  await expectUnchanged(server, f.workspaceId, async () => {
    expectTfeError(await createWith(server, stranger.token, f.workspaceId, bytes, 1, "lineage-a"), 404, "not found");
  });
});

testEachServer(refusals, "json-state-outputs that are not base64 of an outputs object: 422 invalid_document, nothing written", async (server) => {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const { secret } = await startApply(server, run);
  const bytes = stateFile(1, "lineage-a");
  for (const encoded of ["%%%", Buffer.from("[1,2]").toString("base64"), Buffer.from('{"o": 5}').toString("base64"), Buffer.from("{").toString("base64")]) {
    const body = createBody(bytes, 1, "lineage-a", { runId: run.id });
    body.data.attributes["json-state-outputs"] = encoded;
    await expectUnchanged(server, f.workspaceId, async () => {
      const error = expectTfeError(await createStateVersion({ client: server.tfe(secret), path: { workspace_id: f.workspaceId }, body }), 422, "invalid_document");
      assert.is(error.source?.pointer, "/data/attributes/json-state-outputs", encoded);
    });
  }
  // base64 of null declares no outputs; they are then read from the uploaded state.
  const body = createBody(stateFile(1, "lineage-a", { o: { value: "v", type: "string" } }), 1, "lineage-a", { runId: run.id });
  body.data.attributes["json-state-outputs"] = Buffer.from("null").toString("base64");
  const sv = expectStatus(await createStateVersion({ client: server.tfe(secret), path: { workspace_id: f.workspaceId }, body }), 201)!.data;
  assert.is((await putUpload(sv.attributes["hosted-state-upload-url"]!, stateFile(1, "lineage-a", { o: { value: "v", type: "string" } }))).status, 204);
  assert.equal((await server.services.stores.stateVersions.getById(sv.id))?.outputs, [{ name: "o", sensitive: false, type: "string", value: "v" }]);
});

testEachServer(refusals, "an apply token of a run that no longer holds the lock: 409 STATE_VERSION_LOCK_REQUIRED, nothing written", async (server) => {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const { secret } = await startApply(server, run);
  assert.ok(await unlockWorkspaceForRun(server.services, f.workspaceId, run.id));
  await expectUnchanged(server, f.workspaceId, async () => {
    const error = expectConflict(await createWith(server, secret, f.workspaceId, stateFile(1, "l"), 1, "l", { runId: run.id }), "STATE_VERSION_LOCK_REQUIRED", "Run does not hold the workspace lock");
    assert.match(error.detail!, /not locked/);
  });
});

testEachServer(refusals, "a stale fence: the lock released and taken again (by another run, by a person, by the same run) refuses the old token; a new token works", async (server) => {
  const f = await setUp(server);
  const a = await newRun(server, f);
  const b = await newRun(server, f);
  const { fence: first, secret: stale } = await startApply(server, a);
  const path = { workspace_id: f.workspaceId };
  const bytes = stateFile(1, "lineage-a");

  // An administrator force-unlocks; run b takes the lock.
  validWorkspaceDocument(await forceUnlockWorkspace({ client: server.tfe(f.token), path }));
  const second = await lockWorkspaceForRun(server.services, f.workspaceId, b.id);
  assert.is(second, first + 1);
  await expectUnchanged(server, f.workspaceId, async () => {
    const error = expectConflict(await createWith(server, stale, f.workspaceId, bytes, 1, "lineage-a", { runId: a.id }), "STATE_VERSION_FENCE_STALE", "Stale workspace lock fence");
    assert.match(error.detail!, new RegExp(`fence ${first}.*fence ${second}, held by Run ${b.id}`));
  });
  // A person holds it.
  await unlockWorkspaceForRun(server.services, f.workspaceId, b.id);
  validWorkspaceDocument(await lockWorkspace({ client: server.tfe(f.token), path }));
  await expectUnchanged(server, f.workspaceId, async () => {
    expectConflict(await createWith(server, stale, f.workspaceId, bytes, 1, "lineage-a"), "STATE_VERSION_FENCE_STALE", "Stale workspace lock fence");
  });
  // The same run re-acquires: the old token's fence is still stale.
  validWorkspaceDocument(await unlockWorkspace({ client: server.tfe(f.token), path }));
  const third = await lockWorkspaceForRun(server.services, f.workspaceId, a.id);
  await expectUnchanged(server, f.workspaceId, async () => {
    expectConflict(await createWith(server, stale, f.workspaceId, bytes, 1, "lineage-a", { runId: a.id }), "STATE_VERSION_FENCE_STALE", "Stale workspace lock fence");
  });
  const { secret: fresh } = await mintRunToken(server.services, a, "apply", MINUTE);
  const published = await publishState(server, a, fresh, third, bytes, 1, "lineage-a");
  assert.is(published.fence, third);
});

testEachServer(refusals, "confirmStatePublication refuses any mismatch, a stale fence and a version without bytes, and changes nothing", async (server) => {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const other = await newRun(server, f);
  const { fence, secret } = await startApply(server, run);
  const bytes = stateFile(1, "lineage-a");
  const sv = await writeState(server, secret, run, bytes, 1, "lineage-a");
  const good = publication(run, sv.id, bytes, 1, "lineage-a", fence);
  const mismatches: Array<[string, StatePublication]> = [
    ["sha256", { ...good, sha256: hex("sha256", stateFile(1, "lineage-a", { x: { value: 1, type: "number" } })) }],
    ["serial", { ...good, serial: 2 }],
    ["lineage", { ...good, lineage: "lineage-b" }],
    ["run_id", { ...good, runId: other.id }],
    ["fence", { ...good, fence: fence + 1 }],
  ];
  await expectUnchanged(server, f.workspaceId, async () => {
    for (const [field, wrong] of mismatches) {
      const error = await rejection(confirmStatePublication(server.services, wrong));
      assert.ok(isDomainError(error, "STATE_PUBLICATION_MISMATCH"), `${field}: ${String(error)}`);
      assert.match((error as Error).message, new RegExp(`${field} is `));
    }
    const missing = await rejection(confirmStatePublication(server.services, { ...good, stateVersionId: "sv-0000000000000000" }));
    assert.ok(isDomainError(missing, "NOT_FOUND"), String(missing));
  });
  assert.is((await server.services.stores.stateVersions.getById(sv.id))?.status, "pending");

  // Created but never uploaded.
  const empty = expectStatus(await createWith(server, secret, f.workspaceId, stateFile(2, "lineage-a"), 2, "lineage-a", { runId: run.id }), 201)!.data;
  await expectUnchanged(server, f.workspaceId, async () => {
    const error = await rejection(confirmStatePublication(server.services, publication(run, empty.id, stateFile(2, "lineage-a"), 2, "lineage-a", fence)));
    assert.ok(isDomainError(error, "STATE_VERSION_NOT_UPLOADED"), String(error));
  });

  // The lock went away after the upload: the fence is no longer current.
  validWorkspaceDocument(await forceUnlockWorkspace({ client: server.tfe(f.token), path: { workspace_id: f.workspaceId } }));
  await expectUnchanged(server, f.workspaceId, async () => {
    const gone = await rejection(confirmStatePublication(server.services, good));
    assert.ok(isDomainError(gone, "STATE_VERSION_LOCK_REQUIRED"), String(gone));
  });
  await lockWorkspaceForRun(server.services, f.workspaceId, other.id);
  await expectUnchanged(server, f.workspaceId, async () => {
    const stale = await rejection(confirmStatePublication(server.services, good));
    assert.ok(isDomainError(stale, "STATE_VERSION_FENCE_STALE"), String(stale));
  });
  expectTfeError(await getCurrentStateVersion({ client: server.tfe(f.token), path: { workspace_id: f.workspaceId } }), 404, "not found");
  assert.equal((await listPendingStateVersions(server.services, run.id)).map((v) => v.id), [sv.id, empty.id]);
});

// ---------------------------------------------------------------------------------------------
const uploads = suite("signed state uploads");

testEachServer(uploads, "refuses bytes that are not the declared state (MD5, serial, lineage, not JSON) with 422; same bytes again 204, other bytes 409", async (server) => {
  const f = await setUp(server);
  const run = await newRun(server, f);
  const { secret } = await startApply(server, run);
  const bytes = stateFile(1, "lineage-a");
  const sv = expectStatus(await createWith(server, secret, f.workspaceId, bytes, 1, "lineage-a", { runId: run.id }), 201)!.data;
  const url = sv.attributes["hosted-state-upload-url"]!;
  const expect422 = async (target: string, body: Buffer, detail: RegExp) => {
    const response = await putUpload(target, body);
    const document = (await response.json()) as { errors: Array<{ status: string; code: string; detail: string }> };
    assert.is(response.status, 422);
    assert.is(document.errors[0].code, "STATE_VERSION_UPLOAD_INVALID");
    assert.match(document.errors[0].detail, detail);
  };
  // Bytes whose MD5 is the declared one but which are not that state (another serial or lineage, or no state at all).
  const notJson = Buffer.from("not a state file");
  const svNotJson = expectStatus(await createWith(server, secret, f.workspaceId, notJson, 5, "lineage-a", { runId: run.id }), 201)!.data;
  const wrongSerial = stateFile(7, "lineage-a");
  const svWrongSerial = expectStatus(await createWith(server, secret, f.workspaceId, wrongSerial, 6, "lineage-a", { runId: run.id }), 201)!.data;
  const wrongLineage = stateFile(8, "lineage-z");
  const svWrongLineage = expectStatus(await createWith(server, secret, f.workspaceId, wrongLineage, 8, "lineage-a", { runId: run.id }), 201)!.data;
  await expectUnchanged(server, f.workspaceId, async () => {
    await expect422(url, stateFile(1, "lineage-a", { extra: { value: 1, type: "number" } }), /MD5/);
    await expect422(svNotJson.attributes["hosted-state-upload-url"]!, notJson, /not a JSON state file/);
    await expect422(svWrongSerial.attributes["hosted-state-upload-url"]!, wrongSerial, /serial 7/);
    await expect422(svWrongLineage.attributes["hosted-state-upload-url"]!, wrongLineage, /lineage "lineage-z"/);
  });

  assert.is((await putUpload(url, bytes)).status, 204);
  assert.is((await putUpload(url, bytes)).status, 204, "the same bytes again are accepted");
  const other = await putUpload(url, stateFile(1, "lineage-a", { x: { value: 1, type: "number" } }));
  assert.is(other.status, 409);
  assert.is(((await other.json()) as { errors: Array<{ code: string }> }).errors[0].code, "STATE_VERSION_ALREADY_UPLOADED");
  assert.is((await server.services.stores.stateVersions.getById(sv.id))?.sha256, hex("sha256", bytes));
});

testEachServer(
  uploads,
  "a tampered, expired or wrong-kind upload token is 404 and stores nothing",
  async (server) => {
    clock.now = Date.parse("2026-12-02T12:00:00.000Z");
    const f = await setUp(server);
    const run = await newRun(server, f);
    const { secret } = await startApply(server, run);
    const bytes = stateFile(1, "lineage-a");
    const sv = expectStatus(await createWith(server, secret, f.workspaceId, bytes, 1, "lineage-a", { runId: run.id }), 201)!.data;
    const stateUrl = sv.attributes["hosted-state-upload-url"]!;
    const jsonUrl = sv.attributes["hosted-json-state-upload-url"]!;
    const stateToken = stateUrl.slice(stateUrl.lastIndexOf("/") + 1);
    const jsonToken = jsonUrl.slice(jsonUrl.lastIndexOf("/") + 1);
    const tampered = `${stateToken.slice(0, -2)}${stateToken.endsWith("AA") ? "BB" : "AA"}`;
    assert.is((await putUpload(`${server.baseUrl}/api/v2/uploads/state-versions/${tampered}`, bytes)).status, 404);
    assert.is((await putUpload(`${server.baseUrl}/api/v2/uploads/state-versions/${jsonToken}`, bytes)).status, 404, "a JSON-state token does not upload state");
    assert.is((await putUpload(`${server.baseUrl}/api/v2/uploads/state-versions-json/${stateToken}`, bytes)).status, 404);
    clock.now += 16 * MINUTE;
    assert.is((await putUpload(stateUrl, bytes)).status, 404, "expired");
    assert.is((await putUpload(jsonUrl, bytes)).status, 404, "expired");
    assert.is((await server.services.stores.stateVersions.getById(sv.id))?.sha256, null);
  },
  { clock: () => new Date(clock.now) },
);

locks.run();
runLocks.run();
scope.run();
publishing.run();
refusals.run();
uploads.run();
