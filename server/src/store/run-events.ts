import { EventEmitter } from "node:events";
import type { Knex } from "knex";
import pg from "pg";
import type { ApplyPhaseStatus, PlanPhaseStatus, RunStatus } from "../domain/run.ts";
import type { PolicyOutcome, RunEvent, RunReason } from "../domain/run-lifecycle.ts";
import type { Database } from "./db.ts";
import type { Dialect, Executor } from "./dialect.ts";

/**
 * The run change feed: the repositories announce every stored log chunk and every run update,
 * the live WebSocket hub listens. On PostgreSQL an announcement is a NOTIFY sent in the same
 * transaction as the write (so it reaches every API process, from a runner in any process, and
 * only once the write is committed); on SQLite, where the runner and the API share one process,
 * it is an in-process event emitted after the commit. Announcements are hints: the database
 * stays the record, and a listener that may have missed one re-reads it.
 */

/** The PostgreSQL channel run changes are announced on. */
export const RUN_CHANGE_CHANNEL = "stackship_run_changes";

/** A log chunk was stored: its run, phase and sequence number, and its text when small. */
export interface LogChunkNotice {
  kind: "log";
  runId: string;
  phase: "plan" | "policy" | "apply";
  seq: number;
  final: boolean;
  /** The chunk's text, only when it fits the notification; otherwise read it from the database. */
  text?: string;
}

/** A run's execution record was updated: the facts the live channel reports. */
export interface RunStateNotice {
  kind: "run";
  runId: string;
  status: RunStatus;
  statusReason: RunReason | null;
  planStatus: PlanPhaseStatus;
  policyOutcome: PolicyOutcome | null;
  applyStatus: ApplyPhaseStatus;
  /** The lifecycle event that made this change (commands/run-transitions.ts); null for any other update. */
  event: RunEvent["type"] | null;
}

/** One announcement of the run change feed. */
export type RunChangeNotice = LogChunkNotice | RunStateNotice;

/**
 * Someone's access was taken away or narrowed (a membership removed or changed, sessions ended,
 * the user disabled): live sockets of that user re-check their session and authorization now
 * instead of at the next heartbeat. Announced like the run changes, on the same channel.
 */
export interface AccessChangeNotice {
  kind: "access";
  userId: string;
}

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; stay well below. */
const NOTIFY_PAYLOAD_LIMIT = 7000;

type Wire =
  | { k: "log"; r: string; p: LogChunkNotice["phase"]; s: number; f: 0 | 1; t?: string }
  | {
      k: "run";
      r: string;
      st: RunStatus;
      sr: RunReason | null;
      ps: PlanPhaseStatus;
      po: PolicyOutcome | null;
      as: ApplyPhaseStatus;
      ev?: RunEvent["type"] | null;
    };

/** The compact NOTIFY payload of a notice (a log chunk's text only when the whole payload stays small). */
export function encodeNotice(notice: RunChangeNotice): string {
  if (notice.kind === "run") {
    const wire: Wire = {
      k: "run",
      r: notice.runId,
      st: notice.status,
      sr: notice.statusReason,
      ps: notice.planStatus,
      po: notice.policyOutcome,
      as: notice.applyStatus,
      ev: notice.event,
    };
    return JSON.stringify(wire);
  }
  const bare: Wire = { k: "log", r: notice.runId, p: notice.phase, s: notice.seq, f: notice.final ? 1 : 0 };
  if (notice.text === undefined) return JSON.stringify(bare);
  const full = JSON.stringify({ ...bare, t: notice.text });
  return Buffer.byteLength(full) < NOTIFY_PAYLOAD_LIMIT ? full : JSON.stringify(bare);
}

/** The access change of a NOTIFY payload; undefined for anything else. */
export function decodeAccessNotice(payload: string): AccessChangeNotice | undefined {
  try {
    const wire = JSON.parse(payload) as { k?: unknown; u?: unknown };
    return wire?.k === "acc" && typeof wire.u === "string" ? { kind: "access", userId: wire.u } : undefined;
  } catch {
    return undefined;
  }
}

/** The notice of a NOTIFY payload; undefined for anything malformed. */
export function decodeNotice(payload: string): RunChangeNotice | undefined {
  let wire: Wire;
  try {
    wire = JSON.parse(payload) as Wire;
  } catch {
    return undefined;
  }
  if (wire?.k === "log" && typeof wire.r === "string" && Number.isSafeInteger(wire.s)) {
    return {
      kind: "log",
      runId: wire.r,
      phase: wire.p,
      seq: wire.s,
      final: wire.f === 1,
      ...(typeof wire.t === "string" ? { text: wire.t } : {}),
    };
  }
  if (wire?.k === "run" && typeof wire.r === "string") {
    return {
      kind: "run",
      runId: wire.r,
      status: wire.st,
      statusReason: wire.sr,
      planStatus: wire.ps,
      policyOutcome: wire.po,
      applyStatus: wire.as,
      event: wire.ev ?? null,
    };
  }
  return undefined;
}

// The embedded default's bus. It is process-wide: notices name their run, and run ids are unique
// across databases, so two databases in one process (tests) never see each other's runs.
const localBus = new EventEmitter();
localBus.setMaxListeners(0);
const LOCAL_EVENT = "notice";
const LOCAL_ACCESS_EVENT = "access";

