import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { finishDelivery, isRetryable, processDelivery } from "../commands/github-deliveries.ts";
import { syncCheckRun } from "../commands/github-check-runs.ts";
import { GITHUB_ACTOR_ID } from "../commands/github-webhooks.ts";
import type { Services } from "../commands/services.ts";
import { GITHUB_DELIVERY_TASK, type GitHubDelivery } from "../store/index.ts";
import { startGraphileTasks } from "./graphile.ts";

/** Tuning of the GitHub pipeline's job loop. */
export interface GitHubWorkerOptions {
  /** How often an idle worker looks for due deliveries and check runs. */
  pollIntervalMs: number;
  /** A delivery is tried at most this many times. */
  maxAttempts: number;
  /** The first retry waits this long; each further one twice as long (capped at ten minutes). */
  backoffBaseMs: number;
  /** A delivery a worker took but did not finish within this time is queued again (its worker went away). */
  staleAfterMs: number;
}

export const DEFAULT_GITHUB_WORKER_OPTIONS: GitHubWorkerOptions = {
  pollIntervalMs: 250,
  maxAttempts: 6,
  backoffBaseMs: 5_000,
  staleAfterMs: 10 * 60_000,
};

/**
 * The GitHub pipeline's jobs: verified deliveries queued by the webhook (claimed compare-and-set
 * from github_deliveries, so any number of API processes share them, on SQLite and PostgreSQL
 * alike), retried with exponential backoff; and the check runs kept in step with their runs.
 * A delivery queued in this process is taken at once; others at the next poll.
 */
export class GitHubWorker {
  readonly workerId = `${hostname().slice(0, 40)}-${process.pid}-gh-${randomBytes(3).toString("hex")}`;
  private readonly options: GitHubWorkerOptions;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private lastStaleSweep = 0;
  private stopped = true;
  private graphile: Awaited<ReturnType<typeof startGraphileTasks>> | null = null;
  private readonly wake = () => {
    if (this.stopped) return;
    if (this.ticking) this.again = true;
    else void this.tick();
  };

  constructor(
    private readonly services: Services,
    options: Partial<GitHubWorkerOptions> = {},
  ) {
    this.options = { ...DEFAULT_GITHUB_WORKER_OPTIONS, ...options };
  }

  async start(): Promise<void> {
    if (!this.stopped || !this.services.github) return;
    this.stopped = false;
    this.services.githubDeliveryQueued = this.wake;
    // On PostgreSQL a delivery queued by any API process wakes this one through graphile-worker.
    if (this.services.db.dialect === "postgres") {
      this.graphile = await startGraphileTasks(this.services.db, {
        concurrency: 1,
        tasks: {
          [GITHUB_DELIVERY_TASK]: async () => {
            this.wake();
            while (this.ticking) await this.ticking;
          },
        },
        log: (message, meta) => this.services.logger.warn({ worker: this.workerId, meta }, message),
      });
    }
    this.timer = setInterval(this.wake, this.options.pollIntervalMs);
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.services.githubDeliveryQueued === this.wake) this.services.githubDeliveryQueued = undefined;
    while (this.ticking) await this.ticking;
    if (this.graphile) {
      await this.graphile.runner.stop();
      await this.graphile.pool.end();
      this.graphile = null;
    }
  }

  /** One pass: every due delivery, then every due check run. */
  tick(): Promise<void> {
    if (this.ticking) return this.ticking;
    this.again = false;
    this.ticking = (async () => {
      try {
        const now = this.services.clock();
        if (now.getTime() - this.lastStaleSweep >= 30_000) {
          this.lastStaleSweep = now.getTime();
          await this.services.stores.github.releaseStaleDeliveries(
            new Date(now.getTime() - this.options.staleAfterMs),
            now,
          );
        }
        for (;;) {
          if (this.stopped) break;
          const delivery = await this.services.stores.github.claimDelivery(this.workerId, this.services.clock());
          if (!delivery) break;
          await this.runDelivery(delivery);
        }
        if (!this.stopped)
          for (const check of await this.services.stores.github.dueCheckRuns(this.services.clock(), 25))
            await syncCheckRun(this.services, check);
      } catch (error) {
        this.services.logger.error({ err: error, worker: this.workerId }, "GitHub worker pass failed");
      } finally {
        this.ticking = null;
        if (this.again && !this.stopped) void this.tick();
      }
    })();
    return this.ticking;
  }

  private async runDelivery(delivery: GitHubDelivery): Promise<void> {
    const log = this.services.logger.child({
      delivery_id: delivery.id,
      event: delivery.event,
      attempt: delivery.attempts,
    });
    try {
      const result = await processDelivery(this.services, delivery);
      await finishDelivery(this.services, delivery, result);
      log.info({ status: result.status, outcome: result.outcome }, "GitHub delivery handled");
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const now = this.services.clock();
      const last = !isRetryable(error) || delivery.attempts >= this.options.maxAttempts;
      await this.services.stores.audit.record({
        organizationId: null,
        actorId: GITHUB_ACTOR_ID,
        action: "github.delivery.attempt_failed",
        targetType: "github-deliveries",
        targetId: delivery.id,
        reason: message.slice(0, 500),
        data: { event: delivery.event, attempt: delivery.attempts, final: last },
        createdAt: now,
      });
      if (last) {
        await finishDelivery(this.services, delivery, {
          status: "failed",
          outcome: isRetryable(error) ? "retries_exhausted" : "error",
          detail: message.slice(0, 1000),
          runIds: [],
        });
        log.error({ err: message }, "GitHub delivery failed");
        return;
      }
      const wait = Math.min(10 * 60_000, this.options.backoffBaseMs * 2 ** (delivery.attempts - 1));
      const runAfter = new Date(now.getTime() + wait);
      await this.services.stores.github.retryDelivery(delivery.id, {
        detail: `Attempt ${delivery.attempts} failed (${message.slice(0, 300)}); retrying in ${Math.round(wait / 1000)} s.`,
        runAfter,
        now,
      });
      await this.services.stores.github.dispatchDelivery(delivery.id, runAfter);
      log.warn({ err: message, retry_in_ms: wait }, "GitHub delivery failed; retrying later");
    }
  }
}
