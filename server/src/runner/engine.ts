import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { RunJob } from "../domain/records.ts";
import type { Services } from "../commands/services.ts";
import { expireApproval } from "../commands/run-decisions.ts";
import { executeApply } from "./apply-phase.ts";
import { planSandboxShape, RunnerShutdown, type ExecutionContext } from "./execution.ts";
import { executePlan } from "./plan-phase.ts";
import { startGraphileRunner } from "./graphile.ts";
import { CancelWatch } from "./cancel-watch.ts";
import { timePhase } from "./phase-metrics.ts";
import { WarmSandboxPool } from "./warm-sandboxes.ts";
import { sandboxReleasesSettled } from "./sandbox.ts";
import { endLostPhase } from "./lost-phase.ts";
import { describeFailure, type ShutdownReport } from "./runner-reports.ts";
import { DEFAULT_RUNNER_OPTIONS, type RunnerOptions } from "./runner-options.ts";

export type { RunnerOptions } from "./runner-options.ts";

/** How long after an attempt its slot's next warm sandbox starts booting (WarmSandboxPool.refill). */
const WARM_REFILL_DELAY_MS = 50;

/** How long a queued job may wait for graphile-worker's hand-over before a runner claims it from the table. */
const GRAPHILE_OVERDUE_MS = 15_000;

/**
 * The job loop: claims queued phases (one serial phase per workspace at a time, oldest first),
 * executes them up to `concurrency` at once, heartbeats, and sweeps for work whose runner
 * stopped heartbeating and for approvals that expired. Any number of these can run against one
 * database; claims are compare-and-set.
 */
export class RunnerEngine {
  readonly runnerId: string;
  private readonly options: RunnerOptions;
  private readonly running = new Map<string, { job: RunJob; abort: AbortController }>();
  /**
   * Phases that failed in this process and whose ending could not be recorded yet (the database
   * refused it: a restart, a full disk). Tried again at each sweep until recorded, so the run
   * never stays `planning` or `applying` with nobody to end it (this process keeps heartbeating
   * its job rows, so no other runner would take them for lost).
   */
  private readonly unsettled = new Map<string, { job: RunJob; classification: string; reason: string }>();
  /** Jobs graphile-worker handed over while the database refused their claim: dispatched again by the sweeps. */
  private readonly undispatched = new Set<string>();
  /**
   * Jobs the database says this runner holds but no phase of it runs (its claim's answer was lost
   * with the connection, say), as of the last sweep: still so at the next, they are handled as lost.
   */
  private orphanSuspects = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private stopped = true;
  private ticking = false;
  private lastSweep = 0;
  private graphile: Awaited<ReturnType<typeof startGraphileRunner>> | null = null;
  /** graphile-worker's own stop, once started (it stops fetching jobs and waits for the ones it handed over). */
  private graphileStopping: Promise<void> | null = null;
  private warm: WarmSandboxPool | null = null;
  /** Cancels recorded by any API process reach the attempts this process runs. */
  private cancelWatch: CancelWatch | null = null;
  /** A wake-up that arrived during a tick: tick once more right after it. */
  private tickAgain = false;
  private readonly wake = () => {
    if (this.graphile || this.stopped) return;
    if (this.ticking) this.tickAgain = true;
    else void this.tick();
  };

  constructor(
    private readonly context: Omit<ExecutionContext, "runnerId">,
    options: Partial<RunnerOptions> = {},
  ) {
    this.options = { ...DEFAULT_RUNNER_OPTIONS, ...options };
    this.runnerId = `${hostname().slice(0, 40)}-${process.pid}-${randomBytes(4).toString("hex")}`;
  }

  private get services(): Services {
    return this.context.services;
  }

