// Invariant 1 (ARCHITECTURE.md): no run ever applies without a recorded approval bound to the
// exact plan. `auto_apply=true` is refused by both APIs, by the run repository before any write,
// and by a database CHECK constraint on SQLite and PostgreSQL. Every door is tried here, and
// after each attempt the database holds no new row.
import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { approveRun, createRun, getRun } from "../../../client/src/index.ts";
import { createRun as tfeCreateRun } from "../../../generated/tfe/client/index.ts";
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

const CODE = "RUN_AUTO_APPLY_FORBIDDEN";

const invariant = suite("invariant 1: no apply without a bound approval (auto_apply is always refused)");

testEachServer(invariant, "v1 createRun: auto_apply true fails 422 RUN_AUTO_APPLY_FORBIDDEN in every combination, and writes nothing", async (server) => {
  const r = await seedRunnable(server);
  const relationship = { configuration_version: { data: { type: "configuration-versions" as const, id: r.configurationVersionId } } };
  const bodies = [
    { data: { type: "runs" as const, attributes: { auto_apply: true } } },
    { data: { type: "runs" as const, attributes: { auto_apply: true, is_destroy: false } } },
    { data: { type: "runs" as const, attributes: { auto_apply: true, kind: "speculative" as const } } },
    { data: { type: "runs" as const, attributes: { auto_apply: true, message: "please" }, relationships: relationship } },
  ];
  for (const body of bodies) {
    const result = await expectNothingWritten(server, () => createRun({ client: server.v1(r.token), path: { workspace_id: r.workspaceId }, body }), RUN_TABLES);
    expectV1Error(result, 422, CODE);
  }
});

testEachServer(invariant, "v1 createRun through a dashboard session (cookie and CSRF token): auto_apply true fails 422 RUN_AUTO_APPLY_FORBIDDEN, and writes nothing", async (server) => {
  const r = await seedRunnable(server);
  const admin = await signedInMember(server, r.organizationName, "admin");
  for (const attributes of [{ auto_apply: true }, { auto_apply: true, kind: "speculative" }]) {
    const response = await expectNothingWritten(server, () => admin.session.request("POST", `/v1/workspaces/${r.workspaceId}/runs`, { body: { data: { type: "runs", attributes } } }), RUN_TABLES);
    assert.is(response.status, 422);
    assert.is(((await response.json()) as { errors: Array<{ code: string }> }).errors[0].code, CODE);
  }
});

testEachServer(invariant, "v1 createRun: non-boolean and misspelled auto-apply flags fail 422 DOCUMENT_INVALID, and write nothing", async (server) => {
  const r = await seedRunnable(server);
  const attempts: Array<[Record<string, unknown>, string]> = [
    [{ auto_apply: "true" }, "/data/attributes/auto_apply"],
    [{ auto_apply: 1 }, "/data/attributes/auto_apply"],
    [{ auto_apply: null }, "/data/attributes/auto_apply"],
    [{ auto_apply: [true] }, "/data/attributes/auto_apply"],
    [{ "auto-apply": true }, "/data/attributes/auto-apply"],
    [{ autoApply: true }, "/data/attributes/autoApply"],
  ];
  for (const [attributes, pointer] of attempts) {
    const result = await expectNothingWritten(server, () => createRun({ client: server.v1(r.token), path: { workspace_id: r.workspaceId }, body: { data: { type: "runs", attributes } } as any }), RUN_TABLES);
    expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer });
  }
  // Outside attributes (data.meta, top-level) it is not a member either.
  const smuggled = await expectNothingWritten(server, () => createRun({ client: server.v1(r.token), path: { workspace_id: r.workspaceId }, body: { data: { type: "runs", meta: { auto_apply: true } } } as any }), RUN_TABLES);
  expectV1Error(smuggled, 422, "DOCUMENT_INVALID", { pointer: "/data/meta" });
});

testEachServer(invariant, "v1 createRun (property): any JSON value for auto_apply other than false is refused with 422, and writes nothing", async (server) => {
  const r = await seedRunnable(server);
  const before = await countRows(server, RUN_TABLES);
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.constant(true), fc.jsonValue().filter((value) => value !== false)), async (value) => {
      const result = (await createRun({
        client: server.v1(r.token),
        path: { workspace_id: r.workspaceId },
        body: { data: { type: "runs", attributes: { auto_apply: value } } } as any,
      })) as SdkResult;
      if (value === true) expectV1Error(result, 422, CODE);
      else expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer: "/data/attributes/auto_apply" });
      assert.equal(await countRows(server, RUN_TABLES), before);
    }),
    { numRuns: 25 },
  );
});

