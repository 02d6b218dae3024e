// Invariants 1 and 2 (ARCHITECTURE.md), one parameterized suite: a run flag that must stay false is
// refused at every door, and after each attempt the database holds no new row.
// - Invariant 1: no run ever applies without a recorded approval bound to the exact plan, so
//   `auto_apply=true` is refused by both APIs, by the run repository before any write, and by a
//   database CHECK constraint on SQLite and PostgreSQL.
// - Invariant 2: `is_destroy=true` run creation is refused without starting anything, at the same
//   doors.
// Each invariant is a parameter (run-flag-cases.ts: its flag's spellings, its error code, its CHECK constraint); the
// doors only one of them has (approval, the tfe workspace's destroy permissions) follow at the end.
import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { approveRun, createRun, getRun } from "../../../client/src/index.ts";
import { createRun as tfeCreateRun, getWorkspaceByName } from "../../../generated/tfe/client/index.ts";
import { createStores, inTransaction } from "../../src/store/index.ts";
import { countRows, expectNothingWritten } from "../support/database.ts";
import { expectStatus, expectTfeError, expectV1Error, type SdkResult } from "../support/responses.ts";
import { signedInMember } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import {
  RUN_TABLES,
  expectConstraintRefusal,
  expectDomainError,
  expectTranslated,
  hasCheckConstraint,
  rawInsertWithLiteral,
  refusedWithoutWrites,
  seedRunnable,
  type Runnable,
} from "./doors.ts";
import { invariants, type Attributes, type FlagInvariant } from "./run-flag-cases.ts";

/** Request bodies these tests malform on purpose, sent past the SDKs' types. */
type V1RunBody = Parameters<typeof createRun>[0]["body"];
type TfeRunBody = Parameters<typeof tfeCreateRun>[0]["body"];

/** v1 createRun of `body` in the seeded workspace, sent past the SDK's types. */
function v1Create(server: TestServer, r: Runnable, body: unknown) {
  return createRun({ client: server.v1(r.token), path: { workspace_id: r.workspaceId }, body: body as V1RunBody });
}

const suites = new Map<FlagInvariant, ReturnType<typeof suite>>();

