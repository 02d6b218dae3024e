// The live feed's side of component tests: a fake browser WebSocket and the messages it delivers.
import { RUN_ID } from "./fixtures.ts";

/** A fake browser WebSocket for the live feed: records every socket, lets a test deliver frames and close it. */
export class FakeSocket {
  static all: FakeSocket[] = [];
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  closed = false;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  static create = (url: string) => new FakeSocket(url);
  static get last(): FakeSocket {
    return FakeSocket.all[FakeSocket.all.length - 1];
  }
  send(message: unknown) {
    this.onmessage?.(new MessageEvent("message", { data: JSON.stringify(message) }));
  }
  /** The server (or the network) closes the socket. */
  drop(code = 1006) {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.(new CloseEvent("close", { code }));
  }
  close() {
    this.closed = true;
  }
}

/** A `hello` for RUN_ID with the given per-phase positions. */
export function helloMessage(
  logs: Partial<
    Record<"plan" | "policy" | "apply", { next_seq: number; next_offset: number; complete?: boolean }>
  > = {},
  status = "applying",
) {
  const at = (phase: "plan" | "policy" | "apply") => ({ next_seq: 0, next_offset: 0, complete: false, ...logs[phase] });
  return {
    type: "hello",
    version: 1,
    run_id: RUN_ID,
    run: {
      status,
      status_reason: null,
      plan_status: "finished",
      policy_outcome: "passed",
      apply_status: "running",
      terminal: false,
    },
    logs: { plan: at("plan"), policy: at("policy"), apply: at("apply") },
  };
}

/** A `log` message for RUN_ID. */
export function logMessage(
  phase: "plan" | "policy" | "apply",
  seq: number,
  offset: number,
  text: string,
  final = false,
) {
  return { type: "log", run_id: RUN_ID, phase, seq, offset, next_offset: offset + text.length, text, final };
}