testEachServer(invariant, "tfe createRun: auto-apply true fails 422 invalid_document (with or without plan-only), and writes nothing; a snake_case auto_apply is ignored and the run stays manual", async (server) => {
  const r = await seedRunnable(server);
  const relationships = {
    workspace: { data: { type: "workspaces", id: r.workspaceId } },
    "configuration-version": { data: { type: "configuration-versions", id: r.configurationVersionId } },
  };
  for (const attributes of [{ "auto-apply": true }, { "auto-apply": true, "plan-only": true }, { "auto-apply": true, "is-destroy": false }, { "auto-apply": "true" }, { "auto-apply": 1 }]) {
    const result = await expectNothingWritten(server, () => tfeCreateRun({ client: server.tfe(r.token), body: { data: { type: "runs", attributes, relationships } } as any }), RUN_TABLES);
    const error = expectTfeError(result, 422, "invalid_document");
    if (attributes["auto-apply"] === true) assert.match(error.detail!, /-auto-approve/);
  }
  // An attribute the compatibility surface does not know cannot turn auto-apply on.
  const ignored = await tfeCreateRun({ client: server.tfe(r.token), body: { data: { type: "runs", attributes: { auto_apply: true, autoApply: true }, relationships } } as any });
  const run = expectStatus(ignored, 201)!.data;
  assert.is(run.attributes["auto-apply"], false);
  const row = await server.db.knex("runs").where({ id: run.id }).first("auto_apply");
  assert.is(Boolean(row.auto_apply), false);
});

testEachServer(invariant, "RunRepository.create: every truthy or non-false auto-apply spelling is a DomainError RUN_AUTO_APPLY_FORBIDDEN before any write", async (server) => {
  const r = await seedRunnable(server);
  const runs = server.services.stores.runs;
  const attempts: Array<[string, Record<string, unknown>]> = [
    ["autoApply: true", { autoApply: true }],
    ["autoApply: 'true'", { autoApply: "true" }],
    ["autoApply: 1", { autoApply: 1 }],
    ["autoApply: 'false' (a string)", { autoApply: "false" }],
    ["autoApply: 0", { autoApply: 0 }],
    ["autoApply: null", { autoApply: null }],
    ["autoApply: {}", { autoApply: {} }],
    ["auto_apply: true", { auto_apply: true }],
    ["auto_apply: 'true'", { auto_apply: "true" }],
    ["auto_apply: 1", { auto_apply: 1 }],
    ["autoApply: false with auto_apply: true", { autoApply: false, auto_apply: true }],
    ["autoApply: true with auto_apply: false", { autoApply: true, auto_apply: false }],
    ["autoApply: true with isDestroy: false", { autoApply: true, isDestroy: false }],
  ];
  for (const [label, extra] of attempts) {
    const error = await refusedWithoutWrites(server, label, () => runs.create({ ...r.repositoryInput(), ...extra } as any));
    expectDomainError(error, CODE, label);
  }
  // Inside a transaction, through the stores a command would use.
  const inTx = await refusedWithoutWrites(server, "in a transaction", () => inTransaction(server.db, (stores) => stores.runs.create({ ...r.repositoryInput(), autoApply: true } as any)));
  expectDomainError(inTx, CODE, "in a transaction");
  // A fresh repository on the raw knex (no service wiring) refuses the same way.
  const fresh = await refusedWithoutWrites(server, "fresh stores", () => createStores(server.db.knex, server.dialect).runs.create({ ...r.repositoryInput(), auto_apply: true } as any));
  expectDomainError(fresh, CODE, "fresh stores");
  // Control: the same input with the flag false (or absent) is accepted, so the refusals above were about the flag.
  const before = await countRows(server, ["runs"]);
  await runs.create({ ...r.repositoryInput(), autoApply: false });
  await runs.create(r.repositoryInput());
  assert.equal(await countRows(server, ["runs"]), { runs: before.runs + 2 });
});

