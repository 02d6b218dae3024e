// /v1 workspace locks: a person locks with a reason, only the holder unlocks, an organization
// administrator force-unlocks; every refusal is a 409/422 with its code and writes nothing.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  forceUnlockWorkspace,
  getWorkspaceStateSummary,
  lockWorkspace,
  unlockWorkspace,
} from "../../../client/src/index.ts";
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import { expectNothingWritten } from "../support/database.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { seededOrganization } from "../support/seeded-runs.ts";
import { signedInMember } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { AuditEventRow } from "../../src/store/rows.ts";

const LOCK_TABLES = ["workspace_locks", "audit_events"];

async function world(server: TestServer) {
  const { org, workspace } = await seededOrganization(server);
  const ada = await signedInMember(server, "acme", "operator");
  const bob = await signedInMember(server, "acme", "operator");
  const admin = await signedInMember(server, "acme", "admin");
  const lock = (who: typeof ada, reason: string) =>
    lockWorkspace({
      client: who.session.client(),
      path: { workspace_id: workspace.id },
      body: { data: { type: "workspace-locks", attributes: { reason } } },
    });
  const summary = async () =>
    expectStatus(
      await getWorkspaceStateSummary({ client: server.v1(org.token), path: { workspace_id: workspace.id } }),
      200,
    ).data.attributes.lock;
  return { org, workspace, ada, bob, admin, lock, summary };
}

const locks = suite("workspace locks (/v1)");

testEachServer(
  locks,
  "lock with a reason, refused while held, unlocked only by its holder, then free",
  async (server) => {
    const { workspace, ada, bob, lock, summary } = await world(server);
    const taken = expectStatus(await lock(ada, "  rotating keys  "), 200);
    assert.ok(
      v1Validators.lockWorkspaceResponse200(taken),
      JSON.stringify(v1Validators.lockWorkspaceResponse200.errors),
    );
    assert.equal(
      { ...taken.data.attributes, locked_at: "t", fence: 0 },
      { holder_kind: "user", holder_id: ada.userId, reason: "rotating keys", locked_at: "t", fence: 0 },
    );
    assert.ok(taken.data.attributes.fence > 0);
    assert.equal((await summary())?.holder_id, ada.userId);
    assert.is((await summary())?.reason, "rotating keys");

    const again = await expectNothingWritten(server, () => lock(bob, "me too"), LOCK_TABLES);
    expectV1Error(again, 409, "WORKSPACE_LOCKED");
    expectV1Error(await expectNothingWritten(server, () => lock(ada, "twice"), LOCK_TABLES), 409, "WORKSPACE_LOCKED");
    expectV1Error(
      await expectNothingWritten(
        server,
        () => unlockWorkspace({ client: bob.session.client(), path: { workspace_id: workspace.id } }),
        LOCK_TABLES,
      ),
      409,
      "WORKSPACE_LOCKED",
    );

    const released = expectStatus(
      await unlockWorkspace({ client: ada.session.client(), path: { workspace_id: workspace.id } }),
      200,
    );
    assert.is(released.data.attributes.holder_id, ada.userId);
    assert.is(await summary(), null);
    expectV1Error(
      await expectNothingWritten(
        server,
        () => unlockWorkspace({ client: ada.session.client(), path: { workspace_id: workspace.id } }),
        LOCK_TABLES,
      ),
      409,
      "WORKSPACE_NOT_LOCKED",
    );
    // Each change is in the audit history with its actor.
    const actions = await server.db
      .knex("audit_events")
      .where({ target_id: workspace.id })
      .select<Array<{ action: string; actor_id: string }>>("action", "actor_id");
    assert.equal(
      actions
        .filter((a) => a.action.startsWith("workspace.") && a.action.includes("lock"))
        .map((a) => [a.action, a.actor_id]),
      [
        ["workspace.locked", ada.userId],
        ["workspace.unlocked", ada.userId],
      ],
    );
  },
);

testEachServer(
  locks,
  "a blank reason and one over 500 characters are refused with 422 and lock nothing; 500 is accepted",
  async (server) => {
    const { workspace, ada, lock, summary } = await world(server);
    for (const reason of ["", "   ", "\t\n", "x".repeat(501)]) {
      expectV1Error(await expectNothingWritten(server, () => lock(ada, reason), LOCK_TABLES), 422, "DOCUMENT_INVALID");
    }
    assert.is(await summary(), null);
    expectStatus(await lock(ada, "x".repeat(500)), 200);
    assert.is((await summary())?.reason.length, 500);
    void workspace;
  },
);

testEachServer(
  locks,
  "an organization administrator force-unlocks someone else's lock; an operator may not",
  async (server) => {
    const { workspace, ada, bob, admin, lock, summary } = await world(server);
    expectStatus(await lock(ada, "holding"), 200);
    const refused = await expectNothingWritten(
      server,
      () => forceUnlockWorkspace({ client: bob.session.client(), path: { workspace_id: workspace.id } }),
      LOCK_TABLES,
    );
    expectV1Error(refused, 403, "FORBIDDEN");
    const forced = expectStatus(
      await forceUnlockWorkspace({ client: admin.session.client(), path: { workspace_id: workspace.id } }),
      200,
    );
    assert.is(forced.data.attributes.holder_id, ada.userId);
    assert.is(await summary(), null);
    expectV1Error(
      await forceUnlockWorkspace({ client: admin.session.client(), path: { workspace_id: workspace.id } }),
      409,
      "WORKSPACE_NOT_LOCKED",
    );
    const forcedEvent = await server.db
      .knex("audit_events")
      .where({ target_id: workspace.id, action: "workspace.force_unlocked" })
      .first<AuditEventRow | undefined>();
    assert.is(forcedEvent?.actor_id, admin.userId);
  },
);

locks.run();