for (const inv of invariants) {
  const invariant = suite(inv.title);
  suites.set(inv, invariant);
  const { code, column } = inv;

  testEachServer(
    invariant,
    `v1 createRun: ${column} true fails 422 ${code} in every combination, and writes nothing`,
    async (server) => {
      const r = await seedRunnable(server);
      const relationships = {
        configuration_version: { data: { type: "configuration-versions" as const, id: r.configurationVersionId } },
      };
      const bodies = [
        ...inv.v1Companions.map((companion) => ({
          data: { type: "runs", attributes: { [column]: true, ...companion } },
        })),
        { data: { type: "runs", attributes: { [column]: true, message: inv.v1Message }, relationships } },
      ];
      for (const body of bodies) {
        const result = await expectNothingWritten(server, () => v1Create(server, r, body), RUN_TABLES);
        expectV1Error(result, 422, code);
      }
    },
  );

  testEachServer(
    invariant,
    `v1 createRun through a dashboard session (cookie and CSRF token): ${column} true fails 422 ${code}, and writes nothing`,
    async (server) => {
      const r = await seedRunnable(server);
      const admin = await signedInMember(server, r.organizationName, "admin");
      for (const attributes of inv.dashboardAttributes) {
        const response = await expectNothingWritten(
          server,
          () =>
            admin.session.request("POST", `/v1/workspaces/${r.workspaceId}/runs`, {
              body: { data: { type: "runs", attributes } },
            }),
          RUN_TABLES,
        );
        assert.is(response.status, 422);
        assert.is(((await response.json()) as { errors: Array<{ code: string }> }).errors[0].code, code);
      }
    },
  );

  testEachServer(
    invariant,
    `v1 createRun: non-boolean and misspelled ${column} flags fail 422 DOCUMENT_INVALID, and write nothing`,
    async (server) => {
      const r = await seedRunnable(server);
      for (const [attributes, pointer] of inv.misspelled) {
        const result = await expectNothingWritten(
          server,
          () => v1Create(server, r, { data: { type: "runs", attributes } }),
          RUN_TABLES,
        );
        expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer });
      }
      if (inv.checksMeta) {
        // Outside attributes (data.meta, top-level) it is not a member either.
        const smuggled = await expectNothingWritten(
          server,
          () => v1Create(server, r, { data: { type: "runs", meta: { [column]: true } } }),
          RUN_TABLES,
        );
        expectV1Error(smuggled, 422, "DOCUMENT_INVALID", { pointer: "/data/meta" });
      }
    },
  );

  testEachServer(
    invariant,
    `v1 createRun (property): any JSON value for ${column} other than false is refused with 422, and writes nothing`,
    async (server) => {
      const r = await seedRunnable(server);
      const before = await countRows(server, RUN_TABLES);
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.constant(true),
            fc.jsonValue().filter((value) => value !== false),
          ),
          async (value) => {
            const result = (await v1Create(server, r, {
              data: { type: "runs", attributes: { [column]: value } },
            })) as SdkResult;
            if (value === true) expectV1Error(result, 422, code);
            else expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer: `/data/attributes/${column}` });
            assert.equal(await countRows(server, RUN_TABLES), before);
          },
        ),
        { numRuns: 25 },
      );
    },
  );

  testEachServer(
    invariant,
    `tfe createRun: ${inv.tfeName} true fails 422 invalid_document (with the other flags too), non-booleans too, and nothing is written; unknown spellings are ignored and the run keeps false`,
    async (server) => {
      const r = await seedRunnable(server);
      const relationships = {
        workspace: { data: { type: "workspaces", id: r.workspaceId } },
        "configuration-version": { data: { type: "configuration-versions", id: r.configurationVersionId } },
      };
      /** tfe createRun with `attributes`: 422 invalid_document, and nothing written. */
      const refused = async (attributes: Attributes) => {
        const result = await expectNothingWritten(
          server,
          () =>
            tfeCreateRun({
              client: server.tfe(r.token),
              body: { data: { type: "runs", attributes, relationships } } as unknown as TfeRunBody,
            }),
          RUN_TABLES,
        );
        return expectTfeError(result, 422, "invalid_document");
      };
      for (const attributes of inv.tfeTrue) {
        const error = await refused(attributes);
        if (inv.tfeCodeIsOwn) assert.is(error.code, code);
        assert.match(error.detail!, inv.tfeDetail);
      }
      for (const attributes of inv.tfeNonBoolean) await refused(attributes);
      // An attribute the compatibility surface does not know cannot turn the flag on.
      const ignored = await tfeCreateRun({
        client: server.tfe(r.token),
        body: { data: { type: "runs", attributes: inv.tfeIgnored, relationships } } as unknown as TfeRunBody,
      });
      const run = expectStatus(ignored, 201).data;
      assert.is(run.attributes[inv.tfeName], false);
      const row = await server.db.knex("runs").where({ id: run.id }).first<Record<string, unknown>>(column);
      assert.is(Boolean(row[column]), false);
    },
  );

  testEachServer(
    invariant,
    `RunRepository.create: every non-false ${inv.inputName} spelling is a DomainError ${code} before any write`,
    async (server) => {
      const r = await seedRunnable(server);
      const runs = server.services.stores.runs;
      for (const [label, extra] of inv.repositoryAttempts) {
        const error = await refusedWithoutWrites(server, label, () =>
          runs.create({ ...r.repositoryInput(), ...extra }),
        );
        expectDomainError(error, code, label);
      }
      // Inside a transaction, through the stores a command would use.
      const inTx = await refusedWithoutWrites(server, "in a transaction", () =>
        inTransaction(server.db, (stores) => stores.runs.create({ ...r.repositoryInput(), [inv.inputName]: true })),
      );
      expectDomainError(inTx, code, "in a transaction");
      // A fresh repository on the raw knex (no service wiring) refuses the same way.
      const fresh = await refusedWithoutWrites(server, "fresh stores", () =>
        createStores(server.db.knex, server.dialect).runs.create({ ...r.repositoryInput(), [column]: true }),
      );
      expectDomainError(fresh, code, "fresh stores");
      // Control: the same input with the flag false (or absent) is accepted, so the refusals above were about the flag.
      const before = await countRows(server, ["runs"]);
      await runs.create({ ...r.repositoryInput(), [inv.inputName]: false });
      await runs.create(r.repositoryInput());
      assert.equal(await countRows(server, ["runs"]), { runs: before.runs + 2 });
    },
  );

  testEachServer(
    invariant,
    `raw SQL: inserts with ${column} true fail on the ${inv.constraint} CHECK, translated to ${code}`,
    async (server) => {
      const r = await seedRunnable(server);
      assert.ok(await hasCheckConstraint(server, inv.constraint), `the runs table has no ${inv.constraint} CHECK`);
      const knex = server.db.knex;
      for (const value of [true, 1, "true", "t"]) {
        const label = `knex insert ${column}=${JSON.stringify(value)}`;
        const error = await refusedWithoutWrites(server, label, async () =>
          knex("runs").insert({ ...(await r.rawRow()), [column]: value }),
        );
        expectTranslated(server, error, code, label);
      }
      for (const literal of ["true", "not false", "(1 = 1)"]) {
        const label = `raw insert ${column}=${literal}`;
        const error = await refusedWithoutWrites(server, label, async () =>
          rawInsertWithLiteral(server, await r.rawRow(), column, literal),
        );
        expectTranslated(server, error, code, label);
      }
      const inTx = await refusedWithoutWrites(server, "insert in a transaction", async () => {
        const row = await r.rawRow();
        return knex.transaction((trx) => trx("runs").insert({ ...row, [column]: true }));
      });
      expectTranslated(server, inTx, code, "insert in a transaction");
      // NULL is not false either (NOT NULL refuses it; any constraint code will do).
      const nullError = await refusedWithoutWrites(server, `${column}=NULL`, async () =>
        knex("runs").insert({ ...(await r.rawRow()), [column]: null }),
      );
      expectConstraintRefusal(server, nullError, `${column}=NULL`);
      // Control: the same raw row with false is accepted, so the refusals above were about the flag.
      const before = await countRows(server, ["runs"]);
      await knex("runs").insert({ ...(await r.rawRow()), [column]: false });
      assert.equal(await countRows(server, ["runs"]), { runs: before.runs + 1 });
    },
  );

  testEachServer(
    invariant,
    `raw SQL: updating an existing run to ${column} true fails on the CHECK, translated to ${code}, and the row keeps false`,
    async (server) => {
      const r = await seedRunnable(server);
      const knex = server.db.knex;
      const viaKnex = await refusedWithoutWrites(server, "knex update", () =>
        knex("runs")
          .where({ id: r.acceptedRun.id })
          .update({ [column]: true }),
      );
      expectTranslated(server, viaKnex, code, "knex update");
      const viaRaw = await refusedWithoutWrites(server, "raw update", () =>
        knex.raw(`update runs set ${column} = true where id = ?`, [r.acceptedRun.id]),
      );
      expectTranslated(server, viaRaw, code, "raw update");
      const row = await knex("runs").where({ id: r.acceptedRun.id }).first<Record<string, unknown>>(column);
      assert.is(Boolean(row[column]), false);
      const shown = expectStatus(
        await getRun({ client: server.v1(r.token), path: { run_id: r.acceptedRun.id } }),
        200,
      ).data;
      assert.is(shown.attributes[column], false);
    },
  );
}

