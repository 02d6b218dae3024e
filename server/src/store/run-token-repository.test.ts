import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { createStores } from "./index.ts";
import { newPrefixedId, type CreateRunTokenInput } from "./run-token-repository.ts";
import { assertDomainError, at, runInput, seedRunPrerequisites } from "../../test/support/store-fixtures.ts";
import { translateError } from "./translate-error.ts";

const tokens = suite("RunTokenRepository");

async function seedRun(db: Parameters<Parameters<typeof testEachDatabase>[2]>[0]) {
  const stores = createStores(db.knex, db.dialect);
  const prerequisites = await seedRunPrerequisites(stores);
  const run = await stores.runs.create(runInput(prerequisites));
  return { stores, run, workspace: prerequisites.workspace, organization: prerequisites.organization };
}

/** A plan token of the run: hash "a…", no fence, expiring at 100, created at 1; `fields` overrides. */
function tokenInput(runId: string, fields: Partial<CreateRunTokenInput> = {}): CreateRunTokenInput {
  return {
    runId,
    phase: "plan",
    tokenHash: "a".repeat(64),
    fence: null,
    expiresAt: at(100),
    createdAt: at(1),
    ...fields,
  };
}

tokens("newPrefixedId makes sv- and rtk- ids of 16 characters of [0-9a-z]", () => {
  assert.match(newPrefixedId("sv"), /^sv-[0-9a-z]{16}$/);
  assert.match(newPrefixedId("rtk"), /^rtk-[0-9a-z]{16}$/);
  assert.is.not(newPrefixedId("rtk"), newPrefixedId("rtk"));
});

testEachDatabase(
  tokens,
  "create and findByTokenHash round-trip, with the run’s workspace and organization",
  async (db) => {
    const { stores, run, workspace, organization } = await seedRun(db);
    const plan = await stores.runTokens.create(tokenInput(run.id));
    const apply = await stores.runTokens.create(
      tokenInput(run.id, { phase: "apply", tokenHash: "b".repeat(64), fence: 7, expiresAt: at(200), createdAt: at(2) }),
    );
    assert.match(plan.id, /^rtk-[0-9a-z]{16}$/);
    assert.equal(plan, {
      id: plan.id,
      runId: run.id,
      phase: "plan",
      tokenHash: "a".repeat(64),
      fence: null,
      expiresAt: at(100),
      createdAt: at(1),
      revokedAt: null,
    });
    assert.equal(await stores.runTokens.findByTokenHash("b".repeat(64)), {
      token: apply,
      workspaceId: workspace.id,
      organizationId: organization.id,
    });
    assert.is(await stores.runTokens.findByTokenHash("c".repeat(64)), undefined);
    assert.equal(await stores.runTokens.listByRun(run.id), [plan, apply]);
  },
);

testEachDatabase(
  tokens,
  "revokeByRun revokes the live tokens once (all, or one phase’s) and keeps them findable",
  async (db) => {
    const { stores, run } = await seedRun(db);
    await stores.runTokens.create(tokenInput(run.id));
    await stores.runTokens.create(
      tokenInput(run.id, { phase: "apply", tokenHash: "b".repeat(64), fence: 1, createdAt: at(2) }),
    );
    assert.is(await stores.runTokens.revokeByRun(run.id, at(3), "plan"), 1);
    assert.is((await stores.runTokens.findByTokenHash("a".repeat(64)))?.token.revokedAt, at(3));
    assert.is((await stores.runTokens.findByTokenHash("b".repeat(64)))?.token.revokedAt, null);
    assert.is(await stores.runTokens.revokeByRun(run.id, at(4)), 1);
    assert.is(await stores.runTokens.revokeByRun(run.id, at(5)), 0);
    assert.equal(
      (await stores.runTokens.listByRun(run.id)).map((t) => t.revokedAt),
      [at(3), at(4)],
    );
  },
);

testEachDatabase(
  tokens,
  "the database refuses a duplicate hash, an unknown phase, an apply token without a fence, a plan token with one, a missing run",
  async (db) => {
    const { stores, run } = await seedRun(db);
    await stores.runTokens.create(tokenInput(run.id));
    const refused: Array<[string, Partial<CreateRunTokenInput>]> = [
      ["a duplicate hash", {}],
      ["an apply token without a fence", { phase: "apply", tokenHash: "d".repeat(64) }],
      ["a plan token with a fence", { tokenHash: "e".repeat(64), fence: 3 }],
      ["a missing run", { runId: "run-0000000000000000", tokenHash: "f".repeat(64) }],
    ];
    for (const [what, fields] of refused)
      await assertDomainError(stores.runTokens.create(tokenInput(run.id, fields)), "CONSTRAINT_VIOLATION", what);
    const raw = db.knex("run_tokens").insert({
      id: "rtk-0000000000000000",
      run_id: run.id,
      phase: "policy",
      token_hash: "0".repeat(64),
      fence: null,
      expires_at: at(9),
      created_at: at(1),
    });
    await assertDomainError(
      raw.catch((error: unknown) => Promise.reject(translateError(db.dialect, error))),
      "CONSTRAINT_VIOLATION",
    );
    assert.is((await stores.runTokens.listByRun(run.id)).length, 1);
  },
);

tokens.run();
