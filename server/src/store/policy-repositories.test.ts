import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { policyResultDigest, policySetVersionDigest, preparePolicies } from "../domain/policy/index.ts";
import { createStores } from "./index.ts";
import { at, runInput, seedRunPrerequisites } from "../../test/support/store-fixtures.ts";

const repositories = suite("PolicySetRepository and PolicyResultRepository");

async function seed(db: Parameters<Parameters<typeof testEachDatabase>[2]>[0]) {
  const stores = createStores(db.knex, db.dialect);
  const prerequisites = await seedRunPrerequisites(stores);
  const run = await stores.runs.create(runInput(prerequisites));
  return { stores, run, ...prerequisites };
}

testEachDatabase(
  repositories,
  "versions count up and stay immutable; applicability follows global, project and workspace attachments",
  async (db) => {
    const { stores, organization, project, workspace } = await seed(db);
    const policies = preparePolicies([{ name: "p", enforcement_level: "soft_mandatory", source: "package p\n" }]);
    const global = await stores.policySets.create({
      organizationId: organization.id,
      name: "global",
      description: null,
      global: true,
      projectIds: [],
      workspaceIds: [],
      now: at(1),
    });
    const v1 = await stores.policySets.addVersion(global.id, policies, policySetVersionDigest(policies), at(2));
    const v2 = await stores.policySets.addVersion(global.id, policies, policySetVersionDigest(policies), at(3));
    assert.equal([v1.version, v2.version], [1, 2]);
    assert.equal(await stores.policySets.getVersion(v1.id), v1);
    assert.equal(v1.policies, policies);

    const elsewhere = await stores.policySets.create({
      organizationId: organization.id,
      name: "elsewhere",
      description: null,
      global: false,
      projectIds: [],
      workspaceIds: ["ws-0000000000000000"],
      now: at(4),
    });
    await stores.policySets.addVersion(elsewhere.id, policies, policySetVersionDigest(policies), at(4));
    const byProject = await stores.policySets.create({
      organizationId: organization.id,
      name: "project",
      description: "d",
      global: false,
      projectIds: [project.id],
      workspaceIds: [],
      now: at(5),
    });
    await stores.policySets.addVersion(byProject.id, policies, policySetVersionDigest(policies), at(5));
    const unversioned = await stores.policySets.create({
      organizationId: organization.id,
      name: "unversioned",
      description: null,
      global: true,
      projectIds: [],
      workspaceIds: [],
      now: at(6),
    });
    assert.ok(unversioned);

    const applicable = await stores.policySets.applicableVersions({
      organizationId: organization.id,
      projectId: project.id,
      workspaceId: workspace.id,
    });
    assert.equal(
      applicable.map(({ set, version }) => [set.name, version.version]),
      [
        ["global", 2],
        ["project", 1],
      ],
    );
  },
);

testEachDatabase(
  repositories,
  "results with findings round-trip; overrides list newest first with a truncated flag; active means same digest and unexpired",
  async (db) => {
    const { stores, run, organization } = await seed(db);
    const findings = [
      {
        policySetId: "pset-a",
        policySetVersion: 1,
        policy: "p",
        enforcementLevel: "soft_mandatory" as const,
        title: "t",
        message: "m",
        address: null,
      },
    ];
    const pinned = [{ policySetId: "pset-a", version: 1, digest: "a".repeat(64) }];
    const digest = policyResultDigest({
      outcome: "soft_failed",
      policySetVersions: pinned,
      findings,
      opaVersion: "1.22.4",
    });
    const evaluation = {
      runId: run.id,
      outcome: "soft_failed" as const,
      resultDigest: digest,
      opaVersion: "1.22.4",
      opaBuildCommit: null,
      policySetVersions: pinned,
      error: null,
      evaluatedAt: at(10),
    };
    await stores.policyResults.record(evaluation, findings);
    assert.equal(await stores.policyResults.getEvaluation(run.id), evaluation, "read back as recorded");
    assert.equal(await stores.policyResults.listFindings(run.id), findings);

    for (let i = 0; i < 4; i += 1) {
      await stores.policyResults.createOverride({
        runId: run.id,
        organizationId: organization.id,
        resultDigest: digest,
        reason: `r${i}`,
        actorId: null,
        createdAt: at(20 + i),
        expiresAt: at(80 + i),
      });
    }
    const listed = await stores.policyResults.listOverrides(run.id, 3);
    assert.equal(
      listed.overrides.map((o) => o.reason),
      ["r3", "r2", "r1"],
    );
    assert.is(listed.truncated, true);
    assert.is((await stores.policyResults.listOverrides(run.id, 4)).truncated, false);
    assert.is((await stores.policyResults.findActiveOverride(run.id, digest, new Date(at(82))))?.reason, "r3");
    assert.is(await stores.policyResults.findActiveOverride(run.id, digest, new Date(at(83))), undefined);
    assert.is(await stores.policyResults.findActiveOverride(run.id, "b".repeat(64), new Date(at(21))), undefined);
    assert.ok(await stores.policyResults.hasOverride(run.id, digest));
  },
);

repositories.run();
