/**
 * Workload identity: what minting costs where a phase attempt starts (the profiles serving the
 * phase read, the scope loaded, one RS256 signature per profile, the key's expiry noted, the
 * audit record written, the sandbox's files and variables built), p50 and p95 over many mints,
 * and its share of a real plan attempt (speculative plans with the in-process runner).
 */
import { rmSync } from "node:fs";
import { RunnerEngine } from "../../server/src/runner/engine.ts";
import { addWorkloadIdentity } from "../../server/src/runner/workload-identity-files.ts";
import type { V1 } from "../../server/test/support/documents.ts";
import {
  api,
  configurationTarball,
  createBenchOrganization,
  createBenchWorkspace,
  startBenchServer,
  uploadConfiguration,
} from "./support.ts";
import { percentile } from "./stats.ts";

const MINTS = Number(process.env.BENCH_MINTS ?? 300);
const PLANS = Number(process.env.BENCH_PLANS ?? 5);

const { dataDir, bootstrapToken, stackship, http, port, base } = await startBenchServer("ss-bench-wi-");
stackship.services.config.publicUrl = base;
const runner = new RunnerEngine(
  { services: stackship.services, api: { host: "127.0.0.1", port }, phaseTimeoutMs: 120_000 },
  { pollIntervalMs: 10, concurrency: 1 },
);
try {
  const token = await createBenchOrganization(base, bootstrapToken);
  const workspace = await createBenchWorkspace(base, token, "w");
  for (const [name, provider, target, audience] of [
    ["aws", "aws", { role_arn: "arn:aws:iam::123456789012:role/bench" }, undefined],
    ["vault", "generic", {}, "vault"],
  ] as const) {
    await api(base, token, "POST", `/v1/workspaces/${workspace.id}/federation-profiles`, {
      data: {
        type: "federation-profiles",
        attributes: { name, provider, target, audience, phases: ["plan", "speculative_plan"] },
      },
    });
  }
  const profiles = await stackship.services.stores.federationProfiles.listByWorkspace(workspace.id);
  for (const profile of profiles)
    await api(base, token, "POST", `/v1/federation-profiles/${profile.id}/actions/verify`);
  await uploadConfiguration(
    base,
    token,
    workspace.id,
    configurationTarball(
      'resource "terraform_data" "a" {\n  input = fileexists("/work/.stackship-identity/aws.jwt")\n}\n',
    ),
  );

  // Minting alone, on a pending run (no sandbox): what the hook adds to a phase start.
  const run = (
    await api<V1["RunDocument"]>(base, token, "POST", `/v1/workspaces/${workspace.id}/runs`, {
      data: { type: "runs", attributes: { kind: "speculative" } },
    })
  ).data;
  await stackship.services.db.knex("run_jobs").where({ run_id: run.id }).delete();
  const stored = (await stackship.services.stores.runs.getById(run.id))!;
  const mints: number[] = [];
  for (let i = 0; i < MINTS + 20; i++) {
    const inputs = { env: {}, secrets: [] as string[] };
    const started = process.hrtime.bigint();
    await addWorkloadIdentity({ services: stackship.services, phaseTimeoutMs: 120_000 }, stored, "plan", inputs);
    if (i >= 20) mints.push(Number(process.hrtime.bigint() - started) / 1e6); // the first mints import the key and warm the caches
    if (inputs.secrets.length !== 2) throw new Error("expected two tokens");
  }
  await stackship.services.db.knex("runs").where({ id: run.id }).update({ status: "canceled" });

  // Real plan attempts for the share.
  await runner.start();
  const attempts: number[] = [];
  for (let i = 0; i < PLANS; i++) {
    const planned = (
      await api<V1["RunDocument"]>(base, token, "POST", `/v1/workspaces/${workspace.id}/runs`, {
        data: { type: "runs", attributes: { kind: "speculative" } },
      })
    ).data;
    for (;;) {
      const status = (await api<V1["RunDocument"]>(base, token, "GET", `/v1/runs/${planned.id}`)).data.attributes
        .status;
      if (status === "planned_and_finished") break;
      if (status === "errored" || status === "plan_credentials_required")
        throw new Error(`run ${planned.id} ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const attempt = (await stackship.services.stores.attempts.listByRun(planned.id))[0];
    attempts.push(new Date(attempt.finishedAt!).getTime() - new Date(attempt.startedAt).getTime());
  }
  const p50 = percentile(mints, 50);
  const attempt50 = percentile(attempts, 50);
  process.stdout.write(
    `[bench] workload-identity: minting 2 tokens at a phase start (${MINTS} mints, SQLite): p50 ${p50.toFixed(2)} ms, p95 ${percentile(mints, 95).toFixed(2)} ms\n`,
  );
  process.stdout.write(
    `[bench] workload-identity: plan attempt p50 ${attempt50} ms over ${PLANS} speculative plans; minting is ${((100 * p50) / attempt50).toFixed(2)}% of it\n`,
  );
} finally {
  await runner.stop({ interrupt: true });
  http.close();
  await stackship.close();
  rmSync(dataDir, { recursive: true, force: true });
}
