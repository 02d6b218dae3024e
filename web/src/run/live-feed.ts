/**
 * The run page's live feed: one WebSocket to `/live/runs/{run_id}` (format: spec/v1/LIVE.md),
 * with no Lit in it so it can be tested against a fake WebSocket.
 *
 * - `log` messages go to the listeners of their phase (the consoles), which keep their own
 *   offsets and decide by offset whether a chunk appends, is a duplicate, or leaves a gap. The
 *   feed also checks the per-phase sequence: a message past the expected `seq` (a gap or an
 *   out-of-order message) makes every listener of that phase re-read the HTTP log route; a
 *   message before it is a duplicate and dropped.
 * - `hello` tells each listener where the stream starts (a listener behind it re-reads the route).
 * - `run` messages (and every hello and close) ask for one review read per burst (debounced).
 * - Any close or error: listeners re-read the route from their offset. Close 1000 (the run is
 *   terminal) and 1008 (signed out or no longer allowed) stop the feed; anything else reconnects
 *   with exponential backoff and jitter. `failureLimit` failures within `failureWindowMs` make
 *   the feed `stale` until the next `hello`.
 */

export type LivePhase = "plan" | "policy" | "apply";
export const LIVE_PHASES: readonly LivePhase[] = ["plan", "policy", "apply"];

export interface LiveChunk {
  seq: number;
  offset: number;
  next_offset: number;
  text: string;
  final: boolean;
}

/** A console (or anything else) following one phase's log. */
export interface PhaseListener {
  /** A chunk in sequence order (duplicates by `seq` already dropped; offsets still to be checked). */
  chunk(chunk: LiveChunk): void;
  /** Re-read the HTTP log route from your offset; `atLeast` is where the stream continues, when known. */
  resync(atLeast?: number): void;
}

