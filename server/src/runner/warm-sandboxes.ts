import { startSandbox, type Sandbox, type SandboxShape } from "./sandbox.ts";

/**
 * Pre-started ("warm") sandboxes: bwrap and the launcher already booted (the node startup,
 * the API forwarder, the plan-diff builder), waiting for one attempt. An attempt takes one and
 * hands it its files, environment and command (`Sandbox.run`); the sandbox serves that attempt
 * only and is destroyed after it, and a replacement starts once the attempt is over (`refill`). Nothing of an attempt
 * is in a sandbox before its handoff, so every attempt still runs in a fresh sandbox.
 *
 * A warm sandbox's name is its id: the hostname is fixed when bwrap starts, before the run is
 * known. One that idles longer than `idleMs` is replaced; `stop` destroys all of them (and
 * bwrap's --die-with-parent ends them with the runner process in any case).
 */
export interface WarmSandboxPoolOptions {
  /** How many sandboxes to keep ready (one per runner slot). */
  size: number;
  /** What every sandbox is made of; called once per sandbox. */
  shape: () => SandboxShape;
  /** A sandbox idle this long is destroyed and replaced. */
  idleMs: number;
  /** A sandbox that failed to start (the attempt then starts its own). */
  onError?: (error: unknown) => void;
  /**
   * Whether a taken sandbox's replacement boots right away, alongside the attempt that took it,
   * rather than at `refill` (e.g. while every slot is busy: under a backlog the next attempt would
   * otherwise wait for a boot).
   */
  refillOnTake?: () => boolean;
}

export class WarmSandboxPool {
  private readonly idle = new Map<Sandbox, NodeJS.Timeout>();
  private readonly warming = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly options: WarmSandboxPoolOptions) {}

  /** Starts filling the pool. */
  start(): void {
    this.stopped = false;
    this.fill();
  }

  /** How many sandboxes are ready or starting. */
  get size(): number {
    return this.idle.size + this.warming.size;
  }

  /**
   * Starts replacements for the sandboxes taken (call it once the attempt that took one is over, so
   * the boot does not compete with it). With `afterMs`, a little later: the end of an attempt is
   * followed by its run's last writes, notices and the clients' reads, which a boot (bwrap's fork,
   * its set-up) would hold up; a `take` or `settled` in the meantime starts it at once.
   */
  refill({ afterMs = 0 } = {}): void {
    if (afterMs <= 0) {
      this.fillNow();
      return;
    }
    this.refillTimer ??= setTimeout(() => this.fillNow(), afterMs);
    this.refillTimer.unref();
  }

  private refillTimer: NodeJS.Timeout | undefined;

  private fillNow(): void {
    clearTimeout(this.refillTimer);
    this.refillTimer = undefined;
    this.fill();
  }

  /** Resolves once no sandbox is starting (the pool is full unless a start failed). */
  async settled(): Promise<void> {
    if (this.refillTimer !== undefined) this.fillNow();
    while (this.warming.size > 0) await Promise.allSettled([...this.warming]);
  }

  private fill(): void {
    while (!this.stopped && this.idle.size + this.warming.size < this.options.size) {
      const warming: Promise<void> = this.warm()
        .catch((error) => this.options.onError?.(error))
        .finally(() => this.warming.delete(warming));
      this.warming.add(warming);
    }
  }

  private async warm(): Promise<void> {
    const sandbox = await startSandbox(this.options.shape());
    if (!(await sandbox.ready) || this.stopped) {
      await sandbox.destroy();
      if (!this.stopped) throw new Error(`warm sandbox ${sandbox.sandboxId} ended before it was ready`);
      return;
    }
    const expire = setTimeout(() => {
      if (!this.idle.delete(sandbox)) return;
      void sandbox.destroy().finally(() => this.fill());
    }, this.options.idleMs);
    expire.unref();
    this.idle.set(sandbox, expire);
    // One that died while idle (killed from outside) is dropped and replaced.
    void sandbox.whenEnded.then(() => {
      const timer = this.idle.get(sandbox);
      if (timer === undefined) return;
      clearTimeout(timer);
      this.idle.delete(sandbox);
      void sandbox.destroy().finally(() => this.fill());
    });
  }

  /**
   * A ready sandbox for one attempt, now yours to `run` (or `destroy`); undefined when none is
   * ready or starting (the caller starts its own). Its replacement starts at `refill`.
   */
  async take(): Promise<Sandbox | undefined> {
    for (;;) {
      if (this.stopped) return undefined;
      if (this.idle.size === 0 && this.refillTimer !== undefined) this.fillNow();
      for (const [sandbox, timer] of this.idle) {
        clearTimeout(timer);
        this.idle.delete(sandbox);
        if (!sandbox.available) {
          void sandbox.destroy();
          continue;
        }
        if (this.options.refillOnTake?.()) this.fill();
        return sandbox;
      }
      if (this.warming.size === 0) return undefined;
      await Promise.race(this.warming);
    }
  }

  /** Destroys every sandbox not yet taken and stops replacing them. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.refillTimer);
    this.refillTimer = undefined;
    await this.settled();
    await Promise.all(
      [...this.idle].map(([sandbox, timer]) => {
        clearTimeout(timer);
        this.idle.delete(sandbox);
        return sandbox.destroy();
      }),
    );
  }
}