testEachServer(invariant, "raw SQL: inserts with auto_apply true fail on the runs_auto_apply_false CHECK, translated to RUN_AUTO_APPLY_FORBIDDEN", async (server) => {
  const r = await seedRunnable(server);
  assert.ok(await hasCheckConstraint(server, "runs_auto_apply_false"), "the runs table has no runs_auto_apply_false CHECK");
  const knex = server.db.knex;
  for (const value of [true, 1, "true", "t"]) {
    const label = `knex insert auto_apply=${JSON.stringify(value)}`;
    const error = await refusedWithoutWrites(server, label, async () => knex("runs").insert({ ...(await r.rawRow()), auto_apply: value }));
    expectTranslated(server, error, CODE, label);
  }
  for (const literal of ["true", "not false", "(1 = 1)"]) {
    const label = `raw insert auto_apply=${literal}`;
    const error = await refusedWithoutWrites(server, label, async () => rawInsertWithLiteral(server, await r.rawRow(), "auto_apply", literal));
    expectTranslated(server, error, CODE, label);
  }
  const inTx = await refusedWithoutWrites(server, "insert in a transaction", async () => {
    const row = await r.rawRow();
    return knex.transaction((trx) => trx("runs").insert({ ...row, auto_apply: true }));
  });
  expectTranslated(server, inTx, CODE, "insert in a transaction");
  // NULL is not false either (NOT NULL refuses it; any constraint code will do).
  const nullError = await refusedWithoutWrites(server, "auto_apply=NULL", async () => knex("runs").insert({ ...(await r.rawRow()), auto_apply: null }));
  expectConstraintRefusal(server, nullError, "auto_apply=NULL");
  // Control: the same raw row with false is accepted, so the refusals above were about the flag.
  const before = await countRows(server, ["runs"]);
  await knex("runs").insert({ ...(await r.rawRow()), auto_apply: false });
  assert.equal(await countRows(server, ["runs"]), { runs: before.runs + 1 });
});

testEachServer(invariant, "raw SQL: updating an existing run to auto_apply true fails on the CHECK, translated to RUN_AUTO_APPLY_FORBIDDEN, and the row keeps false", async (server) => {
  const r = await seedRunnable(server);
  const knex = server.db.knex;
  const viaKnex = await refusedWithoutWrites(server, "knex update", () => knex("runs").where({ id: r.acceptedRun.id }).update({ auto_apply: true }));
  expectTranslated(server, viaKnex, CODE, "knex update");
  const viaRaw = await refusedWithoutWrites(server, "raw update", () => knex.raw("update runs set auto_apply = true where id = ?", [r.acceptedRun.id]));
  expectTranslated(server, viaRaw, CODE, "raw update");
  const row = await knex("runs").where({ id: r.acceptedRun.id }).first("auto_apply");
  assert.is(Boolean(row.auto_apply), false);
  const shown = expectStatus(await getRun({ client: server.v1(r.token), path: { run_id: r.acceptedRun.id } }), 200)!.data;
  assert.is(shown.attributes.auto_apply, false);
});

testEachServer(invariant, "approveRun: a run without a recorded plan cannot be approved (409), records no review, queues nothing, and stays pending", async (server) => {
  const r = await seedRunnable(server);
  for (const planDigest of ["0".repeat(64), r.acceptedRun.attributes.config_digest, r.acceptedRun.attributes.input_digest]) {
    const result = await expectNothingWritten(
      server,
      () => approveRun({ client: server.v1(r.token), path: { run_id: r.acceptedRun.id }, body: { data: { type: "approvals", attributes: { plan_digest: planDigest } } } }),
      RUN_TABLES,
    );
    expectV1Error(result, 409, "RUN_TRANSITION_INVALID");
  }
  const shown = expectStatus(await getRun({ client: server.v1(r.token), path: { run_id: r.acceptedRun.id } }), 200)!.data;
  assert.is(shown.attributes.status, "pending");
});

testEachServer(invariant, "there is no apply action besides approval: v1 has none (404); the tfe apply action is the bound approval, so a run without a plan gets 409; the run stays pending", async (server) => {
  const r = await seedRunnable(server);
  for (const [client, url, status] of [
    // The CLI's "yes" (contract §7.1) is recorded as the approval of the run's own plan: with no plan there is nothing to approve.
    [server.tfe(r.token), `/api/v2/runs/${r.acceptedRun.id}/actions/apply`, 409],
    [server.v1(r.token), `/v1/runs/${r.acceptedRun.id}/actions/apply`, 404],
    [server.v1(r.token), `/v1/runs/${r.acceptedRun.id}/apply`, 404],
  ] as const) {
    const result = (await expectNothingWritten(server, () => client.post({ url: url as any, body: {}, headers: { Authorization: `Bearer ${r.token}` } }), RUN_TABLES)) as SdkResult;
    assert.is(result.response.status, status, url);
  }
  const shown = expectStatus(await getRun({ client: server.v1(r.token), path: { run_id: r.acceptedRun.id } }), 200)!.data;
  assert.is(shown.attributes.status, "pending");
});

invariant.run();
