import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import { checkpointChain, checkpointDueChains } from "../../src/commands/audit-checkpoints.ts";
import { exportStoredAuditChain, verifyStoredAuditChain } from "../../src/commands/audit-verification.ts";
import type { Services } from "../../src/commands/services.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { auditChainOf, type AuditChainReport } from "../../src/domain/audit-chain.ts";
import { inTransaction } from "../../src/store/index.ts";
import { createOrganizationWithToken, createToken, withTamperedMac } from "../support/factories.ts";
import { expectV1Error, type SdkResult } from "../support/responses.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import type { components } from "../../../generated/v1/types.gen.ts";

type Schemas = components["schemas"];

const history = suite("audit history: a hash chain per organization, signed checkpoints, verify-audit");

async function get<T = unknown>(server: TestServer, token: string, path: string): Promise<SdkResult & { data?: T }> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    headers: { Authorization: `Bearer ${token}`, Accept: "application/vnd.api+json" },
  });
  const body: unknown = await response.json();
  return response.ok ? { response, data: body as T } : { response, error: body };
}

/** Records `count` events in the organization's chain, each in its own transaction. */
async function recordEvents(
  services: Services,
  organizationId: string,
  count: number,
  label = "test.event",
): Promise<void> {
  for (let i = 0; i < count; i++) {
    await inTransaction(services.db, (stores) =>
      stores.audit.recordAction(
        { organizationId, actorId: null, createdAt: services.clock() },
        label,
        ["things", `thing-${i}`],
        { n: i, note: "ü\u2028" },
      ),
    );
  }
}

function expectProblem(report: AuditChainReport, position: number, words: RegExp): void {
  assert.ok(report.problem, `expected a problem at ${position}, the chain verified: ${JSON.stringify(report)}`);
  assert.is(report.problem.position, position, report.problem.message);
  assert.match(report.problem.message, words);
}

/** The chain's rows, by position. */
async function rowAt(server: TestServer, chain: string, sequence: number): Promise<Record<string, unknown>> {
  const row = (await server.db.knex("audit_events").where({ chain, sequence }).first()) as
    Record<string, unknown> | undefined;
  assert.ok(row, `no event at ${sequence}`);
  return row;
}

/** A tampered copy: a fresh organization with 10 events and a checkpoint at 8. */
async function seeded(server: TestServer, name: string) {
  const org = await createOrganizationWithToken(server, name);
  const chain = auditChainOf(org.organizationId);
  const before = (await server.services.stores.audit.head(chain)).size;
  await recordEvents(server.services, org.organizationId, 8 - before);
  const checkpoint = await checkpointChain(server.services, chain);
  assert.is(checkpoint?.treeSize, 8);
  await recordEvents(server.services, org.organizationId, 2, "test.later");
  const clean = await verifyStoredAuditChain(server.services, name);
  assert.is(clean.problem, null, JSON.stringify(clean.problem));
  assert.is(clean.verifiedEvents, 10);
  assert.is(clean.verifiedCheckpoints, 1);
  return { ...org, chain };
}

testEachServer(
  history,
  "every audit write path chains: organization events and deployment events, each link and digest recomputes",
  async (server) => {
    const org = await createOrganizationWithToken(server, "chained");
    // Real commands wrote these (organization and token creation); the token's creation is deployment-level or org-level as the command decides.
    const report = await verifyStoredAuditChain(server.services, "chained");
    assert.is(report.problem, null);
    assert.ok(report.verifiedEvents >= 1, "creating an organization and a token audits in its chain");
    const deployment = await verifyStoredAuditChain(server.services, null);
    assert.is(deployment.problem, null);
    const events = await server.services.stores.audit.listChain(auditChainOf(org.organizationId));
    assert.equal(
      events.map((e) => e.sequence),
      events.map((_, i) => i),
    );
    assert.is(events[0].previousDigest, "0".repeat(64));
    for (let i = 1; i < events.length; i++) assert.is(events[i].previousDigest, events[i - 1].digest);
  },
);

testEachServer(history, "a deleted row is reported at its position", async (server) => {
  const { chain } = await seeded(server, "deleted");
  await server.db.knex("audit_events").where({ chain, sequence: 4 }).delete();
  expectProblem(await verifyStoredAuditChain(server.services, "deleted"), 4, /position 4: event missing/);
});

