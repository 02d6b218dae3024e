/**
 * The messages of the live run WebSocket (`/live/runs/{run_id}`), server to client, one JSON
 * object per text frame. spec/v1/LIVE.md is the prose contract; the JSON Schema is
 * spec/schemas/stackship.live.v1.json. The client sends nothing (anything it sends is ignored).
 */

/** The phases with a log. */
export type LiveLogPhase = "plan" | "policy" | "apply";

/** The run facts the live channel reports (the same values as the run document). */
export interface LiveRunState {
  status: string;
  /** The recorded terminal or recovery reason code, null while there is none. */
  status_reason: string | null;
  /** `pending running finished errored canceled`. */
  plan_status: string;
  /** `skipped passed soft_failed hard_failed errored`, null until the policy stage ended. */
  policy_outcome: string | null;
  /** `pending running finished errored canceled interrupted`. */
  apply_status: string;
  /** Whether the status is terminal: the socket closes right after this message. */
  terminal: boolean;
}

/** Where a phase's log stood when this connection started. */
export interface LiveLogPosition {
  /** The sequence number the next chunk of this phase will carry (0 when there is none yet). */
  next_seq: number;
  /** The HTTP log route's `next_offset` after the last chunk this connection has accounted for. */
  next_offset: number;
  /** Whether the phase's log is complete (its final chunk was stored). */
  complete: boolean;
}

/** The first message of every connection. */
export interface LiveHelloMessage {
  type: "hello";
  /** The message format version; a client refuses versions it does not know. */
  version: 1;
  run_id: string;
  run: LiveRunState;
  /** Events after this message continue exactly from these positions. */
  logs: Record<LiveLogPhase, LiveLogPosition>;
}

/** One stored, sanitized log chunk of one phase. */
export interface LiveLogMessage {
  type: "log";
  run_id: string;
  phase: LiveLogPhase;
  /** The chunk's sequence number in its phase: 0, 1, 2, … with no gaps. */
  seq: number;
  /** Where the chunk starts in the HTTP log route's text (`GET /v1/runs/{run_id}/logs/{phase}?offset=`). */
  offset: number;
  /** `offset` plus the chunk's length: pass it as `offset` to the HTTP log route to read what follows. */
  next_offset: number;
  text: string;
  /** The phase's last chunk: its log is complete. */
  final: boolean;
}

/** A stage or apply state change (a run status transition, or a phase status change). */
export interface LiveRunMessage {
  type: "run";
  run_id: string;
  run: LiveRunState;
  /** Which of the facts changed since the previous `hello` or `run` message. */
  changed: Array<"status" | "status_reason" | "plan_status" | "policy_outcome" | "apply_status">;
}

/** Anything the server sends. */
export type LiveMessage = LiveHelloMessage | LiveLogMessage | LiveRunMessage;

/** The close codes the server uses. */
export const LIVE_CLOSE = {
  /** The run became terminal; the HTTP routes have everything. */
  RUN_ENDED: 1000,
  /** The server is shutting down; reconnect to another process. */
  GOING_AWAY: 1001,
  /** The session was signed out or expired while connected. */
  SESSION_ENDED: 1008,
  /** Something failed on the server; fall back to the HTTP routes. */
  INTERNAL_ERROR: 1011,
  /** The client read too slowly and was dropped; re-read the HTTP log route, then reconnect. */
  SLOW_CONSUMER: 1013,
} as const;