function outermost(trx: Knex.Transaction): Knex.Transaction {
  let current = trx as Knex.Transaction & { parentTransaction?: Knex.Transaction };
  while (current.parentTransaction)
    current = current.parentTransaction as Knex.Transaction & { parentTransaction?: Knex.Transaction };
  return current;
}

/**
 * Announces a change written through `executor`. PostgreSQL: a NOTIFY in the same transaction.
 * SQLite: an in-process event once the outermost transaction commits (never on rollback), or
 * right away when the write was not in a transaction.
 */
export async function announce(
  executor: Executor,
  dialect: Dialect,
  notice: RunChangeNotice | AccessChangeNotice,
): Promise<void> {
  if (dialect === "postgres") {
    const payload = notice.kind === "access" ? JSON.stringify({ k: "acc", u: notice.userId }) : encodeNotice(notice);
    await executor.raw("select pg_notify(?, ?)", [RUN_CHANGE_CHANNEL, payload]);
    return;
  }
  const event = notice.kind === "access" ? LOCAL_ACCESS_EVENT : LOCAL_EVENT;
  const trx = executor as Knex.Transaction;
  const committed = trx.isTransaction ? (outermost(trx).executionPromise as Promise<unknown> | undefined) : undefined;
  if (committed) {
    committed.then(
      () => localBus.emit(event, notice),
      () => undefined,
    );
    return;
  }
  localBus.emit(event, notice);
}

/**
 * Runs `fn` so that a write and its announcement commit together: on PostgreSQL outside a
 * transaction it opens one; inside a transaction (or on SQLite) it runs on `executor` as is.
 */
export async function atomically<T>(
  executor: Executor,
  dialect: Dialect,
  fn: (executor: Executor) => Promise<T>,
): Promise<T> {
  if (dialect === "postgres" && !(executor as Knex.Transaction).isTransaction)
    return (executor as Knex).transaction((trx) => fn(trx));
  return fn(executor);
}

/** What a feed listener hears: notices, and `resync` when notices may have been missed. */
export interface RunChangeListener {
  notice(notice: RunChangeNotice): void;
  /** The feed reconnected: anything since the last notice may be lost; re-read the database. */
  resync(): void;
  /** Someone's access changed (AccessChangeNotice). */
  access?(notice: AccessChangeNotice): void;
}

/** A subscription source of run changes for one database. */
export interface RunChangeFeed {
  /** Resolves once notices written from now on will be heard (PostgreSQL: LISTEN is active). */
  subscribe(listener: RunChangeListener): Promise<() => void>;
  close(): Promise<void>;
}

/** The feed of `db`: the in-process bus on SQLite, LISTEN on a dedicated connection on PostgreSQL. */
export function openRunChangeFeed(
  db: Database,
  log: { warn(obj: object, msg: string): void } = { warn: () => undefined },
): RunChangeFeed {
  return db.dialect === "postgres" ? new PostgresFeed(db.url, log) : new LocalFeed();
}

class LocalFeed implements RunChangeFeed {
  private readonly listeners = new Set<RunChangeListener>();
  private readonly onNotice = (notice: RunChangeNotice) => {
    for (const listener of this.listeners) listener.notice(notice);
  };
  private readonly onAccess = (notice: AccessChangeNotice) => {
    for (const listener of this.listeners) listener.access?.(notice);
  };

  async subscribe(listener: RunChangeListener): Promise<() => void> {
    if (this.listeners.size === 0) {
      localBus.on(LOCAL_EVENT, this.onNotice);
      localBus.on(LOCAL_ACCESS_EVENT, this.onAccess);
    }
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stopListening();
    };
  }

  private stopListening(): void {
    localBus.off(LOCAL_EVENT, this.onNotice);
    localBus.off(LOCAL_ACCESS_EVENT, this.onAccess);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.stopListening();
  }
}

/**
 * LISTEN on one dedicated connection per process, opened on the first subscription. A lost
 * connection is reopened with backoff, and every listener is told to resync afterwards.
 */
class PostgresFeed implements RunChangeFeed {
  private readonly listeners = new Set<RunChangeListener>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly log: { warn(obj: object, msg: string): void },
  ) {}

  async subscribe(listener: RunChangeListener): Promise<() => void> {
    this.listeners.add(listener);
    await this.connect();
    return () => {
      this.listeners.delete(listener);
    };
  }

  private connect(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= this.open().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on("notification", (message) => {
      if (message.channel !== RUN_CHANGE_CHANNEL || !message.payload) return;
      const access = decodeAccessNotice(message.payload);
      if (access) {
        for (const listener of this.listeners) listener.access?.(access);
        return;
      }
      const notice = decodeNotice(message.payload);
      if (!notice) return;
      for (const listener of this.listeners) listener.notice(notice);
    });
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, new Error("connection ended")));
    await client.connect();
    await client.query(`LISTEN ${RUN_CHANGE_CHANNEL}`);
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    client.removeAllListeners("notification");
    void client.end().catch(() => undefined);
    this.log.warn({ err: error }, "live: the LISTEN connection was lost; reconnecting");
    const retry = (delay: number) => {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        if (this.closed) return;
        this.connect().then(
          () => {
            for (const listener of this.listeners) listener.resync();
          },
          () => retry(Math.min(delay * 2, 5000)),
        );
      }, delay);
      this.retryTimer.unref();
    };
    retry(100);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.listeners.clear();
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