/** The part of the browser WebSocket the feed uses. */
export interface SocketLike {
  onopen: ((event: Event) => void) | null;
  onmessage: ((event: MessageEvent) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  onerror: ((event: Event) => void) | null;
  close(code?: number, reason?: string): void;
}

export interface LiveFeedState {
  /** A hello arrived and the socket is open. */
  live: boolean;
  /** The socket failed repeatedly; the review should be polled until it recovers. */
  stale: boolean;
  /** The feed will not reconnect (the run is terminal, the session ended, or stop() was called). */
  stopped: boolean;
}

export interface LiveFeedOptions {
  url: string;
  /** Asked (debounced) to read the review again. */
  onReviewChanged: () => void;
  /** Called whenever `state` changes. */
  onState?: (state: LiveFeedState) => void;
  createSocket?: (url: string) => SocketLike;
  /** Debounce of review reads after `run` messages (ms). */
  debounceMs?: number;
  /** First reconnect delay, doubled per failure up to `maxDelayMs`, then jittered to 50–100 %. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  failureLimit?: number;
  failureWindowMs?: number;
  random?: () => number;
  now?: () => number;
}

/** The WebSocket URL of a run's live feed on this page's own origin. */
export function liveUrl(runId: string, location: { protocol: string; host: string } = globalThis.location): string {
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/live/runs/${encodeURIComponent(runId)}`;
}

interface Hello {
  type: "hello";
  run: { terminal: boolean };
  logs: Record<LivePhase, { next_seq: number; next_offset: number; complete: boolean }>;
}

export class RunLiveFeed {
  private readonly options: Required<Omit<LiveFeedOptions, "onState">> & Pick<LiveFeedOptions, "onState">;
  private socket: SocketLike | null = null;
  private readonly listeners = new Map<LivePhase, Set<PhaseListener>>(LIVE_PHASES.map((p) => [p, new Set()]));
  private readonly nextSeq = new Map<LivePhase, number>();
  private readonly positions = new Map<LivePhase, number>();
  private failures: number[] = [];
  private attempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private debounceTimer: ReturnType<typeof setTimeout> | undefined;
  private terminalSeen = false;
  private suspended = false;
  /** How many sockets this feed opened (tests and diagnostics). */
  connections = 0;
  state: LiveFeedState = { live: false, stale: false, stopped: false };

  constructor(options: LiveFeedOptions) {
    this.options = {
      createSocket: (url) => new WebSocket(url),
      debounceMs: 250,
      baseDelayMs: 1000,
      maxDelayMs: 30_000,
      failureLimit: 3,
      failureWindowMs: 60_000,
      random: Math.random,
      now: Date.now,
      ...options,
    };
  }

  /** Opens the socket (again, after suspend()). */
  start() {
    if (this.state.stopped) return;
    this.suspended = false;
    if (!this.socket && this.reconnectTimer === undefined) this.connect();
  }

  /** Closes the socket for good. */
  stop() {
    this.drop();
    clearTimeout(this.debounceTimer);
    this.debounceTimer = undefined;
    this.setState({ live: false, stale: false, stopped: true });
  }

  /** Closes the socket until start() (the page was hidden for long, or left); not a failure. */
  suspend(resync = true) {
    if (this.state.stopped) return;
    this.suspended = true;
    this.drop();
    this.setState({ ...this.state, live: false });
    if (resync) this.resyncAll();
  }

  /** Follows `phase`; returns the unsubscribe function. */
  listen(phase: LivePhase, listener: PhaseListener): () => void {
    this.listeners.get(phase)!.add(listener);
    return () => this.listeners.get(phase)!.delete(listener);
  }

  /** The furthest offset of `phase` the feed has heard of (hello or log), or null. */
  position(phase: LivePhase): number | null {
    return this.positions.get(phase) ?? null;
  }

  private drop() {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.onopen = socket.onmessage = socket.onerror = socket.onclose = null;
      try {
        socket.close(1000, "left");
      } catch {
        /* already closed */
      }
    }
  }

  private connect() {
    this.reconnectTimer = undefined;
    let socket: SocketLike;
    try {
      socket = this.options.createSocket(this.options.url);
    } catch {
      this.failed();
      return;
    }
    this.connections++;
    this.socket = socket;
    socket.onmessage = (event) => {
      if (this.socket === socket) this.onMessage(event.data);
    };
    socket.onerror = () => undefined; // a close always follows
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.onClose(event.code);
    };
  }

  private onMessage(data: unknown) {
    let message: { type?: string } & Record<string, unknown>;
    try {
      message = JSON.parse(String(data)) as { type?: string } & Record<string, unknown>;
    } catch {
      return;
    }
    if (message.type === "hello") this.onHello(message as unknown as Hello);
    else if (message.type === "log") this.onLog(message as unknown as LiveChunk & { phase: LivePhase });
    else if (message.type === "run") {
      if ((message.run as { terminal?: boolean } | undefined)?.terminal) this.terminalSeen = true;
      this.reviewChanged();
    }
  }

  private onHello(hello: Hello) {
    this.failures = [];
    this.attempt = 0;
    if (hello.run?.terminal) this.terminalSeen = true;
    for (const phase of LIVE_PHASES) {
      const at = hello.logs?.[phase];
      if (!at) continue;
      this.nextSeq.set(phase, at.next_seq);
      this.advance(phase, at.next_offset);
      for (const listener of [...this.listeners.get(phase)!]) listener.resync(at.next_offset);
    }
    this.setState({ live: true, stale: false, stopped: false });
    this.reviewChanged();
  }

  private onLog(log: LiveChunk & { phase: LivePhase }) {
    const listeners = this.listeners.get(log.phase);
    if (!listeners) return;
    const expected = this.nextSeq.get(log.phase);
    if (expected !== undefined && log.seq < expected) return; // a duplicate
    this.nextSeq.set(log.phase, log.seq + 1);
    this.advance(log.phase, log.next_offset);
    const chunk: LiveChunk = {
      seq: log.seq,
      offset: log.offset,
      next_offset: log.next_offset,
      text: log.text,
      final: log.final,
    };
    const gap = expected !== undefined && log.seq > expected;
    for (const listener of [...listeners]) {
      if (gap) listener.resync(log.next_offset);
      else listener.chunk(chunk);
    }
  }

  private onClose(code: number) {
    const wasLive = this.state.live;
    if (code === 1000 || code === 1008 || this.terminalSeen) {
      this.setState({ live: false, stale: false, stopped: true });
    } else {
      this.setState({ ...this.state, live: false });
      this.failed();
    }
    this.resyncAll();
    if (wasLive || this.state.stopped) this.reviewChanged();
  }

  private failed() {
    const now = this.options.now();
    this.failures = [...this.failures.filter((at) => now - at < this.options.failureWindowMs), now];
    if (this.failures.length >= this.options.failureLimit && !this.state.stale)
      this.setState({ ...this.state, stale: true });
    if (this.suspended || this.state.stopped) return;
    const ceiling = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** this.attempt);
    this.attempt++;
    const delay = ceiling * (0.5 + 0.5 * this.options.random());
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  private resyncAll() {
    for (const phase of LIVE_PHASES) for (const listener of [...this.listeners.get(phase)!]) listener.resync();
  }

  private advance(phase: LivePhase, offset: number) {
    if (offset > (this.positions.get(phase) ?? -1)) this.positions.set(phase, offset);
  }

  private reviewChanged() {
    if (this.debounceTimer !== undefined) return;
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      this.options.onReviewChanged();
    }, this.options.debounceMs);
  }

  private setState(next: LiveFeedState) {
    const s = this.state;
    if (s.live === next.live && s.stale === next.stale && s.stopped === next.stopped) return;
    this.state = next;
    this.options.onState?.(next);
  }
}
