import type { WebSocket } from "ws";
import { isTerminalRunStatus } from "../domain/run.ts";
import type { Run } from "../domain/records.ts";
import type { Services } from "../commands/services.ts";
import type { LogPhase, LogPosition, RunChangeFeed, RunChangeNotice } from "../store/index.ts";
import {
  LIVE_CLOSE,
  type LiveLogMessage,
  type LiveMessage,
  type LiveRunMessage,
  type LiveRunState,
} from "./messages.ts";

const PHASES: readonly LogPhase[] = ["plan", "policy", "apply"];
/** Chunks read per query while catching up from the database. */
const CATCH_UP_BATCH = 500;

/** Limits of the hub. */
export interface LiveHubOptions {
  /**
   * A viewer whose socket holds more unsent bytes than this is dropped (close 1013) instead of
   * buffering without bound; it re-reads the HTTP log route and reconnects. Default 1 MiB.
   */
  maxBufferedBytes?: number;
  /** How long a dropped viewer gets to take its close frame before the socket is destroyed. */
  closeGraceMs?: number;
  /**
   * How often sockets are pinged (one that missed the previous ping is dropped) and their
   * sessions re-checked (a signed-out or expired session is closed with 1008). Default 30 s.
   */
  heartbeatMs?: number;
  /**
   * Called when someone's access changed (store/run-events.ts AccessChangeNotice, from this or any
   * other API process): the gateway re-checks that user's sockets at once.
   */
  onAccessChange?: (userId: string) => void;
}

function stateOf(run: Run): LiveRunState {
  const x = run.execution;
  return {
    status: run.status,
    status_reason: x.statusReason,
    plan_status: x.planStatus,
    policy_outcome: x.policyOutcome,
    apply_status: x.applyStatus,
    terminal: isTerminalRunStatus(run.status),
  };
}

const FACTS = ["status", "status_reason", "plan_status", "policy_outcome", "apply_status"] as const;

/**
 * Fans run changes out to the WebSockets watching each run in this process. One channel per
 * watched run serializes everything about that run: it learns of changes from the run change
 * feed, reads what a notice does not carry (or what it may have missed) from the database, and
 * sends each event, serialized once, to every viewer. Per phase, chunks go out in sequence order
 * with no gaps; the database decides, never the order notices arrive in.
 */
export class LiveHub {
  private readonly channels = new Map<string, RunChannel>();
  private subscription: Promise<() => void> | null = null;
  private closed = false;
  readonly maxBufferedBytes: number;
  readonly closeGraceMs: number;
  private readonly onAccessChange: ((userId: string) => void) | undefined;

  constructor(
    readonly services: Services,
    private readonly feed: RunChangeFeed,
    options: LiveHubOptions = {},
  ) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024;
    this.closeGraceMs = options.closeGraceMs ?? 2000;
    this.onAccessChange = options.onAccessChange;
  }

  /** How many runs and sockets this process is serving. */
  stats(): { runs: number; viewers: number } {
    let viewers = 0;
    for (const channel of this.channels.values()) viewers += channel.viewers.size;
    return { runs: this.channels.size, viewers };
  }

  /** Starts streaming `runId` to an open socket: a `hello`, then every event until the run ends. */
  async join(runId: string, ws: WebSocket): Promise<void> {
    if (this.closed) {
      ws.close(LIVE_CLOSE.GOING_AWAY, "server shutting down");
      return;
    }
    try {
      // LISTEN must be active before the channel reads its starting point, or a change between
      // the two would be lost.
      this.subscription ??= this.feed.subscribe({
        notice: (notice) => this.channels.get(notice.runId)?.notice(notice),
        resync: () => {
          for (const channel of this.channels.values()) channel.resync();
        },
        access: (notice) => this.onAccessChange?.(notice.userId),
      });
      await this.subscription;
    } catch (error) {
      this.subscription = null;
      this.services.logger.error({ err: error }, "live: cannot subscribe to run changes");
      ws.close(LIVE_CLOSE.INTERNAL_ERROR, "live events are unavailable; use the HTTP routes");
      return;
    }
    let channel = this.channels.get(runId);
    if (!channel) {
      channel = new RunChannel(this, runId);
      this.channels.set(runId, channel);
    }
    channel.add(ws);
  }

  /** @internal */
  release(channel: RunChannel): void {
    if (this.channels.get(channel.runId) === channel) this.channels.delete(channel.runId);
  }

  /** Closes every socket (1001) and stops listening. */
  async close(): Promise<void> {
    this.closed = true;
    for (const channel of [...this.channels.values()]) channel.end(LIVE_CLOSE.GOING_AWAY, "server shutting down");
    this.channels.clear();
    const unsubscribe = await this.subscription?.catch(() => undefined);
    unsubscribe?.();
    await this.feed.close();
  }
}

/** Everything this process sends about one run. */
class RunChannel {
  /** Every socket of this run, including those still waiting for their `hello`. */
  readonly viewers = new Set<WebSocket>();
  /** The sockets that got their `hello`: events go to these. */
  private readonly ready = new Set<WebSocket>();
  private positions: Record<LogPhase, LogPosition> | null = null;
  private state: LiveRunState | null = null;
  private work: Promise<void> = Promise.resolve();
  private ended = false;

  constructor(
    private readonly hub: LiveHub,
    readonly runId: string,
  ) {
    this.enqueue(() => this.load());
  }

  private get stores() {
    return this.hub.services.stores;
  }

