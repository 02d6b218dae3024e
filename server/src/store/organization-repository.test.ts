import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { isId } from "../domain/ids.ts";
import { createStores } from "./index.ts";
import { assertDomainError, assertRejects } from "../../test/support/store-fixtures.ts";

const organizations = suite("OrganizationRepository");

testEachDatabase(organizations, "create and get round-trip with the exact ISO timestamp", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const created = await stores.organizations.create({ name: "acme", createdAt: "2026-12-02T10:11:12.345Z" });
  assert.ok(isId("organization", created.id));
  assert.equal(created, { id: created.id, name: "acme", createdAt: "2026-12-02T10:11:12.345Z" });
  assert.equal(await stores.organizations.getById(created.id), created);
  assert.equal(await stores.organizations.getByName("acme"), created);
});

testEachDatabase(organizations, "accepts a Date and a caller-chosen id", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const created = await stores.organizations.create({
    id: "org-0000000000000001",
    name: "acme",
    createdAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
  });
  assert.is(created.id, "org-0000000000000001");
  assert.is((await stores.organizations.getById(created.id))?.createdAt, "2026-01-02T03:04:05.006Z");
});

testEachDatabase(organizations, "returns undefined for unknown ids and names", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  assert.is(await stores.organizations.getById("org-0000000000000000"), undefined);
  assert.is(await stores.organizations.getByName("nobody"), undefined);
});

testEachDatabase(organizations, "a taken name is ORGANIZATION_NAME_TAKEN", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  await stores.organizations.create({ name: "acme", createdAt: "2026-12-02T10:11:12.345Z" });
  await assertDomainError(
    stores.organizations.create({ name: "acme", createdAt: "2026-12-02T10:11:13.000Z" }),
    "ORGANIZATION_NAME_TAKEN",
  );
});

testEachDatabase(organizations, "a duplicate id is a CONSTRAINT_VIOLATION, not a name clash", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  await stores.organizations.create({ id: "org-0000000000000001", name: "a", createdAt: "2026-12-02T10:11:12.345Z" });
  await assertDomainError(
    stores.organizations.create({ id: "org-0000000000000001", name: "b", createdAt: "2026-12-02T10:11:12.345Z" }),
    "CONSTRAINT_VIOLATION",
  );
});

testEachDatabase(organizations, "refuses timestamps not in toISOString() form before writing", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  for (const createdAt of ["2026-12-02T10:11:12Z", "2026-12-02 10:11:12.345", "2026-02-30T00:00:00.000Z"]) {
    await assertRejects(stores.organizations.create({ name: createdAt, createdAt }), TypeError, createdAt);
  }
  await assertRejects(stores.organizations.create({ name: "bad", createdAt: new Date(Number.NaN) }), TypeError);
  assert.is(await stores.organizations.getByName("bad"), undefined);
});

organizations.run();
