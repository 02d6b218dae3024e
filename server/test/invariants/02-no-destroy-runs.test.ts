// Invariant 2 (ARCHITECTURE.md): `is_destroy=true` run creation is refused without starting
// anything: by both APIs, by the run repository before any write, and by a database CHECK
// constraint on SQLite and PostgreSQL. Every door is tried here, and after each attempt the
// database holds no new row.
import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createRun, getRun } from "../../../client/src/index.ts";
import { createRun as tfeCreateRun, getWorkspaceByName } from "../../../generated/tfe/client/index.ts";
import { createStores, inTransaction } from "../../src/store/index.ts";
import { countRows, expectNothingWritten, expectStatus, expectTfeError, expectV1Error, type SdkResult } from "../support/factories.ts";
import { testEachServer } from "../support/test-server.ts";
import {
  RUN_TABLES,
  expectConstraintRefusal,
  expectDomainError,
  expectTranslated,
  hasCheckConstraint,
  rawInsertWithLiteral,
  refusedWithoutWrites,
  seedRunnable,
} from "./doors.ts";
import { signedInMember } from "../support/sessions.ts";

const CODE = "RUN_DESTROY_FORBIDDEN";

const invariant = suite("invariant 2: no destroy runs");

testEachServer(invariant, "v1 createRun: is_destroy true fails 422 RUN_DESTROY_FORBIDDEN in every combination, and writes nothing", async (server) => {
  const r = await seedRunnable(server);
  const relationship = { configuration_version: { data: { type: "configuration-versions" as const, id: r.configurationVersionId } } };
  const bodies = [
    { data: { type: "runs" as const, attributes: { is_destroy: true } } },
    { data: { type: "runs" as const, attributes: { is_destroy: true, auto_apply: false } } },
    { data: { type: "runs" as const, attributes: { is_destroy: true, kind: "speculative" as const } } },
    { data: { type: "runs" as const, attributes: { is_destroy: true, message: "tear down" }, relationships: relationship } },
  ];
  for (const body of bodies) {
    const result = await expectNothingWritten(server, () => createRun({ client: server.v1(r.token), path: { workspace_id: r.workspaceId }, body }), RUN_TABLES);
    expectV1Error(result, 422, CODE);
  }
});

testEachServer(invariant, "v1 createRun through a dashboard session (cookie and CSRF token): is_destroy true fails 422 RUN_DESTROY_FORBIDDEN, and writes nothing", async (server) => {
  const r = await seedRunnable(server);
  const admin = await signedInMember(server, r.organizationName, "admin");
  const response = await expectNothingWritten(server, () => admin.session.request("POST", `/v1/workspaces/${r.workspaceId}/runs`, { body: { data: { type: "runs", attributes: { is_destroy: true } } } }), RUN_TABLES);
  assert.is(response.status, 422);
  assert.is(((await response.json()) as { errors: Array<{ code: string }> }).errors[0].code, "RUN_DESTROY_FORBIDDEN");
});

testEachServer(invariant, "v1 createRun: non-boolean and misspelled destroy flags fail 422 DOCUMENT_INVALID, and write nothing", async (server) => {
  const r = await seedRunnable(server);
  const attempts: Array<[Record<string, unknown>, string]> = [
    [{ is_destroy: "true" }, "/data/attributes/is_destroy"],
    [{ is_destroy: 1 }, "/data/attributes/is_destroy"],
    [{ is_destroy: null }, "/data/attributes/is_destroy"],
    [{ "is-destroy": true }, "/data/attributes/is-destroy"],
    [{ isDestroy: true }, "/data/attributes/isDestroy"],
    [{ destroy: true }, "/data/attributes/destroy"],
    [{ kind: "destroy" }, "/data/attributes/kind"],
  ];
  for (const [attributes, pointer] of attempts) {
    const result = await expectNothingWritten(server, () => createRun({ client: server.v1(r.token), path: { workspace_id: r.workspaceId }, body: { data: { type: "runs", attributes } } as any }), RUN_TABLES);
    expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer });
  }
});

