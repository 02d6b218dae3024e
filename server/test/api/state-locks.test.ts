// State and locks through /api/v2, part 1: workspace locks (people and runs), the run token's scope.
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
  forceUnlockWorkspace,
  getEntitlementSet,
  getWorkspace,
  getWorkspaceByName,
  lockWorkspace,
  unlockWorkspace,
} from "../../../generated/tfe/client/index.ts";
import * as tfeValidators from "../../../generated/tfe/validators.gen.js";
import { mintRunToken, revokeRunTokens } from "../../src/commands/run-tokens.ts";
import { lockWorkspaceForRun, unlockWorkspaceForRun } from "../../src/commands/workspace-locks.ts";
import { isDomainError } from "../../src/domain/errors.ts";
import { countRows } from "../support/database.ts";
import { createOrganizationWithToken, createToken, createWorkspace } from "../support/factories.ts";
import { expectStatus, expectTfeError, rejection, type SdkResult } from "../support/responses.ts";
import { testEachServer } from "../support/test-server.ts";
import {
  MINUTE,
  setUp,
  newRun,
  startApply,
  stateFile,
  createWith,
  expectConflict,
  expectUnchanged,
  validWorkspaceDocument,
  CLI_LOCK_BODY,
} from "./state-support.ts";

// ---------------------------------------------------------------------------------------------
const locks = suite("workspace lock through /api/v2 (API tokens)");

