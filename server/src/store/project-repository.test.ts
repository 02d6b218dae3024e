import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { isId } from "../domain/ids.ts";
import { createStores } from "./index.ts";
import { assertDomainError, at } from "../../test/support/store-fixtures.ts";

const projects = suite("ProjectRepository");

testEachDatabase(projects, "create, getById, getByName and listByOrganization round-trip", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const organization = await stores.organizations.create({ name: "acme", createdAt: at(0) });
  const other = await stores.organizations.create({ name: "other", createdAt: at(0) });
  const zebra = await stores.projects.create({
    organizationId: organization.id,
    name: "zebra",
    createdAt: "2026-12-02T10:11:12.345Z",
  });
  const alpha = await stores.projects.create({ organizationId: organization.id, name: "alpha", createdAt: at(1) });
  await stores.projects.create({ organizationId: other.id, name: "elsewhere", createdAt: at(1) });
  assert.ok(isId("project", zebra.id));
  assert.equal(zebra, {
    id: zebra.id,
    organizationId: organization.id,
    name: "zebra",
    createdAt: "2026-12-02T10:11:12.345Z",
  });
  assert.equal(await stores.projects.getById(zebra.id), zebra);
  assert.equal(await stores.projects.getByName(organization.id, "zebra"), zebra);
  assert.is(await stores.projects.getByName(other.id, "zebra"), undefined);
  assert.is(await stores.projects.getById("prj-0000000000000000"), undefined);
  assert.equal(await stores.projects.listByOrganization(organization.id), [alpha, zebra]);
});

testEachDatabase(
  projects,
  "a name taken in the organization is PROJECT_NAME_TAKEN; other organizations may reuse it",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const organization = await stores.organizations.create({ name: "acme", createdAt: at(0) });
    const other = await stores.organizations.create({ name: "other", createdAt: at(0) });
    await stores.projects.create({ organizationId: organization.id, name: "default", createdAt: at(1) });
    await assertDomainError(
      stores.projects.create({ organizationId: organization.id, name: "default", createdAt: at(2) }),
      "PROJECT_NAME_TAKEN",
    );
    await stores.projects.create({ organizationId: other.id, name: "default", createdAt: at(2) });
  },
);

testEachDatabase(projects, "an unknown organization is a CONSTRAINT_VIOLATION (foreign key)", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  await assertDomainError(
    stores.projects.create({ organizationId: "org-0000000000000000", name: "x", createdAt: at(0) }),
    "CONSTRAINT_VIOLATION",
  );
});

projects.run();
