/**
 * Managed runs: a speculative plan through StackShip (API create → plan finished, on the embedded
 * default with the in-process runner and a real bubblewrap sandbox) against the same work done by
 * a local `tofu` (init, plan -out, show -json in a fresh directory), and the queue-to-start latency
 * (run job queued → phase attempt started). Targets from the issue: ≤ 1.3× local; p50 ≤ 150 ms.
 * Issue 29: the same plans again in a workspace with structured run output on, whose plans also
 * read the provider schemas, build the redacted plan the CLI renders (json-output-redacted) and
 * show the saved plan as text for the human log.
 */
import { load, localPlan, startBenchStackShip } from "./stackship-harness.ts";
import { median } from "./stats.ts";
import { api } from "./support.ts";
import type { V1 } from "../../server/test/support/documents.ts";

// The issue asks for the median of at least 10; 20 keeps one slow plan from moving it.
const RUNS = Number(process.env.BENCH_PLANS ?? 20);

const bench = await startBenchStackShip({ concurrency: 1 });
const { stackship, runner, base, token, timings } = bench;
try {
  process.stdout.write(`[bench] runs: ${RUNS} speculative plans through StackShip vs local tofu (load ${load()})…\n`);
  // Each side sets the switch itself, so the comparison does not depend on the default.
  const workspace = { id: await bench.workspace("w", { structured_run_output_enabled: false }) };
  const structured = { id: await bench.workspace("s", { structured_run_output_enabled: true }) };

  // Neither side's first plan counts: the local one warms the page cache for both, the StackShip
  // one the server's code paths (its first run compiles what every later one reuses).
  await localPlan();
  await runner.warmSandboxesSettled();
  {
    const ended = bench.runEnded();
    await ended.of(
      (
        await api(base, token, "POST", `/v1/workspaces/${workspace.id}/runs`, {
          data: { type: "runs", attributes: { kind: "speculative" } },
        })
      ).data.id,
    );
    const endedOn = bench.runEnded();
    await endedOn.of(
      (
        await api(base, token, "POST", `/v1/workspaces/${structured.id}/runs`, {
          data: { type: "runs", attributes: { kind: "speculative" } },
        })
      ).data.id,
    );
  }
  const managedOn: number[] = [];
  const redactedPlan: number[] = [];
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
    local.push(await localPlan());
    const started = process.hrtime.bigint();
    const createdAt = performance.timeOrigin + performance.now();
    // The client learns of the end from the run change feed (what the dashboard's live socket
    // hears), then reads the run once over HTTP; it does not load the server with tight polling.
    const ended = bench.runEnded();
    const run = (
      await api(base, token, "POST", `/v1/workspaces/${workspace.id}/runs`, {
        data: { type: "runs", attributes: { kind: "speculative" } },
      })
    ).data;
    await ended.of(run.id);
    const status = (await api<V1["RunDocument"]>(base, token, "GET", `/v1/runs/${run.id}`)).data.attributes.status;
    if (status !== "planned_and_finished") throw new Error(`run ${run.id} ended ${status}`);
    managed.push(Number(process.hrtime.bigint() - started) / 1e6);
    queueToStart.push(await bench.queueToStart(run.id));
    const attempt = (await stackship.services.stores.attempts.listByRun(run.id))[0];
    inSandbox.push(new Date(attempt.finishedAt!).getTime() - new Date(attempt.startedAt).getTime());
    const t = timings.get(run.id);
    if (t) {
      const s = t.sandbox;
      const marks = new Map(s.marks.map((m) => [m.name, m.at]));
      const mark = (name: string) => marks.get(name) ?? null;
      const between = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
      stage(`API create → phase started`, t.phaseStartedAt - createdAt);
      stage(`phase started → attempt recorded`, t.attemptStartedAt - t.phaseStartedAt);
      stage(
        t.warm ? "attempt recorded → handoff (warm sandbox)" : "attempt recorded → handoff (cold sandbox)",
        s.handedOverAt - t.attemptStartedAt,
      );
      if (!t.warm) stage("  of which bwrap spawn → launcher ready", between(s.spawnedAt, s.readyAt));
      stage("handoff → launcher unpacks", between(s.handedOverAt, mark("launcher-unpack")));
      stage("unpack config (in the launcher)", between(mark("launcher-unpack"), mark("launcher-unpacked")));
      stage("unpacked → command started", between(mark("launcher-unpacked") ?? s.handedOverAt, s.startedAt));
      stage("command started → tofu init", between(s.startedAt, mark("init")));
      stage("tofu init", between(mark("init"), mark("plan")));
      stage("tofu plan, script exit", between(mark("plan"), mark("evidence")));
      stage("end every other process (in the launcher)", between(mark("evidence"), mark("show")));
      stage("tofu show -json (in the launcher)", between(mark("show"), mark("plan-diff")));
      stage("plan-diff (in the launcher)", between(mark("plan-diff"), mark("redacted-plan") ?? s.exitedAt));
      stage("exit → bwrap ended", between(s.exitedAt, s.endedAt));
      stage("collect files", s.collectedAt - s.endedAt);
      stage("store artifacts, log, attempt", t.storedAt - s.collectedAt);
      stage("plan finished, policy stage, release", t.finishedAt - t.storedAt);
      stage("finished → client saw it", Number(process.hrtime.bigint() - started) / 1e6 - (t.finishedAt - createdAt));
    }
    // Structured run output on: the same plan, plus the provider schemas and the redacted plan.
    await runner.warmSandboxesSettled();
    const startedOn = process.hrtime.bigint();
    const endedOn = bench.runEnded();
    const runOn = (
      await api(base, token, "POST", `/v1/workspaces/${structured.id}/runs`, {
        data: { type: "runs", attributes: { kind: "speculative" } },
      })
    ).data;
    await endedOn.of(runOn.id);
    const statusOn = (await api<V1["RunDocument"]>(base, token, "GET", `/v1/runs/${runOn.id}`)).data.attributes.status;
    if (statusOn !== "planned_and_finished") throw new Error(`run ${runOn.id} ended ${statusOn}`);
    managedOn.push(Number(process.hrtime.bigint() - startedOn) / 1e6);
    const tOn = timings.get(runOn.id);
    const at = tOn?.sandbox.marks.find((m) => m.name === "redacted-plan")?.at;
    if (tOn && at !== undefined && tOn.sandbox.exitedAt !== null) redactedPlan.push(tOn.sandbox.exitedAt - at);
  }
  const ratio = median(managed) / median(local);
  process.stdout.write(
    `[bench] runs: local tofu init+plan+show ${median(local).toFixed(0)} ms (baseline 1.00x) | StackShip speculative plan, API create → finished ${median(managed).toFixed(0)} ms (${ratio.toFixed(2)}x; target ≤ 1.30x)\n`,
  );
  process.stdout.write(
    `[bench] runs: with structured run output on (issue 29) ${median(managedOn).toFixed(0)} ms (${(median(managedOn) / median(local)).toFixed(2)}x local, ${(median(managedOn) / median(managed)).toFixed(2)}x off); of which providers schema + redacted plan in the launcher ${redactedPlan.length > 0 ? median(redactedPlan).toFixed(0) : "n/a"} ms\n`,
  );
  process.stdout.write(
    `[bench] runs: of which the plan attempt (sandbox start, tofu init/plan/show, plan-diff) ${median(inSandbox).toFixed(0)} ms\n`,
  );
  if (stages.size > 0) {
    process.stdout.write(`[bench] runs: breakdown of the StackShip side (median ms; medians do not add up exactly):\n`);
    for (const [name, values] of stages)
      process.stdout.write(`[bench] runs:   ${name.padEnd(46)} ${median(values).toFixed(1).padStart(7)}\n`);
  }
  const sorted = [...queueToStart].sort((a, b) => a - b);
  process.stdout.write(
    `[bench] runs: queue → phase attempt started p50 ${median(queueToStart).toFixed(0)} ms, max ${sorted[sorted.length - 1]} ms (target p50 ≤ 150 ms)\n`,
  );
  process.stdout.write(`[bench] runs: load after ${load()}\n`);
} finally {
  await bench.close();
}