testEachServer(invariant, "v1 createRun (property): any JSON value for is_destroy other than false is refused with 422, and writes nothing", async (server) => {
  const r = await seedRunnable(server);
  const before = await countRows(server, RUN_TABLES);
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.constant(true), fc.jsonValue().filter((value) => value !== false)), async (value) => {
      const result = (await createRun({
        client: server.v1(r.token),
        path: { workspace_id: r.workspaceId },
        body: { data: { type: "runs", attributes: { is_destroy: value } } } as any,
      })) as SdkResult;
      if (value === true) expectV1Error(result, 422, CODE);
      else expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer: "/data/attributes/is_destroy" });
      assert.equal(await countRows(server, RUN_TABLES), before);
    }),
    { numRuns: 25 },
  );
});

testEachServer(invariant, "tfe createRun: is-destroy true fails 422 invalid_document about destroy (also with -auto-approve and plan-only), and writes nothing", async (server) => {
  const r = await seedRunnable(server);
  const relationships = {
    workspace: { data: { type: "workspaces", id: r.workspaceId } },
    "configuration-version": { data: { type: "configuration-versions", id: r.configurationVersionId } },
  };
  for (const attributes of [{ "is-destroy": true }, { "is-destroy": true, "auto-apply": true }, { "is-destroy": true, "auto-apply": false }, { "is-destroy": true, "plan-only": true }]) {
    const result = await expectNothingWritten(server, () => tfeCreateRun({ client: server.tfe(r.token), body: { data: { type: "runs", attributes, relationships } } as any }), RUN_TABLES);
    const error = expectTfeError(result, 422, "invalid_document");
    assert.is(error.code, CODE);
    assert.match(error.detail!, /destroy/i);
  }
  for (const attributes of [{ "is-destroy": "true" }, { "is-destroy": 1 }]) {
    const result = await expectNothingWritten(server, () => tfeCreateRun({ client: server.tfe(r.token), body: { data: { type: "runs", attributes, relationships } } as any }), RUN_TABLES);
    expectTfeError(result, 422, "invalid_document");
  }
  // An attribute the compatibility surface does not know cannot make a destroy run.
  const ignored = await tfeCreateRun({ client: server.tfe(r.token), body: { data: { type: "runs", attributes: { is_destroy: true, isDestroy: true }, relationships } } as any });
  const run = expectStatus(ignored, 201)!.data;
  assert.is(run.attributes["is-destroy"], false);
  const row = await server.db.knex("runs").where({ id: run.id }).first("is_destroy");
  assert.is(Boolean(row.is_destroy), false);
});

testEachServer(invariant, "tfe workspaces never advertise destroy: allow-destroy-plan false, can-queue-destroy false, is-destroyable false", async (server) => {
  const r = await seedRunnable(server);
  const workspace = expectStatus(await getWorkspaceByName({ client: server.tfe(r.token), path: { organization_name: r.organizationName, workspace_name: "networking" } }), 200)!.data;
  assert.is(workspace.attributes["allow-destroy-plan"], false);
  assert.is(workspace.attributes.permissions["can-queue-destroy"], false);
  assert.is(workspace.attributes.actions["is-destroyable"], false);
});