  /**
   * Starts taking work: on PostgreSQL through graphile-worker (woken by LISTEN/NOTIFY, shared by
   * runners on any host), on SQLite by polling the run_jobs table. Also lets commands interrupt
   * the runs this process executes.
   */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.services.interruptRun = (runId) => {
      for (const { job, abort } of this.running.values()) if (job.runId === runId) abort.abort();
    };
    // On SQLite a job queued in this process is claimed now rather than at the next poll.
    this.services.jobQueued = this.wake;
    if (this.options.warmSandboxes) {
      this.warm = new WarmSandboxPool({
        size: this.options.concurrency,
        shape: () => planSandboxShape(this.context),
        idleMs: this.options.warmSandboxIdleMs,
        // Several slots, all busy: more work is likely queued, so the next sandbox boots during this
        // attempt (with one slot its boot would only compete with that slot's attempt).
        refillOnTake: () => this.options.concurrency > 1 && this.running.size >= this.options.concurrency,
        onError: (error) =>
          this.services.logger.warn(
            { err: error, runner: this.runnerId },
            "a warm sandbox could not be started; plans start their own",
          ),
      });
      this.warm.start();
    }
    if (this.services.db.dialect === "postgres") {
      this.graphile = await startGraphileRunner(this.services.db, {
        concurrency: this.options.concurrency,
        execute: (runJobId) => this.executeDispatched(runJobId),
        log: (message, meta) => this.services.logger.warn({ runner: this.runnerId, meta }, message),
      });
    }
    this.timer = setInterval(() => void this.tick(), this.options.pollIntervalMs);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.options.heartbeatIntervalMs);
    this.cancelWatch = new CancelWatch(
      this.services,
      () => [...this.running.values()].map(({ job, abort }) => ({ runId: job.runId, interrupt: () => abort.abort() })),
      (runId) =>
        this.services.logger.info(
          { runner: this.runnerId, run_id: runId },
          "cancel requested: interrupting the attempt",
        ),
    );
    this.cancelWatch.start();
    void this.tick();
  }

  /** A job graphile-worker handed over: claim it (or put it back while its workspace is busy) and run it. */
  private async executeDispatched(runJobId: string): Promise<void> {
    if (this.stopped) {
      // Handed over while this runner shuts down: back to the queue for another runner (the run_jobs row is still queued).
      await this.services.stores.jobs.dispatch(
        runJobId,
        new Date(this.services.clock().getTime() + this.options.busyRetryMs).toISOString(),
      );
      return;
    }
    let job: RunJob | undefined;
    try {
      job = await this.services.stores.jobs.claimById(runJobId, this.runnerId, this.services.clock());
      if (!job) {
        const current = await this.services.stores.jobs.getById(runJobId);
        if (current?.status === "queued") {
          await this.services.stores.jobs.dispatch(
            runJobId,
            new Date(this.services.clock().getTime() + this.options.busyRetryMs).toISOString(),
          );
        }
        return;
      }
    } catch (error) {
      // The database went away (graphile-worker's job fails and is not tried again): the sweeps
      // hand the run_jobs row over again once it is back.
      this.undispatched.add(runJobId);
      this.services.logger.warn(
        { err: error, runner: this.runnerId, job_id: runJobId },
        "a job handed over could not be claimed; dispatched again at the next sweep",
      );
      return;
    }
    const abort = new AbortController();
    this.running.set(job.id, { job, abort });
    try {
      await this.execute(job, abort.signal);
    } finally {
      this.running.delete(job.id);
    }
  }

  /**
   * Graceful shutdown (SIGTERM/SIGINT): claims nothing more at once, keeps heartbeating the
   * phases in flight (so no other runner takes them for lost) and lets them end on their own for
   * up to `graceMs`; what still runs then is interrupted with a RunnerShutdown reason: an apply
   * ends in needs_recovery (`apply_interrupted`, attempt `runner_shutdown`) by the existing
   * rules, a plan ends errored (`plan_failed`). Then stops like `stop`.
   */
  async shutdown(graceMs: number, signalName: string): Promise<ShutdownReport> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.graphile) this.graphileStopping = this.graphile.runner.stop();
    // A tick already past its stopped check may still claim one job: it is waited for like the others.
    while (this.ticking) await new Promise((resolve) => setTimeout(resolve, 20));
    const describe = () => [...this.running.values()].map(({ job }) => ({ runId: job.runId, phase: job.phase }));
    const inFlight = describe();
    const deadline = Date.now() + graceMs;
    while (this.running.size > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, deadline - Date.now()))));
    const interrupted = describe();
    const reason = new RunnerShutdown(signalName, Math.round(graceMs / 1000));
    for (const { abort } of this.running.values()) abort.abort(reason);
    await this.stop();
    return { inFlight, interrupted };
  }

  /** Stops claiming work and waits for the phases in flight (interrupting them if `interrupt`). */
  async stop({ interrupt = false } = {}): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.timer = this.heartbeatTimer = null;
    this.cancelWatch?.stop();
    if (interrupt) for (const { abort } of this.running.values()) abort.abort();
    while (this.running.size > 0 || this.ticking) await new Promise((resolve) => setTimeout(resolve, 20));
    await this.warm?.stop();
    this.warm = null;
    await sandboxReleasesSettled();
    if (this.services.jobQueued === this.wake) this.services.jobQueued = undefined;
    if (this.graphile) {
      await (this.graphileStopping ?? this.graphile.runner.stop());
      this.graphileStopping = null;
      await this.graphile.pool.end();
      this.graphile = null;
    }
  }

  /** Claims and starts work until the concurrency limit; sweeps now and then. */
  async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    this.tickAgain = false;
    try {
      // On PostgreSQL graphile-worker hands work over; the table is only polled on SQLite.
      while (!this.graphile && !this.stopped && this.running.size < this.options.concurrency) {
        const job = await this.services.stores.jobs.claim(this.runnerId, this.services.clock());
        if (!job) break;
        this.startClaimed(job);
      }
      // The sweep after the claims, so that a queued run does not wait for it; what it releases
      // (a dead runner's work) is claimed by the tick it asks for.
      const now = this.services.clock();
      if (!this.stopped && now.getTime() - this.lastSweep >= Math.min(this.options.heartbeatIntervalMs, 1_000)) {
        this.lastSweep = now.getTime();
        await this.sweep();
        if (!this.graphile && this.running.size < this.options.concurrency) this.tickAgain = true;
      }
    } catch (error) {
      this.services.logger.error({ err: error, runner: this.runnerId }, "runner tick failed");
    } finally {
      this.ticking = false;
      if (this.tickAgain) void this.tick();
    }
  }

  /** Executes a job this runner claimed from the table (not handed over by graphile-worker). */
  private startClaimed(job: RunJob): void {
    const abort = new AbortController();
    this.running.set(job.id, { job, abort });
    void this.execute(job, abort.signal).finally(() => {
      this.running.delete(job.id);
      // A slot is free (and the next serial phase of the workspace may be claimable).
      this.wake();
    });
  }

  /**
   * On PostgreSQL: a queued job graphile-worker has not handed to any runner GRAPHILE_OVERDUE_MS
   * after it became available (its worker still starting again after the database went away, or
   * a job whose hand-over was lost with it) is claimed from the table, as on SQLite. Claims are
   * compare-and-set, so a hand-over that comes after all finds the job taken.
   */
  private async claimOverdue(now: Date): Promise<void> {
    while (!this.stopped && this.running.size < this.options.concurrency) {
      const job = await this.services.stores.jobs.claim(this.runnerId, new Date(now.getTime() - GRAPHILE_OVERDUE_MS));
      if (!job) return;
      // The claim dated its heartbeat back to that time.
      await this.services.stores.jobs.heartbeat(this.runnerId, now);
      this.services.logger.warn(
        { runner: this.runnerId, run_id: job.runId, phase: job.phase, job_id: job.id },
        "graphile-worker did not hand this job over in time; claimed from the table",
      );
      this.startClaimed(job);
    }
  }

  private async execute(job: RunJob, signal: AbortSignal): Promise<void> {
    const log = this.services.logger.child({
      runner: this.runnerId,
      run_id: job.runId,
      phase: job.phase,
      job_id: job.id,
    });
    const context: ExecutionContext = {
      ...this.context,
      runnerId: this.runnerId,
      jobId: job.id,
      warmPlanSandboxes: this.warm ?? undefined,
    };
    try {
      log.info("phase started");
      const outcome = await timePhase(this.services, this.runnerId, job, () =>
        job.phase === "plan" ? executePlan(context, job.runId, signal) : executeApply(context, job.runId, signal),
      );
      if (outcome === "retry_later") {
        await this.services.stores.jobs.requeue(
          job.id,
          new Date(this.services.clock().getTime() + this.options.busyRetryMs),
        );
        log.info("workspace busy; phase requeued");
        return;
      }
      await this.services.stores.jobs.finish(job.id, this.services.clock());
      log.info("phase done");
    } catch (error) {
      log.error({ err: error }, "phase failed unexpectedly");
      this.running.delete(job.id);
      // Recorded now, or (the database refusing) at the next sweeps: never a rejection that ends the process.
      await this.settle(job, "runner_error", describeFailure(error));
    } finally {
      // This slot's next warm sandbox boots now that its attempt is over (not while stopping).
      if (!this.stopped) this.warm?.refill({ afterMs: WARM_REFILL_DELAY_MS });
    }
  }

  /** Resolves once this runner's warm sandboxes (if any) have booted. */
  async warmSandboxesSettled(): Promise<void> {
    await this.warm?.settled();
  }

  private async heartbeat(): Promise<void> {
    const now = this.services.clock();
    try {
      await this.services.stores.jobs.heartbeat(this.runnerId, now);
      for (const { job } of this.running.values()) {
        for (const attempt of await this.services.stores.attempts.listByRun(job.runId)) {
          if (attempt.status === "running" && attempt.runnerId === this.runnerId)
            await this.services.stores.attempts.heartbeat(attempt.id, now);
        }
      }
    } catch (error) {
      this.services.logger.error({ err: error, runner: this.runnerId }, "heartbeat failed");
    }
  }

  /**
   * Records the endings this process could not record before (`unsettled`), then finds work whose
   * runner stopped heartbeating (a killed process, a lost host) and approvals that expired. A lost
   * plan is planned again by any runner (a plan publishes nothing, so nothing is at stake), up to
   * MAX_PLAN_ATTEMPTS; a lost apply is never guessed at: the run goes to needs_recovery and keeps the lock.
   */
  async sweep(): Promise<void> {
    for (const { job, classification, reason } of [...this.unsettled.values()])
      await this.settle(job, classification, reason);
    const now = this.services.clock();
    for (const id of [...this.undispatched]) {
      const current = await this.services.stores.jobs.getById(id);
      if (current?.status === "queued") await this.services.stores.jobs.dispatch(id, now.toISOString());
      this.undispatched.delete(id);
    }
    const stale = now.getTime() - this.options.staleAfterMs;
    const suspects = new Set<string>();
    // Every running job (a short list): those whose runner stopped heartbeating, and this runner's own orphans.
    for (const job of await this.services.stores.jobs.listStale(new Date(now.getTime() + 86_400_000))) {
      if (this.running.has(job.id) || this.unsettled.has(job.id)) continue;
      if (job.runnerId === this.runnerId) {
        if (this.orphanSuspects.has(job.id)) await this.settle(job, "runner_lost", "its runner no longer ran it");
        else suspects.add(job.id);
      } else if (job.heartbeatAt !== null && Date.parse(job.heartbeatAt) < stale) {
        await this.settle(job, "runner_lost", "its runner stopped heartbeating");
      }
    }
    this.orphanSuspects = suspects;
    if (this.graphile) await this.claimOverdue(now);
    for (const run of await this.services.stores.runs.listApprovalExpired(now, [
      "awaiting_approval",
      "policy_soft_failed",
    ])) {
      await expireApproval(this.services, run, now);
    }
  }

  /** Ends a phase that failed in this process; kept in `unsettled` (and logged) while the database refuses it. */
  private async settle(job: RunJob, classification: string, reason: string): Promise<void> {
    try {
      await this.services.stores.jobs.finish(job.id, this.services.clock());
      await endLostPhase(this.services, job, classification, reason);
      this.unsettled.delete(job.id);
    } catch (error) {
      if (!this.unsettled.has(job.id))
        this.services.logger.error(
          { err: error, runner: this.runnerId, run_id: job.runId, phase: job.phase, job_id: job.id },
          "the end of a failed phase could not be recorded; trying again at each sweep",
        );
      this.unsettled.set(job.id, { job, classification, reason });
    }
  }
}
