/**
 * `npm run bench github`: GitHub webhook received → run created, on the embedded default
 * (SQLite file, in-process job loop) against the local GitHub API double (App JWT, installation
 * token, tarball redirect, check runs, all on loopback). Times from just before the signed push
 * is POSTed to the run's recorded creation time (same process clock), p50 and p95 over N pushes;
 * plus the signature verification cost per MiB of payload. Reports; asserts nothing.
 */
import { Webhooks } from "@octokit/webhooks";
import type { RunRow } from "../../server/src/store/rows.ts";
import { GitHubDouble } from "../../server/test/support/github-double.ts";
import {
  commitTarball,
  connectWorkspace,
  deliver,
  newSha,
  pushPayload,
  settled,
} from "../../server/test/support/github.ts";
import { withTestServer } from "../../server/test/support/test-server.ts";
import { median, percentile } from "./stats.ts";

const PUSHES = Number(process.env.BENCH_GITHUB_PUSHES ?? 60);
const FILES = { "main.tf": 'resource "terraform_data" "greeting" {\n  input = "hello"\n}\n' };

const double = await new GitHubDouble().start();
try {
  await withTestServer(
    "sqlite",
    async (server) => {
      const connected = await connectWorkspace(server, double);
      double.installations.set(connected.installationId, [connected.repository]);
      const samples: number[] = [];
      for (let i = 0; i < PUSHES + 5; i++) {
        const sha = newSha();
        double.setTarball(connected.repository, sha, await commitTarball(connected.repository, sha, FILES));
        const payload = pushPayload(connected.repository, connected.installationId, sha);
        const started = Date.now();
        const sent = await deliver(server, double, "push", payload);
        const result = await settled(server, sent.deliveryId, 60_000);
        if (result.status !== "processed") throw new Error(`push ${i}: ${JSON.stringify(result)}`);
        const run = await server.db.knex<RunRow>("runs").where({ id: result.run_ids[0] }).first();
        if (!run) throw new Error(`push ${i}: run ${result.run_ids[0]} not found`);
        // The first few warm the JIT, the connection and the token cache.
        if (i >= 5) samples.push(new Date(run.created_at).getTime() - started);
      }
      process.stdout.write(
        `[bench] github: webhook received → run created over ${PUSHES} pushes (SQLite, in-process jobs, GitHub double): p50 ${percentile(samples, 50)} ms, p95 ${percentile(samples, 95)} ms, max ${Math.max(...samples)} ms\n`,
      );
    },
    { config: { github: double.config() }, githubWorker: { pollIntervalMs: 250 } },
  );
} finally {
  await double.stop();
}

// Signature verification (HMAC-SHA256 over the raw body, constant-time compare) per MiB.
const webhooks = new Webhooks({ secret: "bench-secret" });
for (const mib of [1, 5]) {
  const body = JSON.stringify({ pad: "x".repeat(mib * 1024 * 1024 - 12) });
  const signature = await webhooks.sign(body);
  const times: number[] = [];
  for (let i = 0; i < 25; i++) {
    const start = process.hrtime.bigint();
    if (!(await webhooks.verify(body, signature))) throw new Error("verification failed");
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const typical = median(times);
  process.stdout.write(
    `[bench] github: signature verification of a ${mib} MiB body: median ${typical.toFixed(2)} ms (${(typical / mib).toFixed(2)} ms per MiB)\n`,
  );
}
