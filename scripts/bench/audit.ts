/**
 * Audit history: what one audit event costs to write with the hash chain (the chain head locked
 * and advanced, the event's JCS digest computed: AuditRepository.record) against the plain insert
 * of the same row (what recording cost before the chain), each in its own transaction, on SQLite
 * and (with STACKSHIP_TEST_PG_URL) PostgreSQL; and what signing one checkpoint costs.
 * Reports p50/p95; never fails on a number.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import knex from "knex";
import { auditChainOf, checkpointText } from "../../server/src/domain/audit-chain.ts";
import { canonicalize } from "../../server/src/domain/canonical-json.ts";
import { newId } from "../../server/src/domain/ids.ts";
import { rawEd25519PublicKey, signNote } from "../../server/src/domain/signed-note.ts";
import { inTransaction, migrateLatest, openDatabase, type Database } from "../../server/src/store/index.ts";
import { percentile } from "./stats.ts";

const EVENTS = Number(process.env.BENCH_AUDIT_EVENTS ?? 500);
const WARMUP = 50;

const ms = (n: number) => `${n.toFixed(3)} ms`;

async function time(count: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count + WARMUP; i++) {
    const started = process.hrtime.bigint();
    await fn(i);
    if (i >= WARMUP) samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return samples;
}

async function measure(label: string, db: Database): Promise<void> {
  await migrateLatest(db);
  const organizationId = newId("organization");
  const event = (i: number) => ({
    organizationId,
    actorId: null,
    action: "bench.event",
    targetType: "things",
    targetId: `t${i}`,
    data: { i, note: "bench" },
    createdAt: new Date(),
  });
  const plain = await time(EVENTS, (i) =>
    db.knex.transaction(async (trx) => {
      const e = event(i);
      await trx("audit_events").insert({
        id: newId("auditEvent"),
        organization_id: e.organizationId,
        actor_id: null,
        action: e.action,
        target_type: e.targetType,
        target_id: e.targetId,
        reason: null,
        data: canonicalize(e.data),
        created_at: e.createdAt.toISOString(),
      });
    }),
  );
  const chained = await time(EVENTS, (i) => inTransaction(db, (stores) => stores.audit.record(event(i))));
  const p = percentile;
  process.stdout.write(
    `[bench audit] ${label}: per event, own transaction, ${EVENTS} events\n` +
      `  plain insert (no chain): p50 ${ms(p(plain, 50))}  p95 ${ms(p(plain, 95))}\n` +
      `  chained (head lock, digest, head update): p50 ${ms(p(chained, 50))}  p95 ${ms(p(chained, 95))}  (+${ms(p(chained, 50) - p(plain, 50))} at p50)\n` +
      `  chain ${auditChainOf(organizationId)} size ${(await inTransaction(db, (stores) => stores.audit.head(auditChainOf(organizationId)))).size}\n`,
  );
}

const dir = mkdtempSync(join(tmpdir(), "ss-bench-audit-"));
try {
  const sqlite = await openDatabase(`sqlite://${join(dir, "bench.db")}`);
  try {
    await measure("sqlite", sqlite);
  } finally {
    await sqlite.close();
  }
  const pgUrl = process.env.STACKSHIP_TEST_PG_URL;
  if (pgUrl) {
    const name = `ss_bench_audit_${process.pid}`;
    const admin = knex({ client: "pg", connection: pgUrl });
    await admin.raw(`create database ${name}`);
    const url = new URL(pgUrl);
    url.pathname = `/${name}`;
    const pg = await openDatabase(url.toString());
    try {
      await measure("postgres", pg);
    } finally {
      await pg.close();
      await admin.raw(`drop database ${name}`);
      await admin.destroy();
    }
  } else {
    process.stdout.write("[bench audit] postgres: skipped (set STACKSHIP_TEST_PG_URL)\n");
  }
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = rawEd25519PublicKey(publicKey);
  const text = checkpointText("bench/audit/org-x", 1000, "a".repeat(64));
  const signs = await time(1000, () => Promise.resolve(signNote(text, "bench/audit", privateKey, raw)));
  process.stdout.write(
    `[bench audit] checkpoint signing (Ed25519 signed note): p50 ${ms(percentile(signs, 50))}  p95 ${ms(percentile(signs, 95))}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
