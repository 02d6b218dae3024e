// POST /v1/workspaces/{id}/actions/delete: organization administrators, confirmed by the typed
// name; safe by default (not while locked or holding state), force on request; never while a run
// has not ended; the records stay, the name is free again.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createRun, deleteWorkspace, getWorkspace, listWorkspaces, lockWorkspace } from "../../../client/src/index.ts";
import { expectNothingWritten } from "../support/database.ts";
import { createWorkspace, uploadConfiguration } from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { seededOrganization } from "../support/seeded-runs.ts";
import { signedInMember } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { AuditEventRow } from "../../src/store/rows.ts";

const TABLES = ["workspaces", "audit_events", "workspace_locks"];

async function world(server: TestServer) {
  const { org } = await seededOrganization(server);
  const admin = await signedInMember(server, "acme", "admin");
  const operator = await signedInMember(server, "acme", "operator");
  const make = (name: string) => createWorkspace(server, org.token, "acme", { name });
  const remove = (who: typeof admin, id: string, name: string, force?: boolean) =>
    deleteWorkspace({
      client: who.session.client(),
      path: { workspace_id: id },
      body: { data: { type: "workspace-deletions", attributes: { name, ...(force === undefined ? {} : { force }) } } },
    });
  return { org, admin, operator, make, remove };
}

const deletion = suite("deleteWorkspace (/v1)");

testEachServer(
  deletion,
  "an administrator deletes with the exact name: gone from lookups and lists, audited, the name free again",
  async (server) => {
    const { org, admin, make, remove } = await world(server);
    const ws = await make("retired");
    expectStatus(await remove(admin, ws.id, "retired"), 204);
    expectV1Error(
      await getWorkspace({ client: server.v1(org.token), path: { workspace_id: ws.id } }),
      404,
      "NOT_FOUND",
    );
    const names = expectStatus(
      await listWorkspaces({ client: server.v1(org.token), path: { organization_name: "acme" } }),
      200,
    ).data.map((w) => w.attributes.name);
    assert.not.ok(names.includes("retired"));
    const event = await server.db
      .knex("audit_events")
      .where({ target_id: ws.id, action: "workspace.deleted" })
      .first<AuditEventRow | undefined>();
    assert.is(event?.actor_id, admin.userId);
    // The name can be taken again; deleting the old id again is a 404.
    await make("retired");
    expectV1Error(await remove(admin, ws.id, "retired"), 404, "NOT_FOUND");
  },
);

testEachServer(
  deletion,
  "a wrong or differently cased name, an operator and a bad document are refused and delete nothing",
  async (server) => {
    const { admin, operator, make, remove } = await world(server);
    const ws = await make("keep-me");
    for (const typed of ["keep-m", "Keep-me", "keep-me ", "keep-mee"]) {
      const refused = expectV1Error(
        await expectNothingWritten(server, () => remove(admin, ws.id, typed), TABLES),
        422,
        "DOCUMENT_INVALID",
      );
      assert.is(refused.source?.pointer, "/data/attributes/name");
    }
    expectV1Error(
      await expectNothingWritten(server, () => remove(operator, ws.id, "keep-me"), TABLES),
      403,
      "FORBIDDEN",
    );
    const noName = await deleteWorkspace({
      client: admin.session.client(),
      path: { workspace_id: ws.id },
      body: { data: { type: "workspace-deletions", attributes: {} } } as never,
    });
    expectV1Error(noName, 422, "DOCUMENT_INVALID");
  },
);

testEachServer(
  deletion,
  "safe deletion stops at a lock and at current state; force goes through both; a run in progress stops both",
  async (server) => {
    const { org, admin, make, remove } = await world(server);
    const locked = await make("locked");
    expectStatus(
      await lockWorkspace({
        client: admin.session.client(),
        path: { workspace_id: locked.id },
        body: { data: { type: "workspace-locks", attributes: { reason: "hold" } } },
      }),
      200,
    );
    expectV1Error(
      await expectNothingWritten(server, () => remove(admin, locked.id, "locked"), TABLES),
      409,
      "WORKSPACE_LOCKED",
    );
    expectStatus(await remove(admin, locked.id, "locked", true), 204);

    const busy = await make("busy");
    await uploadConfiguration(server, org.token, busy.id);
    expectStatus(
      await createRun({
        client: server.v1(org.token),
        path: { workspace_id: busy.id },
        body: { data: { type: "runs" } },
      }),
      201,
    );
    expectV1Error(
      await expectNothingWritten(server, () => remove(admin, busy.id, "busy"), TABLES),
      409,
      "CONSTRAINT_VIOLATION",
    );
    expectV1Error(
      await expectNothingWritten(server, () => remove(admin, busy.id, "busy", true), TABLES),
      409,
      "CONSTRAINT_VIOLATION",
    );
  },
);

deletion.run();
