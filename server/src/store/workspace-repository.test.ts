import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { isId } from "../domain/ids.ts";
import { createStores } from "./index.ts";
import { assertDomainError, at, seedTenancy } from "../../test/support/store-fixtures.ts";

const workspaces = suite("WorkspaceRepository");

testEachDatabase(workspaces, "create applies defaults and round-trips every field", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const { organization, project } = await seedTenancy(stores);
  const input = {
    organizationId: organization.id,
    projectId: project.id,
    name: "dns",
    opentofuVersion: "1.8.5",
    executionRegion: "eu-west-1",
    createdAt: "2026-12-02T10:11:12.345Z",
  };
  const created = await stores.workspaces.create(input);
  assert.ok(isId("workspace", created.id));
  assert.equal(created, {
    id: created.id,
    ...input,
    description: null,
    trackedBranch: "main",
    workingDirectory: "",
    approvalTtlSeconds: 86_400,
    planRequiresCredential: false,
    updatedAt: input.createdAt,
    // On for new workspaces (issue 29).
    structuredRunOutputEnabled: true,
  });
  assert.equal(await stores.workspaces.getById(created.id), created);
  assert.equal(await stores.workspaces.getByName(organization.id, "dns"), created);

  const explicit = await stores.workspaces.create({
    organizationId: organization.id,
    projectId: project.id,
    name: "app",
    description: "The app stack",
    trackedBranch: "release",
    workingDirectory: "infra/app",
    opentofuVersion: "1.9.0",
    executionRegion: "us-east-1",
    structuredRunOutputEnabled: false,
    createdAt: at(9),
  });
  assert.equal(await stores.workspaces.getById(explicit.id), explicit);
  assert.is(explicit.structuredRunOutputEnabled, false);
  assert.is(explicit.workingDirectory, "infra/app");
  assert.equal(
    (await stores.workspaces.listByOrganization(organization.id)).map((workspace) => workspace.name),
    ["app", "dns", "networking"],
  );
  assert.is(await stores.workspaces.getById("ws-0000000000000000"), undefined);
});

testEachDatabase(
  workspaces,
  "a name taken in the organization is WORKSPACE_NAME_TAKEN, even across projects",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const { organization, workspace } = await seedTenancy(stores);
    const second = await stores.projects.create({ organizationId: organization.id, name: "second", createdAt: at(3) });
    await assertDomainError(
      stores.workspaces.create({
        organizationId: organization.id,
        projectId: second.id,
        name: workspace.name,
        opentofuVersion: "1.8.5",
        executionRegion: "eu-west-1",
        createdAt: at(4),
      }),
      "WORKSPACE_NAME_TAKEN",
    );
  },
);

testEachDatabase(workspaces, "a project of another organization is refused", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const { organization } = await seedTenancy(stores, "acme");
  const foreign = await seedTenancy(stores, "foreign");
  await assertDomainError(
    stores.workspaces.create({
      organizationId: organization.id,
      projectId: foreign.project.id,
      name: "x",
      opentofuVersion: "1.8.5",
      executionRegion: "eu-west-1",
      createdAt: at(4),
    }),
    "CONSTRAINT_VIOLATION",
  );
  await assertDomainError(
    stores.workspaces.create({
      organizationId: organization.id,
      projectId: "prj-0000000000000000",
      name: "y",
      opentofuVersion: "1.8.5",
      executionRegion: "eu-west-1",
      createdAt: at(4),
    }),
    "CONSTRAINT_VIOLATION",
  );
});

workspaces.run();
