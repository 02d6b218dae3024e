/**
 * Managed runs: a speculative plan through StackShip (API create → plan finished, on the embedded
 * default with the in-process runner and a real bubblewrap sandbox) against the same work done by
 * a local `tofu` (init, plan -out, show -json in a fresh directory), and the queue-to-start latency
 * (run job queued → phase attempt started). Targets from the issue: ≤ 1.3× local; p50 ≤ 150 ms.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../../server/src/config.ts";
import { RunnerEngine } from "../../server/src/runner/engine.ts";
import type { AttemptTimings } from "../../server/src/runner/execution.ts";
import { api, startBenchServer } from "./support.ts";

const RUNS = Number(process.env.BENCH_PLANS ?? 10);
const CONFIG = 'resource "terraform_data" "a" {\n  input = "one"\n}\nresource "terraform_data" "b" {\n  input = terraform_data.a.output\n}\n';
const tofu = join(REPO_ROOT, ".tools/bin/tofu");

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function localPlan(): number {
  const dir = mkdtempSync(join(tmpdir(), "ss-bench-local-"));
  try {
    writeFileSync(join(dir, "main.tf"), CONFIG);
    writeFileSync(join(dir, "cli.tfrc"), `provider_installation {\n  filesystem_mirror {\n    path = "${join(REPO_ROOT, ".tools/providers")}"\n  }\n}\n`);
    const env = { PATH: process.env.PATH ?? "", HOME: dir, TF_CLI_CONFIG_FILE: join(dir, "cli.tfrc"), TF_IN_AUTOMATION: "1", CHECKPOINT_DISABLE: "1" };
    const started = process.hrtime.bigint();
    execFileSync(tofu, ["init", "-input=false", "-no-color"], { cwd: dir, env, stdio: "ignore" });
    execFileSync(tofu, ["plan", "-input=false", "-no-color", "-out=plan.tfplan"], { cwd: dir, env, stdio: "ignore" });
    execFileSync(tofu, ["show", "-json", "plan.tfplan"], { cwd: dir, env, stdio: "ignore", maxBuffer: 64 * 1024 * 1024 });
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}


const { dataDir, bootstrapToken, stackship, http, port, base } = await startBenchServer("ss-bench-runs-");
const timings = new Map<string, AttemptTimings>();
const runner = new RunnerEngine(
  { services: stackship.services, api: { host: "127.0.0.1", port }, phaseTimeoutMs: 120_000, onAttemptTimings: (t) => timings.set(t.runId, t) },
  { pollIntervalMs: 10, concurrency: 1, warmSandboxes: process.env.BENCH_WARM !== "0" },
);
await runner.start();
try {
  process.stdout.write(`[bench] runs: ${RUNS} speculative plans through StackShip vs local tofu…\n`);
  await api(base, bootstrapToken, "POST", "/v1/organizations", { data: { type: "organizations", attributes: { name: "bench" } } });
  const token = (await api(base, bootstrapToken, "POST", "/v1/organizations/bench/tokens", { data: { type: "tokens", attributes: { role: "admin" } } })).data.attributes.secret;
  const workspace = (await api(base, token, "POST", "/v1/organizations/bench/workspaces", { data: { type: "workspaces", attributes: { name: "w" } } })).data;
  const cv = (await api(base, token, "POST", `/v1/workspaces/${workspace.id}/configuration-versions`, { data: { type: "configuration-versions" } })).data;
  const src = mkdtempSync(join(tmpdir(), "ss-bench-src-"));
  mkdirSync(join(src, "c"));
  writeFileSync(join(src, "c", "main.tf"), CONFIG);
  execFileSync("tar", ["-czf", join(src, "c.tgz"), "-C", join(src, "c"), "."]);
  const upload = await fetch(cv.attributes.upload_url, { method: "PUT", body: execFileSync("cat", [join(src, "c.tgz")]) });
  if (!upload.ok) throw new Error(`upload: ${upload.status}`);
  rmSync(src, { recursive: true, force: true });

  localPlan(); // warm the page cache for both sides
  const local: number[] = [];
  const managed: number[] = [];
  const queueToStart: number[] = [];
  const inSandbox: number[] = [];
  const stages = new Map<string, number[]>();
  const stage = (name: string, ms: number | null) => {
    if (ms === null || !Number.isFinite(ms)) return;
    if (!stages.has(name)) stages.set(name, []);
    stages.get(name)!.push(ms);
  };
  for (let i = 0; i < RUNS; i++) {
    // The warm sandbox that replaces the last one boots first, so it competes with neither side.
    await runner.warmSandboxesSettled();
    local.push(localPlan());
    const started = process.hrtime.bigint();
    const createdAt = performance.timeOrigin + performance.now();
    const run = (await api(base, token, "POST", `/v1/workspaces/${workspace.id}/runs`, { data: { type: "runs", attributes: { kind: "speculative" } } })).data;
    for (;;) {
      const status = (await api(base, token, "GET", `/v1/runs/${run.id}`)).data.attributes.status;
      if (status === "planned_and_finished") break;
      if (status === "errored") throw new Error(`run ${run.id} errored`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    managed.push(Number(process.hrtime.bigint() - started) / 1e6);
    const job = await stackship.services.stores.jobs.listByRun(run.id);
    const attempt = (await stackship.services.stores.attempts.listByRun(run.id))[0];
    queueToStart.push(new Date(attempt.startedAt).getTime() - new Date(job[0].createdAt).getTime());
    inSandbox.push(new Date(attempt.finishedAt!).getTime() - new Date(attempt.startedAt).getTime());
    const t = timings.get(run.id);
    if (t) {
      const s = t.sandbox;
      const marks = new Map(s.marks.map((m) => [m.name, m.at]));
      const mark = (name: string) => marks.get(name) ?? null;
      const between = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
      stage(`API create → phase started`, t.phaseStartedAt - createdAt);
      stage(`phase started → attempt recorded`, t.attemptStartedAt - t.phaseStartedAt);
      stage(t.warm ? "attempt recorded → handoff (warm sandbox)" : "attempt recorded → handoff (cold sandbox)", s.handedOverAt - t.attemptStartedAt);
      if (!t.warm) stage("  of which bwrap spawn → launcher ready", between(s.spawnedAt, s.readyAt));
      stage("handoff → command started", between(s.handedOverAt, s.startedAt));
      stage("unpack config (tar, cp)", between(s.startedAt, mark("init")));
      stage("tofu init", between(mark("init"), mark("plan")));
      stage("tofu plan", between(mark("plan"), mark("show")));
      stage("tofu show -json", between(mark("show"), mark("copy")));
      stage("copy lock files, script exit", between(mark("copy"), mark("plan-diff") ?? s.exitedAt));
      stage("plan-diff (in the launcher)", between(mark("plan-diff"), s.exitedAt));
      stage("exit → bwrap ended", between(s.exitedAt, s.endedAt));
      stage("collect files", s.collectedAt - s.endedAt);
      stage("store artifacts, log, attempt", t.storedAt - s.collectedAt);
      stage("plan finished, policy stage, release", t.finishedAt - t.storedAt);
      stage("finished → client saw it", Number(process.hrtime.bigint() - started) / 1e6 - (t.finishedAt - createdAt));
    }
  }
  const ratio = median(managed) / median(local);
  process.stdout.write(
    `[bench] runs: local tofu init+plan+show ${median(local).toFixed(0)} ms (baseline 1.00x) | StackShip speculative plan, API create → finished ${median(managed).toFixed(0)} ms (${ratio.toFixed(2)}x; target ≤ 1.30x)\n`,
  );
  process.stdout.write(`[bench] runs: of which the plan attempt (sandbox start, tofu init/plan/show, plan-diff) ${median(inSandbox).toFixed(0)} ms\n`);
  if (stages.size > 0) {
    process.stdout.write(`[bench] runs: breakdown of the StackShip side (median ms; medians do not add up exactly):\n`);
    for (const [name, values] of stages) process.stdout.write(`[bench] runs:   ${name.padEnd(46)} ${median(values).toFixed(1).padStart(7)}\n`);
  }
  const sorted = [...queueToStart].sort((a, b) => a - b);
  process.stdout.write(`[bench] runs: queue → phase attempt started p50 ${median(queueToStart).toFixed(0)} ms, max ${sorted[sorted.length - 1]} ms (target p50 ≤ 150 ms)\n`);
} finally {
  await runner.stop({ interrupt: true });
  http.close();
  await stackship.close();
  rmSync(dataDir, { recursive: true, force: true });
}