// Doors only invariant 1 has: approval is the only way to apply.
const approval = suites.get(invariants[0])!;

/** The seeded run, as v1 shows it, is still pending: nothing was approved or queued. */
async function assertStillPending(server: TestServer, r: Runnable): Promise<void> {
  const shown = expectStatus(
    await getRun({ client: server.v1(r.token), path: { run_id: r.acceptedRun.id } }),
    200,
  ).data;
  assert.is(shown.attributes.status, "pending");
}

testEachServer(
  approval,
  "approveRun: a run without a recorded plan cannot be approved (409), records no review, queues nothing, and stays pending",
  async (server) => {
    const r = await seedRunnable(server);
    for (const planDigest of [
      "0".repeat(64),
      r.acceptedRun.attributes.config_digest,
      r.acceptedRun.attributes.input_digest,
    ]) {
      const result = await expectNothingWritten(
        server,
        () =>
          approveRun({
            client: server.v1(r.token),
            path: { run_id: r.acceptedRun.id },
            body: { data: { type: "approvals", attributes: { plan_digest: planDigest } } },
          }),
        RUN_TABLES,
      );
      expectV1Error(result, 409, "RUN_TRANSITION_INVALID");
    }
    await assertStillPending(server, r);
  },
);

testEachServer(
  approval,
  "there is no apply action besides approval: v1 has none (404); the tfe apply action is the bound approval, so a run without a plan gets 409; the run stays pending",
  async (server) => {
    const r = await seedRunnable(server);
    for (const [client, url, status] of [
      // The CLI's "yes" (contract §7.1) is recorded as the approval of the run's own plan: with no plan there is nothing to approve.
      [server.tfe(r.token), `/api/v2/runs/${r.acceptedRun.id}/actions/apply`, 409],
      [server.v1(r.token), `/v1/runs/${r.acceptedRun.id}/actions/apply`, 404],
      [server.v1(r.token), `/v1/runs/${r.acceptedRun.id}/apply`, 404],
    ] as const) {
      const result = (await expectNothingWritten(
        server,
        () => client.post({ url, body: {}, headers: { Authorization: `Bearer ${r.token}` } }),
        RUN_TABLES,
      )) as SdkResult;
      assert.is(result.response.status, status, url);
    }
    await assertStillPending(server, r);
  },
);

// A door only invariant 2 has: the tfe workspace's destroy permissions.
testEachServer(
  suites.get(invariants[1])!,
  "tfe workspaces never advertise destroy: allow-destroy-plan false, can-queue-destroy false, is-destroyable false",
  async (server) => {
    const r = await seedRunnable(server);
    const workspace = expectStatus(
      await getWorkspaceByName({
        client: server.tfe(r.token),
        path: { organization_name: r.organizationName, workspace_name: "networking" },
      }),
      200,
    ).data;
    assert.is(workspace.attributes["allow-destroy-plan"], false);
    assert.is(workspace.attributes.permissions["can-queue-destroy"], false);
    assert.is(workspace.attributes.actions["is-destroyable"], false);
  },
);

for (const invariant of suites.values()) invariant.run();
