/**
 * Run attestations: what issuing a decision's signed attestation costs. The decision's transaction
 * commits first and the request answers; the attestation is then built (the run's records read),
 * signed (ECDSA P-256) and stored off the request's path, so an approval or a discard waits for none
 * of this (the added approval latency is scheduling one promise). What is measured here is that
 * background work, on a decided run of a real test server, SQLite and (with STACKSHIP_TEST_PG_URL)
 * PostgreSQL; the signature alone is measured too. p50/p95; never fails.
 */
import { generateKeyPairSync } from "node:crypto";
import { attestAfterDecision, signEnvelope } from "../../server/src/commands/attestations.ts";
import { seededRun } from "../../server/test/support/seeded-runs.ts";
import { withTestServer } from "../../server/test/support/test-server.ts";
import { percentile } from "./stats.ts";

const COUNT = Number(process.env.BENCH_ATTESTATIONS ?? 300);
const WARMUP = 30;
const ms = (n: number) => `${n.toFixed(3)} ms`;

async function time(fn: () => unknown, before?: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < COUNT + WARMUP; i++) {
    await before?.();
    const started = process.hrtime.bigint();
    await fn();
    if (i >= WARMUP) samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return samples;
}

const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
const statement = {
  _type: "https://in-toto.io/Statement/v1",
  subject: [{ name: "plan", digest: { sha256: "a".repeat(64) } }],
  predicate: { x: "y".repeat(1500) },
};
const sign = await time(() => signEnvelope(privateKey, "k", statement));
process.stdout.write(
  `[bench attestations] signing one envelope: p50 ${ms(percentile(sign, 50))}  p95 ${ms(percentile(sign, 95))}\n`,
);

for (const kind of ["sqlite", "postgres"] as const) {
  if (kind === "postgres" && !process.env.STACKSHIP_TEST_PG_URL) continue;
  await withTestServer(kind, async (server) => {
    const { run } = await seededRun(server);
    await server.db
      .knex("runs")
      .where({ id: run.id })
      .update({ plan_digest: "a".repeat(64) });
    await server.services.stores.reviews.record({
      runId: run.id,
      decision: "discarded",
      actorId: null,
      reason: "bench",
      planDigest: "a".repeat(64),
      planJsonDigest: null,
      planDiffDigest: null,
      policyResultDigest: null,
      predecessorStateDigest: null,
      dependencyBundleDigest: null,
      decidedAt: new Date(),
    });
    const samples = await time(
      () => attestAfterDecision(server.services, run.id),
      () => server.db.knex("run_attestations").where({ run_id: run.id }).delete(),
    );
    process.stdout.write(
      `[bench attestations] ${kind}: issued after a decision, off the request path (read, sign, store), ${COUNT} samples: p50 ${ms(percentile(samples, 50))}  p95 ${ms(percentile(samples, 95))}\n`,
    );
  });
}
