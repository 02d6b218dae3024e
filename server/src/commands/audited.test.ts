import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { at, countRows } from "../../test/support/store-fixtures.ts";
import type { Database } from "../store/db.ts";
import type { AuditEventRow } from "../store/rows.ts";
import { isoFromRow } from "../store/values.ts";
import { audited } from "./audited.ts";

// A command's writes and the audit events they make: one transaction, one clock reading.
const test = suite("audited");

const ACTOR = "prn-aaaaaaaaaaaaaaaa";

const eventsOf = (db: Database, action: string) => db.knex<AuditEventRow>("audit_events").where({ action });

testEachDatabase(test, "the writes and their event commit together, at the one clock reading", async (db) => {
  let readings = 0;
  const clock = () => (readings++, new Date(at(5)));
  const organization = await audited(
    { db, clock },
    { organizationId: null, actorId: ACTOR },
    async (stores, record, now) => {
      const created = await stores.organizations.create({ name: "acme", createdAt: now });
      await record("organization.created", ["organizations", created.id], { name: created.name });
      return created;
    },
  );
  assert.is(readings, 1, "the clock is read once");
  assert.is(organization.createdAt, at(5));
  const events = await eventsOf(db, "organization.created");
  assert.is(events.length, 1);
  const [event] = events;
  assert.is(event.actor_id, ACTOR);
  assert.is(event.organization_id, null);
  assert.is(event.target_id, organization.id);
  assert.is(isoFromRow(event.created_at), at(5));
  assert.is(event.data, '{"name":"acme"}');
});

testEachDatabase(test, "a command that throws after recording leaves neither its writes nor its event", async (db) => {
  const services = { db, clock: () => new Date(at(6)) };
  const organizations = await countRows(db.knex, "organizations");
  const events = await countRows(db.knex, "audit_events");
  let message = "";
  await audited(services, { organizationId: null, actorId: ACTOR }, async (stores, record, now) => {
    const created = await stores.organizations.create({ name: "acme", createdAt: now });
    await record("organization.created", ["organizations", created.id]);
    throw new Error("refused after the event");
  }).catch((error: Error) => (message = error.message));
  assert.is(message, "refused after the event");
  assert.is(await countRows(db.knex, "organizations"), organizations);
  assert.is(await countRows(db.knex, "audit_events"), events);
});

testEachDatabase(test, "a clock reading taken before the writes is the one they and the event get", async (db) => {
  const services = { db, clock: () => new Date(at(9)) };
  const before = new Date(at(7));
  const seen = await audited(
    services,
    { organizationId: null, actorId: null, at: before },
    async (stores, record, now) => {
      await record("setup.completed", ["users", "usr-aaaaaaaaaaaaaaaa"]);
      return now;
    },
  );
  assert.is(seen, before);
  const [event] = await eventsOf(db, "setup.completed");
  assert.is(isoFromRow(event.created_at), at(7));
  assert.is(event.actor_id, null);
});

test.run();
