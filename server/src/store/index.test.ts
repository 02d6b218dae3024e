import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { createStores, inTransaction } from "./index.ts";
import { assertDomainError, at } from "../../test/support/store-fixtures.ts";

const transactions = suite("inTransaction");

testEachDatabase(transactions, "commits when the function resolves", async (db) => {
  const id = await inTransaction(db, async (stores) => {
    const organization = await stores.organizations.create({ name: "acme", createdAt: at(0) });
    await stores.projects.create({ organizationId: organization.id, name: "default", createdAt: at(0) });
    return organization.id;
  });
  const stores = createStores(db.knex, db.dialect);
  assert.is((await stores.organizations.getById(id))?.name, "acme");
  assert.is((await stores.projects.listByOrganization(id)).length, 1);
});

testEachDatabase(
  transactions,
  "rolls everything back when the function throws, translated errors included",
  async (db) => {
    await assertDomainError(
      inTransaction(db, async (stores) => {
        const organization = await stores.organizations.create({ name: "acme", createdAt: at(0) });
        await stores.projects.create({ organizationId: organization.id, name: "default", createdAt: at(0) });
        await stores.projects.create({ organizationId: organization.id, name: "default", createdAt: at(1) });
      }),
      "PROJECT_NAME_TAKEN",
    );
    const stores = createStores(db.knex, db.dialect);
    assert.is(await stores.organizations.getByName("acme"), undefined);
  },
);

transactions.run();