testEachServer(
  locks,
  "lock, unlock and force-unlock answer 200 with the workspace document; locked shows on both workspace reads",
  async (server) => {
    const f = await setUp(server);
    const client = server.tfe(f.token);
    const path = { workspace_id: f.workspaceId };
    assert.is(validWorkspaceDocument(await getWorkspace({ client, path })).data.attributes.locked, false);

    // The CLI's exact request: Content-Type JSON:API, a body whose type is "".
    const locked = validWorkspaceDocument(await lockWorkspace({ client, path, body: CLI_LOCK_BODY }));
    assert.is(locked.data.id, f.workspaceId);
    assert.is(locked.data.attributes.locked, true);
    const byId = validWorkspaceDocument(await getWorkspace({ client, path }));
    assert.is(byId.data.attributes.locked, true);
    const byName = expectStatus(
      await getWorkspaceByName({
        client,
        path: { organization_name: f.organizationName, workspace_name: f.workspaceName },
      }),
      200,
    );
    assert.is(byName.data.attributes.locked, true);
    const lock = await server.services.stores.workspaceLocks.current(f.workspaceId);
    assert.equal(
      { kind: lock?.holder.kind, reason: lock?.reason, fence: lock?.fence },
      { kind: "user", reason: "Locked by OpenTofu", fence: 1 },
    );

    const unlocked = validWorkspaceDocument(await unlockWorkspace({ client, path }));
    assert.is(unlocked.data.attributes.locked, false);
    assert.is(await server.services.stores.workspaceLocks.current(f.workspaceId), undefined);

    // An empty lock body is accepted too; the next acquisition has a larger fence.
    const raw = await fetch(`${server.baseUrl}/api/v2/workspaces/${f.workspaceId}/actions/lock`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${f.token}`,
        "Content-Type": "application/vnd.api+json",
        Accept: "application/vnd.api+json",
      },
    });
    assert.is(raw.status, 200);
    assert.ok(tfeValidators.WorkspaceDocument(await raw.json()));
    assert.is((await server.services.stores.workspaceLocks.current(f.workspaceId))?.fence, 2);

    const forced = validWorkspaceDocument(await forceUnlockWorkspace({ client, path }));
    assert.is(forced.data.attributes.locked, false);
    const events = (await server.services.stores.audit.listByOrganization(f.organizationId)).map((e) => e.action);
    assert.equal(
      events.filter((a) => /^workspace\.(force_)?(un)?locked$/.test(a)),
      ["workspace.locked", "workspace.unlocked", "workspace.locked", "workspace.force_unlocked"],
    );
  },
);

testEachServer(
  locks,
  "fails 409 with the text the CLI matches: locked by someone (also the caller), locked by User, already unlocked; nothing changes",
  async (server) => {
    const f = await setUp(server);
    const other = await createToken(server, f.token, f.organizationName, "admin");
    const path = { workspace_id: f.workspaceId };
    validWorkspaceDocument(await lockWorkspace({ client: server.tfe(f.token), path, body: CLI_LOCK_BODY }));

    await expectUnchanged(server, f.workspaceId, async () => {
      const again = expectConflict(
        await lockWorkspace({ client: server.tfe(f.token), path, body: CLI_LOCK_BODY }),
        "WORKSPACE_LOCKED",
        "Workspace is locked",
      );
      assert.match(again.detail!, /is locked by User prn-/);
      expectConflict(
        await lockWorkspace({ client: server.tfe(other.token), path }),
        "WORKSPACE_LOCKED",
        "Workspace is locked",
      );
      const foreign = expectConflict(
        await unlockWorkspace({ client: server.tfe(other.token), path }),
        "WORKSPACE_LOCKED",
        "Workspace is locked",
      );
      assert.match(foreign.detail!, /is locked by User prn-/);
    });

    validWorkspaceDocument(await unlockWorkspace({ client: server.tfe(f.token), path }));
    await expectUnchanged(server, f.workspaceId, async () => {
      const unlock = expectConflict(
        await unlockWorkspace({ client: server.tfe(f.token), path }),
        "WORKSPACE_NOT_LOCKED",
        "Workspace is not locked",
      );
      assert.match(unlock.detail!, /already unlocked/);
      assert.not.match(unlock.detail!, /is locked by/);
      const force = expectConflict(
        await forceUnlockWorkspace({ client: server.tfe(f.token), path }),
        "WORKSPACE_NOT_LOCKED",
        "Workspace is not locked",
      );
      assert.match(force.detail!, /already unlocked/);
    });
  },
);

testEachServer(
  locks,
  "permissions: a viewer may not lock, an operator may lock but not force-unlock, another organization sees 404",
  async (server) => {
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
      expectTfeError(
        await forceUnlockWorkspace({ client: server.tfe(operator.token), path }),
        403,
        "Permission denied",
      );
    });
    const admin = validWorkspaceDocument(await getWorkspace({ client: server.tfe(f.token), path }));
    assert.is(admin.data.attributes.permissions["can-force-unlock"], true);
    validWorkspaceDocument(await forceUnlockWorkspace({ client: server.tfe(f.token), path }));
  },
);

testEachServer(
  locks,
  "two lock requests at once: exactly one gets the lock (fence 1), the other 409",
  async (server) => {
    const f = await setUp(server);
    const other = await createToken(server, f.token, f.organizationName, "admin");
    const path = { workspace_id: f.workspaceId };
    const results = await Promise.all(
      [f.token, other.token, f.token, other.token].map((token) =>
        lockWorkspace({ client: server.tfe(token), path, body: CLI_LOCK_BODY }),
      ),
    );
    assert.equal(results.map((r) => r.response.status).sort(), [200, 409, 409, 409]);
    assert.is((await server.services.stores.workspaceLocks.current(f.workspaceId))?.fence, 1);
    assert.is(await server.services.stores.workspaceLocks.lastFence(f.workspaceId), 1);
  },
);

// ---------------------------------------------------------------------------------------------
const runLocks = suite("the runner's lock and the run token (contract §12.3 (b))");

testEachServer(
  runLocks,
  "lockWorkspaceForRun is re-entrant with one fence, fences grow with every acquisition, unlockWorkspaceForRun is idempotent",
  async (server) => {
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
  },
);

testEachServer(runLocks, "two runs locking at once: one fence, the other WORKSPACE_LOCKED", async (server) => {
  const f = await setUp(server);
  const runs = await Promise.all([newRun(server, f), newRun(server, f), newRun(server, f)]);
  const outcomes = await Promise.allSettled(
    runs.map((run) => lockWorkspaceForRun(server.services, f.workspaceId, run.id)),
  );
  const won = outcomes.filter((o) => o.status === "fulfilled");
  assert.is(won.length, 1, JSON.stringify(outcomes));
  assert.is(won[0].value, 1);
  for (const o of outcomes)
    if (o.status === "rejected") assert.ok(isDomainError(o.reason, "WORKSPACE_LOCKED"), String(o.reason));
});

testEachServer(
  runLocks,
  "the run's own token: lock is re-entrant (200, no new fence) and unlock leaves the run's lock to the runner",
  async (server) => {
    const f = await setUp(server);
    const run = await newRun(server, f);
    const { fence, secret } = await startApply(server, run);
    const { secret: planSecret } = await mintRunToken(server.services, run, "plan", 10 * MINUTE);
    const path = { workspace_id: f.workspaceId };
    for (const token of [secret, planSecret]) {
      const locked = validWorkspaceDocument(
        await lockWorkspace({ client: server.tfe(token), path, body: CLI_LOCK_BODY }),
      );
      assert.is(locked.data.attributes.locked, true);
      assert.is(locked.data.attributes.permissions["can-lock"], true);
      const unlocked = validWorkspaceDocument(await unlockWorkspace({ client: server.tfe(token), path }));
      assert.is(unlocked.data.attributes.locked, true, "the run keeps its lock until the runner releases it");
    }
    assert.equal(await server.services.stores.workspaceLocks.current(f.workspaceId), {
      workspaceId: f.workspaceId,
      holder: { kind: "run", id: run.id },
      fence,
      reason: "Locked by StackShip for a run",
      lockedAt: (await server.services.stores.workspaceLocks.current(f.workspaceId))!.lockedAt,
    });
    assert.is(await server.services.stores.workspaceLocks.lastFence(f.workspaceId), fence, "no new fence");

    // Others see the CLI's wording for a run's lock.
    await expectUnchanged(server, f.workspaceId, async () => {
      const userLock = expectConflict(
        await lockWorkspace({ client: server.tfe(f.token), path }),
        "WORKSPACE_LOCKED",
        "Workspace is locked",
      );
      assert.match(userLock.detail!, new RegExp(`is locked by Run ${run.id}`));
      const userUnlock = expectConflict(
        await unlockWorkspace({ client: server.tfe(f.token), path }),
        "WORKSPACE_LOCKED",
        "Workspace is locked",
      );
      assert.match(userUnlock.detail!, new RegExp(`is locked by Run ${run.id}`));
      expectTfeError(await forceUnlockWorkspace({ client: server.tfe(secret), path }), 403, "Permission denied");
    });

    // Once the runner released it: the apply token neither takes nor releases a lock, the plan token still passes.
    assert.ok(await unlockWorkspaceForRun(server.services, f.workspaceId, run.id));
    await expectUnchanged(server, f.workspaceId, async () => {
      expectConflict(
        await lockWorkspace({ client: server.tfe(secret), path, body: CLI_LOCK_BODY }),
        "RUN_TOKEN_LOCK_REQUIRED",
        "An apply token needs the run to hold the lock",
      );
      expectConflict(
        await unlockWorkspace({ client: server.tfe(secret), path }),
        "WORKSPACE_NOT_LOCKED",
        "Workspace is not locked",
      );
      assert.is(
        validWorkspaceDocument(await lockWorkspace({ client: server.tfe(planSecret), path })).data.attributes.locked,
        false,
        "a plan takes no lock",
      );
      validWorkspaceDocument(await unlockWorkspace({ client: server.tfe(planSecret), path }));
    });
    // A person's lock does not stop a plan token either, and the apply token of another run is told who holds it.
    validWorkspaceDocument(await lockWorkspace({ client: server.tfe(f.token), path }));
    validWorkspaceDocument(await lockWorkspace({ client: server.tfe(planSecret), path }));
    const blocked = expectConflict(
      await lockWorkspace({ client: server.tfe(secret), path }),
      "WORKSPACE_LOCKED",
      "Workspace is locked",
    );
    assert.match(blocked.detail!, /is locked by User prn-/);
  },
);

testEachServer(
  runLocks,
  "an apply-phase token needs the run to hold the lock, and a speculative run gets none",
  async (server) => {
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
  },
);

// ---------------------------------------------------------------------------------------------
const scope = suite("run token scope and lifetime");

testEachServer(
  scope,
  "a run token reaches its run's organization and workspace on /api/v2, and on v1 only reads that workspace",
  async (server) => {
    const f = await setUp(server);
    const sibling = await createWorkspace(server, f.token, f.organizationName, { name: "sibling" });
    const elsewhere = await setUp(server, "elsewhere");
    const run = await newRun(server, f);
    const { secret } = await mintRunToken(server.services, run, "plan", 10 * MINUTE);
    const tfe = server.tfe(secret);
    expectStatus(await getEntitlementSet({ client: tfe, path: { organization_name: f.organizationName } }), 200);
    const shown = expectStatus(
      await getWorkspaceByName({
        client: tfe,
        path: { organization_name: f.organizationName, workspace_name: f.workspaceName },
      }),
      200,
    );
    assert.is(shown.data.id, f.workspaceId);
    assert.is(shown.data.attributes.permissions["can-queue-run"], false);
    validWorkspaceDocument(await getWorkspace({ client: tfe, path: { workspace_id: f.workspaceId } }));
    expectTfeError(
      await getEntitlementSet({ client: tfe, path: { organization_name: elsewhere.organizationName } }),
      404,
      "not found",
    );
    expectTfeError(
      await getWorkspaceByName({
        client: tfe,
        path: { organization_name: f.organizationName, workspace_name: "sibling" },
      }),
      404,
      "not found",
    );
    expectTfeError(await getWorkspace({ client: tfe, path: { workspace_id: sibling.id } }), 404, "not found");
    expectTfeError(
      await lockWorkspace({ client: tfe, path: { workspace_id: elsewhere.workspaceId } }),
      404,
      "not found",
    );

    const v1 = server.v1(secret);
    expectStatus(await v1GetWorkspace({ client: v1, path: { workspace_id: f.workspaceId } }), 200);
    const refusals: Array<[string, SdkResult]> = [
      ["v1 getWorkspace (sibling)", await v1GetWorkspace({ client: v1, path: { workspace_id: sibling.id } })],
      ["v1 getOrganization", await v1GetOrganization({ client: v1, path: { organization_name: f.organizationName } })],
      ["v1 listWorkspaces", await v1ListWorkspaces({ client: v1, path: { organization_name: f.organizationName } })],
      ["v1 getRun", await v1GetRun({ client: v1, path: { run_id: run.id } })],
      [
        "v1 createRun",
        await v1CreateRun({ client: v1, path: { workspace_id: f.workspaceId }, body: { data: { type: "runs" } } }),
      ],
      [
        "v1 createWorkspace",
        await v1CreateWorkspace({
          client: v1,
          path: { organization_name: f.organizationName },
          body: { data: { type: "workspaces", attributes: { name: "x" } } },
        }),
      ],
      [
        "v1 createConfigurationVersion",
        await v1CreateConfigurationVersion({
          client: v1,
          path: { workspace_id: f.workspaceId },
          body: { data: { type: "configuration-versions" } },
        }),
      ],
      [
        "v1 createVariable",
        await v1CreateVariable({
          client: v1,
          path: { workspace_id: f.workspaceId },
          body: { data: { type: "variables", attributes: { key: "k", value: "v" } } },
        }),
      ],
      [
        "v1 createOrganizationToken",
        await v1CreateOrganizationToken({
          client: v1,
          path: { organization_name: f.organizationName },
          body: { data: { type: "tokens", attributes: { role: "admin" } } },
        }),
      ],
      [
        "tfe createRun",
        await tfeCreateRun({
          client: tfe,
          body: {
            data: {
              type: "runs",
              attributes: {},
              relationships: { workspace: { data: { type: "workspaces", id: f.workspaceId } } },
            },
          },
        }),
      ],
    ];
    for (const [name, result] of refusals)
      assert.ok([403, 404].includes(result.response.status), `${name} answered ${result.response.status}`);
  },
);

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

locks.run();
runLocks.run();
scope.run();
