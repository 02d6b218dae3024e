import type { Services } from "../commands/services.ts";

/** How often a runner looks at the recorded cancel requests of the runs it executes. */
export const CANCEL_POLL_MS = 250;

/**
 * Makes a cancel reach the process that runs the attempt, wherever the API that recorded it runs:
 * every `intervalMs` (only while this runner holds work) one query asks which of the runs it
 * executes have a recorded cancel request (`runs.cancel_requested_at`, set by the v1 and tfe
 * cancel actions), and each such run is interrupted through its abort signal, exactly as the
 * in-process callback does (the sandbox is asked to stop, then killed). Polling rather than
 * LISTEN/NOTIFY keeps SQLite and PostgreSQL on one path; at 250 ms it adds one indexed lookup by
 * primary key per runner four times a second, and nothing when the runner is idle.
 */
export class CancelWatch {
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  /** Runs already interrupted: each is interrupted (and logged) once. */
  private readonly interrupted = new Set<string>();

  constructor(
    private readonly services: Services,
    /** The runs this runner executes now, each with the interrupt of its attempt. */
    private readonly held: () => Iterable<{ runId: string; interrupt: () => void }>,
    private readonly log: (runId: string) => void,
    private readonly intervalMs = CANCEL_POLL_MS,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.poll(), this.intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look: interrupts every held run whose cancel was recorded. */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const held = [...this.held()];
      const ids = new Set(held.map(({ runId }) => runId));
      for (const runId of this.interrupted) if (!ids.has(runId)) this.interrupted.delete(runId);
      if (held.length === 0) return;
      const requested = new Set(await this.services.stores.runs.listCancelRequested([...ids]));
      for (const { runId, interrupt } of held) {
        if (!requested.has(runId) || this.interrupted.has(runId)) continue;
        this.interrupted.add(runId);
        this.log(runId);
        interrupt();
      }
    } catch (error) {
      this.services.logger.warn(
        { err: error },
        "could not read the cancel requests of the runs in flight; trying again",
      );
    } finally {
      this.polling = false;
    }
  }
}
