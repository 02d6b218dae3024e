import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { isId } from "../domain/ids.ts";
import { createStores } from "./index.ts";
import { assertDomainError, at } from "../../test/support/store-fixtures.ts";
import { translateError } from "./translate-error.ts";

type Stores = ReturnType<typeof createStores>;

/** An api_token principal named `name`, site-wide unless given an organization. */
function apiPrincipal(stores: Stores, name: string, createdAt: string, organizationId: string | null = null) {
  return stores.principals.createPrincipal({ kind: "api_token", organizationId, name, createdAt });
}

/** The grant of workspace:read on ws-0000000000000001 to a principal. */
function workspaceRead(principalId: string, createdAt: string) {
  return {
    principalId,
    scopeKind: "workspace" as const,
    scopeId: "ws-0000000000000001",
    permission: "workspace:read" as const,
    createdAt,
  };
}

const principals = suite("PrincipalRepository");

testEachDatabase(principals, "createPrincipal and getById round-trip, with or without an organization", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const organization = await stores.organizations.create({ name: "acme", createdAt: at(0) });
  const bot = await apiPrincipal(stores, "ci", "2026-12-02T10:11:12.345Z", organization.id);
  const bootstrap = await stores.principals.createPrincipal({
    kind: "bootstrap",
    organizationId: null,
    name: "bootstrap",
    createdAt: at(1),
  });
  assert.ok(isId("principal", bot.id));
  assert.equal(bot, {
    id: bot.id,
    kind: "api_token",
    organizationId: organization.id,
    name: "ci",
    createdAt: "2026-12-02T10:11:12.345Z",
  });
  assert.equal(await stores.principals.getById(bot.id), bot);
  assert.equal(await stores.principals.getById(bootstrap.id), bootstrap);
  assert.is(await stores.principals.getById("prn-0000000000000000"), undefined);
});

testEachDatabase(principals, "an unknown kind is refused by the database", async (db) => {
  const insert = db
    .knex("principals")
    .insert({ id: "prn-0000000000000001", kind: "human", organization_id: null, name: "x", created_at: at(0) });
  await assertDomainError(
    insert.catch((error: unknown) => Promise.reject(translateError(db.dialect, error))),
    "CONSTRAINT_VIOLATION",
  );
});

const tokens = suite("TokenRepository");

testEachDatabase(tokens, "findByTokenHash returns the token, its principal and the principal’s grants", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const organization = await stores.organizations.create({ name: "acme", createdAt: at(0) });
  const principal = await apiPrincipal(stores, "ci", at(1), organization.id);
  const readRuns = await stores.grants.grant({
    principalId: principal.id,
    scopeKind: "organization",
    scopeId: organization.id,
    permission: "run:read",
    createdAt: at(2),
  });
  const createRuns = await stores.grants.grant({
    principalId: principal.id,
    scopeKind: "organization",
    scopeId: organization.id,
    permission: "run:create",
    createdAt: at(3),
  });
  const input = {
    principalId: principal.id,
    organizationId: organization.id,
    role: "operator" as const,
    description: "CI pipeline",
    tokenHash: "f".repeat(64),
    createdAt: "2026-12-02T10:11:12.345Z",
  };
  const token = await stores.tokens.createToken(input);
  assert.ok(isId("apiToken", token.id));
  assert.equal(token, { id: token.id, ...input, lastUsedAt: null, expiresAt: null, revokedAt: null });
  assert.equal(await stores.tokens.findByTokenHash("f".repeat(64)), {
    token,
    principal,
    grants: [readRuns, createRuns],
  });
  assert.is(await stores.tokens.findByTokenHash("e".repeat(64)), undefined);
});

testEachDatabase(tokens, "touchLastUsed records the given time exactly", async (db) => {
  const stores = createStores(db.knex, db.dialect);
  const principal = await apiPrincipal(stores, "site", at(0));
  const token = await stores.tokens.createToken({
    principalId: principal.id,
    organizationId: null,
    role: null,
    description: null,
    tokenHash: "a".repeat(64),
    createdAt: at(1),
  });
  await stores.tokens.touchLastUsed(token.id, new Date("2026-12-03T01:02:03.004Z"));
  const found = await stores.tokens.findByTokenHash("a".repeat(64));
  assert.is(found?.token.lastUsedAt, "2026-12-03T01:02:03.004Z");
  assert.is(found?.token.role, null);
  assert.equal(found?.grants, []);
});

testEachDatabase(
  tokens,
  "a duplicate hash, an unknown role or an unknown principal is a CONSTRAINT_VIOLATION",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const principal = await apiPrincipal(stores, "site", at(0));
    const input = {
      principalId: principal.id,
      organizationId: null,
      role: "viewer" as const,
      description: null,
      tokenHash: "b".repeat(64),
      createdAt: at(1),
    };
    await stores.tokens.createToken(input);
    await assertDomainError(stores.tokens.createToken(input), "CONSTRAINT_VIOLATION");
    await assertDomainError(
      stores.tokens.createToken({ ...input, tokenHash: "c".repeat(64), role: "owner" as never }),
      "CONSTRAINT_VIOLATION",
    );
    await assertDomainError(
      stores.tokens.createToken({ ...input, tokenHash: "d".repeat(64), principalId: "prn-0000000000000000" }),
      "CONSTRAINT_VIOLATION",
    );
  },
);

const grants = suite("GrantRepository");

testEachDatabase(
  grants,
  "grant and listForPrincipal round-trip; the same grant twice is a CONSTRAINT_VIOLATION",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const principal = await apiPrincipal(stores, "p", at(0));
    const other = await apiPrincipal(stores, "q", at(0));
    const input = workspaceRead(principal.id, "2026-12-02T10:11:12.345Z");
    const grant = await stores.grants.grant(input);
    await stores.grants.grant(workspaceRead(other.id, at(1)));
    assert.ok(isId("grant", grant.id));
    assert.equal(grant, { id: grant.id, ...input });
    assert.equal(await stores.grants.listForPrincipal(principal.id), [grant]);
    await assertDomainError(stores.grants.grant(workspaceRead(principal.id, at(2))), "CONSTRAINT_VIOLATION");
    await assertDomainError(
      stores.grants.grant({ ...workspaceRead(principal.id, at(2)), scopeKind: "team" as never, scopeId: "x" }),
      "CONSTRAINT_VIOLATION",
    );
  },
);

principals.run();
tokens.run();
grants.run();