testEachServer(
  history,
  "an edited field is reported at its position, even with the digest recomputed by the editor",
  async (server) => {
    const { chain } = await seeded(server, "edited");
    await server.db.knex("audit_events").where({ chain, sequence: 3 }).update({ action: "test.innocent" });
    expectProblem(await verifyStoredAuditChain(server.services, "edited"), 3, /position 3: .* was edited/);
    // An editor who also rewrites every later digest is caught by the signed checkpoint.
    const edited = await server.services.stores.audit.listChain(chain);
    const { auditEventDigest } = await import("../../src/domain/audit-chain.ts");
    let previous = edited[3].previousDigest;
    for (const event of edited.slice(3)) {
      const digest = auditEventDigest({ ...event, previousDigest: previous });
      await server.db
        .knex("audit_events")
        .where({ chain, sequence: event.sequence })
        .update({ previous_digest: previous, digest });
      previous = digest;
    }
    await server.db.knex("audit_chain_heads").where({ chain }).update({ head_digest: previous });
    expectProblem(
      await verifyStoredAuditChain(server.services, "edited"),
      0,
      /differ from the signed checkpoint of size 8/,
    );
  },
);

testEachServer(history, "two reordered events are reported at the first of them", async (server) => {
  const { chain } = await seeded(server, "reordered");
  const [a, b] = [await rowAt(server, chain, 5), await rowAt(server, chain, 6)];
  await server.db.knex("audit_events").where({ id: a.id }).update({ sequence: -1 });
  await server.db.knex("audit_events").where({ id: b.id }).update({ sequence: 5 });
  await server.db.knex("audit_events").where({ id: a.id }).update({ sequence: 6 });
  expectProblem(
    await verifyStoredAuditChain(server.services, "reordered"),
    5,
    /position 5: .*(does not link|was edited)/,
  );
});

testEachServer(
  history,
  "a tail truncated after a checkpoint is reported: below the checkpoint by its size, above it by the chain head",
  async (server) => {
    const { chain } = await seeded(server, "truncated");
    await server.db.knex("audit_events").where({ chain }).andWhere("sequence", ">=", 8).delete();
    expectProblem(await verifyStoredAuditChain(server.services, "truncated"), 8, /chain head records 10 events/);
    await server.db
      .knex("audit_chain_heads")
      .where({ chain })
      .update({ size: 6, head_digest: (await rowAt(server, chain, 5)).digest });
    await server.db.knex("audit_events").where({ chain }).andWhere("sequence", ">=", 6).delete();
    expectProblem(
      await verifyStoredAuditChain(server.services, "truncated"),
      6,
      /checkpoint of size 8 covers 8 events, only 6 are present \(truncated\)/,
    );
  },
);

testEachServer(
  history,
  "--from-checkpoint starts at a signed head; a forged checkpoint note is refused",
  async (server) => {
    const { chain } = await seeded(server, "anchored");
    // Damage before the checkpoint is out of scope from it; after it is not.
    await server.db.knex("audit_events").where({ chain, sequence: 2 }).update({ action: "test.innocent" });
    assert.is((await verifyStoredAuditChain(server.services, "anchored", { fromCheckpoint: 8 })).problem, null);
    await server.db.knex("audit_events").where({ chain, sequence: 9 }).update({ target_id: "elsewhere" });
    expectProblem(
      await verifyStoredAuditChain(server.services, "anchored", { fromCheckpoint: 8 }),
      9,
      /position 9: .* was edited/,
    );
    // A rewritten checkpoint (head changed, note re-used) does not verify.
    await server.db
      .knex("audit_checkpoints")
      .where({ chain, tree_size: 8 })
      .update({ head_digest: "f".repeat(64) });
    expectProblem(await verifyStoredAuditChain(server.services, "anchored"), 7, /signed text does not match/);
  },
);