testEachServer(invariant, "RunRepository.create: every non-false destroy spelling is a DomainError RUN_DESTROY_FORBIDDEN before any write", async (server) => {
  const r = await seedRunnable(server);
  const runs = server.services.stores.runs;
  const attempts: Array<[string, Record<string, unknown>]> = [
    ["isDestroy: true", { isDestroy: true }],
    ["isDestroy: 'true'", { isDestroy: "true" }],
    ["isDestroy: 1", { isDestroy: 1 }],
    ["isDestroy: 0", { isDestroy: 0 }],
    ["isDestroy: null", { isDestroy: null }],
    ["isDestroy: []", { isDestroy: [] }],
    ["is_destroy: true", { is_destroy: true }],
    ["is_destroy: 'true'", { is_destroy: "true" }],
    ["is_destroy: 1", { is_destroy: 1 }],
    ["isDestroy: false with is_destroy: true", { isDestroy: false, is_destroy: true }],
    ["isDestroy: true with is_destroy: false", { isDestroy: true, is_destroy: false }],
    ["isDestroy: true with autoApply: false", { isDestroy: true, autoApply: false }],
  ];
  for (const [label, extra] of attempts) {
    const error = await refusedWithoutWrites(server, label, () => runs.create({ ...r.repositoryInput(), ...extra } as any));
    expectDomainError(error, CODE, label);
  }
  const inTx = await refusedWithoutWrites(server, "in a transaction", () => inTransaction(server.db, (stores) => stores.runs.create({ ...r.repositoryInput(), isDestroy: true } as any)));
  expectDomainError(inTx, CODE, "in a transaction");
  const fresh = await refusedWithoutWrites(server, "fresh stores", () => createStores(server.db.knex, server.dialect).runs.create({ ...r.repositoryInput(), is_destroy: true } as any));
  expectDomainError(fresh, CODE, "fresh stores");
  // Control: the same input with the flag false (or absent) is accepted.
  const before = await countRows(server, ["runs"]);
  await runs.create({ ...r.repositoryInput(), isDestroy: false });
  await runs.create(r.repositoryInput());
  assert.equal(await countRows(server, ["runs"]), { runs: before.runs + 2 });
});

testEachServer(invariant, "raw SQL: inserts with is_destroy true fail on the runs_is_destroy_false CHECK, translated to RUN_DESTROY_FORBIDDEN", async (server) => {
  const r = await seedRunnable(server);
  assert.ok(await hasCheckConstraint(server, "runs_is_destroy_false"), "the runs table has no runs_is_destroy_false CHECK");
  const knex = server.db.knex;
  for (const value of [true, 1, "true", "t"]) {
    const label = `knex insert is_destroy=${JSON.stringify(value)}`;
    const error = await refusedWithoutWrites(server, label, async () => knex("runs").insert({ ...(await r.rawRow()), is_destroy: value }));
    expectTranslated(server, error, CODE, label);
  }
  for (const literal of ["true", "not false", "(1 = 1)"]) {
    const label = `raw insert is_destroy=${literal}`;
    const error = await refusedWithoutWrites(server, label, async () => rawInsertWithLiteral(server, await r.rawRow(), "is_destroy", literal));
    expectTranslated(server, error, CODE, label);
  }
  const inTx = await refusedWithoutWrites(server, "insert in a transaction", async () => {
    const row = await r.rawRow();
    return knex.transaction((trx) => trx("runs").insert({ ...row, is_destroy: true }));
  });
  expectTranslated(server, inTx, CODE, "insert in a transaction");
  const nullError = await refusedWithoutWrites(server, "is_destroy=NULL", async () => knex("runs").insert({ ...(await r.rawRow()), is_destroy: null }));
  expectConstraintRefusal(server, nullError, "is_destroy=NULL");
  const before = await countRows(server, ["runs"]);
  await knex("runs").insert({ ...(await r.rawRow()), is_destroy: false });
  assert.equal(await countRows(server, ["runs"]), { runs: before.runs + 1 });
});

testEachServer(invariant, "raw SQL: updating an existing run to is_destroy true fails on the CHECK, translated to RUN_DESTROY_FORBIDDEN, and the row keeps false", async (server) => {
  const r = await seedRunnable(server);
  const knex = server.db.knex;
  const viaKnex = await refusedWithoutWrites(server, "knex update", () => knex("runs").where({ id: r.acceptedRun.id }).update({ is_destroy: true }));
  expectTranslated(server, viaKnex, CODE, "knex update");
  const viaRaw = await refusedWithoutWrites(server, "raw update", () => knex.raw("update runs set is_destroy = true where id = ?", [r.acceptedRun.id]));
  expectTranslated(server, viaRaw, CODE, "raw update");
  const row = await knex("runs").where({ id: r.acceptedRun.id }).first("is_destroy");
  assert.is(Boolean(row.is_destroy), false);
  const shown = expectStatus(await getRun({ client: server.v1(r.token), path: { run_id: r.acceptedRun.id } }), 200)!.data;
  assert.is(shown.attributes.is_destroy, false);
});

invariant.run();
