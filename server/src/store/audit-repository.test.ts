import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { isId } from "../domain/ids.ts";
import { createStores } from "./index.ts";
import { at } from "../../test/support/store-fixtures.ts";

const audit = suite("AuditRepository");

testEachDatabase(audit, "record and listByOrganization round-trip, oldest first, per organization", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const later = await stores.audit.record({
    organizationId: "org-aaaaaaaaaaaaaaaa",
    actorId: "prn-aaaaaaaaaaaaaaaa",
    action: "run.created",
    targetType: "run",
    targetId: "run-aaaaaaaaaaaaaaaa",
    data: { kind: "plan_and_apply", nested: { b: 2, a: [1, "x"] } },
    createdAt: at(5),
  });
  const earlierInput = {
    organizationId: "org-aaaaaaaaaaaaaaaa",
    actorId: null,
    action: "organization.created",
    targetType: "organization",
    targetId: "org-aaaaaaaaaaaaaaaa",
    reason: "bootstrap",
    createdAt: "2026-12-02T08:00:00.001Z",
  };
  const earlier = await stores.audit.record(earlierInput);
  await stores.audit.record({
    organizationId: "org-bbbbbbbbbbbbbbbb",
    actorId: null,
    action: "x",
    targetType: "y",
    targetId: "z",
    createdAt: at(1),
  });
  assert.ok(isId("auditEvent", later.id));
  assert.equal(earlier, { id: earlier.id, ...earlierInput, data: {} });
  assert.equal(await stores.audit.listByOrganization("org-aaaaaaaaaaaaaaaa"), [earlier, later]);
  const [row] = await db.knex("audit_events").where({ id: later.id }).select<Array<{ data: string }>>("data");
  assert.is(row.data, '{"kind":"plan_and_apply","nested":{"a":[1,"x"],"b":2}}');
});

testEachDatabase(audit, "recordAction records the same event as record, data included or not", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const by = { organizationId: "org-aaaaaaaaaaaaaaaa", actorId: "prn-aaaaaaaaaaaaaaaa", createdAt: at(2) };
  const created = await stores.audit.recordAction(by, "project.created", ["projects", "prj-aaaaaaaaaaaaaaaa"], {
    name: "infra",
  });
  const bare = await stores.audit.recordAction({ ...by, actorId: null, createdAt: at(3) }, "session.ended", [
    "sessions",
    "ses-aaaaaaaaaaaaaaaa",
  ]);
  assert.equal(created, {
    id: created.id,
    ...by,
    action: "project.created",
    targetType: "projects",
    targetId: "prj-aaaaaaaaaaaaaaaa",
    reason: null,
    data: { name: "infra" },
  });
  assert.equal(bare.data, {});
  assert.is(bare.actorId, null);
  assert.equal(await stores.audit.listByOrganization("org-aaaaaaaaaaaaaaaa"), [created, bare]);
});

audit.run();
