import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { createStores } from "./index.ts";
import { assertDomainError, assertRejects, at, seedTenancy } from "../../test/support/store-fixtures.ts";
import { translateError } from "./translate-error.ts";

const variables = suite("VariableRepository");

testEachDatabase(variables, "round-trips plain and sensitive variables, sorted by category then key", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const { workspace } = await seedTenancy(stores);
  const regionInput = {
    workspaceId: workspace.id,
    key: "region",
    category: "terraform",
    hcl: false,
    sensitive: false,
    value: "eu-west-1",
    createdAt: "2026-12-02T10:11:12.345Z",
  } as const;
  const secretInput = {
    workspaceId: workspace.id,
    key: "AWS_SECRET_ACCESS_KEY",
    category: "env",
    hcl: false,
    sensitive: true,
    valueCiphertext: "v1:ciphertext",
    description: "deploy key",
    createdAt: at(1),
  } as const;
  const region = await stores.variables.create(regionInput);
  const secret = await stores.variables.create(secretInput);
  const tags = await stores.variables.create({
    workspaceId: workspace.id,
    key: "tags",
    category: "terraform",
    hcl: true,
    sensitive: false,
    value: "",
    createdAt: at(2),
  });
  // Each comes back as given, with the field it did not set as null.
  assert.equal(region, { ...regionInput, id: region.id, valueCiphertext: null, description: null });
  assert.equal(secret, { ...secretInput, id: secret.id, value: null });
  assert.equal(await stores.variables.listByWorkspace(workspace.id), [secret, region, tags]);
});

testEachDatabase(
  variables,
  "a key taken in the same category is VARIABLE_KEY_TAKEN; the other category may reuse it",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const { workspace } = await seedTenancy(stores);
    await stores.variables.create({
      workspaceId: workspace.id,
      key: "TOKEN",
      category: "env",
      hcl: false,
      sensitive: false,
      value: "a",
      createdAt: at(1),
    });
    await assertDomainError(
      stores.variables.create({
        workspaceId: workspace.id,
        key: "TOKEN",
        category: "env",
        hcl: false,
        sensitive: true,
        valueCiphertext: "x",
        createdAt: at(2),
      }),
      "VARIABLE_KEY_TAKEN",
    );
    await stores.variables.create({
      workspaceId: workspace.id,
      key: "TOKEN",
      category: "terraform",
      hcl: false,
      sensitive: false,
      value: "b",
      createdAt: at(3),
    });
  },
);

testEachDatabase(variables, "never stores plaintext for a sensitive variable", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const { workspace } = await seedTenancy(stores);
  const stale = {
    workspaceId: workspace.id,
    key: "PASSWORD",
    category: "env",
    hcl: false,
    sensitive: true,
    valueCiphertext: "c",
    value: "hunter2",
    createdAt: at(1),
  };
  await assertRejects(stores.variables.create(stale as never), TypeError);

  // The CHECK constraint refuses the same thing from a raw insert, on both databases.
  const row = {
    id: "var-0000000000000001",
    workspace_id: workspace.id,
    key: "PASSWORD",
    category: "env",
    hcl: false,
    created_at: at(1),
  };
  for (const bad of [
    { sensitive: true, value: "hunter2", value_ciphertext: "c" },
    { sensitive: true, value: null, value_ciphertext: null },
    { sensitive: false, value: "x", value_ciphertext: "c" },
    { sensitive: false, value: null, value_ciphertext: null },
  ]) {
    await assertDomainError(
      db
        .knex("workspace_variables")
        .insert({ ...row, ...bad })
        .catch((error: unknown) => Promise.reject(translateError(db.dialect, error))),
      "CONSTRAINT_VIOLATION",
      JSON.stringify(bad),
    );
  }
  await assertDomainError(
    db
      .knex("workspace_variables")
      .insert({ ...row, category: "secret", sensitive: false, value: "x", value_ciphertext: null })
      .catch((error: unknown) => Promise.reject(translateError(db.dialect, error))),
    "CONSTRAINT_VIOLATION",
  );
  assert.equal(await stores.variables.listByWorkspace(workspace.id), []);
});

variables.run();