testEachServer(
  history,
  "the export verifies offline with the CLI; a flipped byte, a deleted line and swapped lines exit non-zero with the position",
  async (server) => {
    await seeded(server, "exported");
    const exported = await exportStoredAuditChain(server.services, "exported");
    const dir = mkdtempSync(join(tmpdir(), "ss-audit-"));
    const cli = (text: string) => {
      const file = join(dir, "chain.jsonl");
      writeFileSync(file, text);
      return spawnSync(
        process.execPath,
        ["--import", "tsx", join(REPO_ROOT, "server/src/audit-main.ts"), "--file", file],
        { encoding: "utf8", cwd: REPO_ROOT },
      );
    };
    try {
      const ok = cli(exported);
      assert.is(ok.status, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /OK: .*10 events recomputed, 1 signed checkpoints verified/);
      const lines = exported.trimEnd().split("\n");
      const deleted = cli([...lines.slice(0, 4), ...lines.slice(5)].join("\n"));
      assert.is(deleted.status, 1, deleted.stdout);
      assert.match(deleted.stdout, /first bad position 3: position 3: event missing/);
      const swapped = cli([...lines.slice(0, 3), lines[4], lines[3], ...lines.slice(5)].join("\n"));
      assert.is(swapped.status, 1, swapped.stdout);
      assert.match(
        swapped.stdout,
        /first bad position 2: position 2: event out of order|first bad position 2: position 2: event missing/,
      );
      const flipped = cli(exported.replace('"action":"test.event"', '"action":"test.evenT"'));
      assert.is(flipped.status, 1, flipped.stdout);
      assert.match(flipped.stdout, /first bad position \d+: .*was edited/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

testEachServer(
  history,
  "npm run verify-audit against the database: exit 0 on the intact chain, 1 naming the first bad position after a deletion",
  async (server) => {
    const { chain } = await seeded(server, "online");
    const dir = mkdtempSync(join(tmpdir(), "ss-audit-"));
    const cli = (...args: string[]) =>
      spawnSync("npm", ["run", "--silent", "verify-audit", "--", ...args], {
        encoding: "utf8",
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          STACKSHIP_DATABASE_URL: server.databaseUrl,
          STACKSHIP_DATA_DIR: server.dataDir,
          STACKSHIP_ENCRYPTION_KEY: "",
        },
      });
    try {
      const ok = cli("online");
      assert.is(ok.status, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /OK: organization online .*10 events recomputed, 1 signed checkpoints verified/);
      const exported = cli("online", "--export", join(dir, "online.jsonl"));
      assert.is(exported.status, 0, exported.stdout + exported.stderr);
      await server.db.knex("audit_events").where({ chain, sequence: 9 }).delete();
      const fromCheckpoint = cli("online", "--from-checkpoint", "8");
      assert.is(fromCheckpoint.status, 1, fromCheckpoint.stdout + fromCheckpoint.stderr);
      assert.match(fromCheckpoint.stdout, /FAILED: .*first bad position 9: .*chain head records 10 events/);
      // The export made before the deletion still verifies offline against the published key.
      const { verifierKey } = await (
        await import("../../src/commands/audit-checkpoints.ts")
      ).auditVerifierKey(server.services);
      const offline = cli("--file", join(dir, "online.jsonl"), "--key", verifierKey);
      assert.is(offline.status, 0, offline.stdout + offline.stderr);
      const wrongKey = cli(
        "--file",
        join(dir, "online.jsonl"),
        "--key",
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
      );
      assert.is(wrongKey.status, 1, wrongKey.stdout);
      assert.match(wrongKey.stdout, /first bad position 7: checkpoint of size 8: no signature by PeterNeumann/);
      const usage = cli("online", "--deployment");
      assert.is(usage.status, 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

testEachServer(history, "checkpoints fall due after N events or T minutes, once per size", async (server) => {
  const org = await createOrganizationWithToken(server, "due");
  const chain = auditChainOf(org.organizationId);
  server.services.config.auditCheckpoint = { everyEvents: 5, everyMs: 60 * 60_000 };
  const size = (await server.services.stores.audit.head(chain)).size;
  assert.ok(size < 5);
  assert.equal(
    (await checkpointDueChains(server.services)).filter((c) => c.chain === chain),
    [],
  );
  await recordEvents(server.services, org.organizationId, 5 - size);
  const due = (await checkpointDueChains(server.services)).filter((c) => c.chain === chain);
  assert.equal(
    due.map((c) => c.treeSize),
    [5],
  );
  assert.equal(await checkpointDueChains(server.services), []);
  // One more event, young: not due by count; due once the time limit is zero.
  await recordEvents(server.services, org.organizationId, 1);
  assert.equal(
    (await checkpointDueChains(server.services)).filter((c) => c.chain === chain),
    [],
  );
  server.services.config.auditCheckpoint = { everyEvents: 5, everyMs: 0 };
  assert.equal(
    (await checkpointDueChains(server.services)).filter((c) => c.chain === chain).map((c) => c.treeSize),
    [6],
  );
});

testEachServer(
  history,
  "the API pages events and checkpoints for an org admin; a bad cursor is AUDIT_CURSOR_INVALID; others get 403",
  async (server) => {
    const org = await createOrganizationWithToken(server, "listed");
    const other = await createOrganizationWithToken(server, "other");
    const chain = auditChainOf(org.organizationId);
    await recordEvents(server.services, org.organizationId, 7);
    await checkpointChain(server.services, chain);
    const seen: number[] = [];
    let path = "/v1/organizations/listed/audit-events?limit=3";
    for (;;) {
      const page = await get<Schemas["AuditEventListDocument"]>(server, org.token, path);
      assert.is(page.response.status, 200, JSON.stringify(page.error));
      assert.ok(
        v1Validators.AuditEventListDocument(page.data),
        JSON.stringify(v1Validators.AuditEventListDocument.errors),
      );
      seen.push(...page.data!.data.map((e) => e.attributes.sequence));
      const next = page.data!.meta.page.next_cursor;
      if (next === null) break;
      path = `/v1/organizations/listed/audit-events?limit=3&cursor=${encodeURIComponent(next)}`;
    }
    const size = (await server.services.stores.audit.head(chain)).size;
    assert.equal(
      seen,
      Array.from({ length: size }, (_, i) => i),
    );

    const checkpoints = await get<Schemas["AuditCheckpointListDocument"]>(
      server,
      org.token,
      "/v1/organizations/listed/audit-checkpoints",
    );
    assert.is(checkpoints.response.status, 200);
    assert.ok(
      v1Validators.AuditCheckpointListDocument(checkpoints.data),
      JSON.stringify(v1Validators.AuditCheckpointListDocument.errors),
    );
    assert.is(checkpoints.data!.data.length, 1);
    assert.is(checkpoints.data!.data[0].attributes.tree_size, size);
    assert.match(
      checkpoints.data!.meta.verifier_key,
      /^stackship\/audit\+[0-9a-f]{8}\+[A-Za-z0-9+/]{43}[A-Za-z0-9+/=]$/,
    );
    assert.match(checkpoints.data!.data[0].attributes.note, new RegExp(`^stackship/audit/${chain}\\n${size}\\n`));

    // A cursor forged, or issued for another organization, or for the other list.
    const first = await get<Schemas["AuditEventListDocument"]>(
      server,
      org.token,
      "/v1/organizations/listed/audit-events?limit=1",
    );
    const cursor = first.data!.meta.page.next_cursor!;
    const mac = cursor.split(".")[1];
    const forged = Buffer.from(JSON.stringify({ v: 1, k: "events", c: chain, p: 0 })).toString("base64url");
    for (const bad of [`${forged}.${mac}`, withTamperedMac(cursor), "not-a-cursor"]) {
      expectV1Error(
        await get(server, org.token, `/v1/organizations/listed/audit-events?cursor=${encodeURIComponent(bad)}`),
        400,
        "AUDIT_CURSOR_INVALID",
        { parameter: "cursor" },
      );
    }
    expectV1Error(
      await get(server, other.token, `/v1/organizations/other/audit-events?cursor=${encodeURIComponent(cursor)}`),
      400,
      "AUDIT_CURSOR_INVALID",
    );
    expectV1Error(
      await get(server, org.token, `/v1/organizations/listed/audit-checkpoints?cursor=${encodeURIComponent(cursor)}`),
      400,
      "AUDIT_CURSOR_INVALID",
    );

    // Org admins only, and only their own organization.
    const { token: operator } = await createToken(server, server.bootstrapToken, "listed", "operator");
    assert.is((await get(server, operator, "/v1/organizations/listed/audit-events")).response.status, 403);
    assert.is((await get(server, operator, "/v1/organizations/listed/audit-checkpoints")).response.status, 403);
    assert.ok(
      [403, 404].includes((await get(server, other.token, "/v1/organizations/listed/audit-events")).response.status),
    );
  },
);

history.run();