  private enqueue(task: () => Promise<void>): void {
    this.work = this.work.then(task).catch((error: unknown) => {
      this.hub.services.logger.error({ err: error, runId: this.runId }, "live: run channel failed");
      this.end(LIVE_CLOSE.INTERNAL_ERROR, "live events failed; use the HTTP routes");
    });
  }

  private async load(): Promise<void> {
    const [positions, run] = await Promise.all([
      this.stores.logs.positions(this.runId),
      this.stores.runs.getById(this.runId),
    ]);
    if (!run) throw new Error(`run ${this.runId} disappeared`);
    this.positions = positions;
    this.state = stateOf(run);
  }

  add(ws: WebSocket): void {
    this.viewers.add(ws);
    ws.once("close", () => {
      this.viewers.delete(ws);
      this.ready.delete(ws);
      if (this.viewers.size === 0 && !this.ended) {
        this.ended = true;
        this.hub.release(this);
      }
    });
    this.enqueue(async () => {
      if (ws.readyState !== ws.OPEN || this.ended || !this.positions || !this.state) return;
      const logs = Object.fromEntries(
        PHASES.map((phase) => {
          const p = this.positions![phase];
          return [phase, { next_seq: p.nextSeq, next_offset: p.nextOffset, complete: p.complete }];
        }),
      ) as Record<LogPhase, { next_seq: number; next_offset: number; complete: boolean }>;
      this.ready.add(ws);
      this.sendTo(
        ws,
        JSON.stringify({ type: "hello", version: 1, run_id: this.runId, run: this.state, logs } satisfies LiveMessage),
      );
      if (this.state.terminal) this.end(LIVE_CLOSE.RUN_ENDED, `run ${this.state.status}`);
    });
  }

  notice(notice: RunChangeNotice): void {
    if (this.ended) return;
    if (notice.kind === "log") {
      this.enqueue(async () => {
        if (this.ended || !this.positions) return;
        const position = this.positions[notice.phase];
        if (notice.seq < position.nextSeq) return;
        if (notice.seq === position.nextSeq && notice.text !== undefined)
          this.deliver(notice.phase, { seq: notice.seq, text: notice.text, final: notice.final });
        else await this.catchUp(notice.phase);
      });
    } else {
      this.enqueue(() => this.refreshRun());
    }
  }

  /** Notices may have been lost: catch up every phase and re-read the run. */
  resync(): void {
    if (this.ended) return;
    this.enqueue(async () => {
      for (const phase of PHASES) await this.catchUp(phase);
      await this.refreshRun();
    });
  }

  private async catchUp(phase: LogPhase): Promise<void> {
    if (!this.positions) return;
    for (;;) {
      const chunks = await this.stores.logs.chunksFrom(
        this.runId,
        phase,
        this.positions[phase].nextSeq,
        CATCH_UP_BATCH,
      );
      for (const chunk of chunks) this.deliver(phase, chunk);
      if (chunks.length < CATCH_UP_BATCH || this.ended) return;
    }
  }

  private deliver(phase: LogPhase, chunk: { seq: number; text: string; final: boolean }): void {
    const position = this.positions![phase];
    if (chunk.seq !== position.nextSeq) return;
    const message: LiveLogMessage = {
      type: "log",
      run_id: this.runId,
      phase,
      seq: chunk.seq,
      offset: position.nextOffset,
      next_offset: position.nextOffset + chunk.text.length,
      text: chunk.text,
      final: chunk.final,
    };
    position.nextSeq += 1;
    position.nextOffset = message.next_offset;
    position.complete ||= chunk.final;
    this.broadcast(JSON.stringify(message));
  }

  /**
   * Re-reads the run (the notice may be older than what is stored) and reports what changed.
   * Every phase's log is caught up first, so the chunks stored before a change (above all,
   * before the run ended) go out before it.
   */
  private async refreshRun(): Promise<void> {
    if (this.ended || !this.state) return;
    const run = await this.stores.runs.getById(this.runId);
    if (!run) return;
    const next = stateOf(run);
    const changed = FACTS.filter((fact) => next[fact] !== this.state![fact]);
    if (changed.length === 0) return;
    for (const phase of PHASES) await this.catchUp(phase);
    this.state = next;
    this.broadcast(JSON.stringify({ type: "run", run_id: this.runId, run: next, changed } satisfies LiveRunMessage));
    if (next.terminal) this.end(LIVE_CLOSE.RUN_ENDED, `run ${next.status}`);
  }

  private broadcast(data: string): void {
    // Encoded once for every socket (ws would otherwise convert the string per socket).
    const bytes = Buffer.from(data, "utf8");
    for (const ws of this.ready) this.sendTo(ws, bytes);
  }

  private sendTo(ws: WebSocket, data: string | Buffer): void {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > this.hub.maxBufferedBytes) {
      this.drop(ws);
      return;
    }
    ws.send(data, { binary: false });
  }

  /** A viewer that cannot keep up: it must re-read the HTTP log route. Its buffer is freed either way. */
  private drop(ws: WebSocket): void {
    this.viewers.delete(ws);
    this.ready.delete(ws);
    ws.close(LIVE_CLOSE.SLOW_CONSUMER, "too slow: re-read the HTTP log route, then reconnect");
    setTimeout(() => ws.terminate(), this.hub.closeGraceMs).unref();
  }

  /** Closes every viewer with `code` and forgets the channel. */
  end(code: number, reason: string): void {
    if (!this.ended) {
      this.ended = true;
      this.hub.release(this);
    }
    for (const ws of this.viewers) {
      ws.close(code, reason);
      setTimeout(() => ws.terminate(), this.hub.closeGraceMs).unref();
    }
    this.viewers.clear();
    this.ready.clear();
  }
}
