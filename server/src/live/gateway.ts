import { randomUUID } from "node:crypto";
import { ServerResponse, STATUS_CODES, type IncomingMessage, type Server as HttpServer } from "node:http";
import type { Socket } from "node:net";
import type { Server as HttpsServer } from "node:https";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import { loadRun } from "../api/lookup.ts";
import { isAllowed, type AuthorizationTarget } from "../domain/authorization.ts";
import { DomainError } from "../domain/errors.ts";
import { isTerminalRunStatus } from "../domain/run.ts";
import { SESSION_COOKIE } from "../domain/sessions.ts";
import type { RequestContext } from "../http/app.ts";
import { JSON_API } from "../http/jsonapi.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import { isAllowedOrigin, sessionPrincipal } from "../http/middleware/authenticate.ts";
import { renderV1Error } from "../http/middleware/errors.ts";
import type { Services } from "../commands/services.ts";
import { openRunChangeFeed } from "../store/index.ts";
import { LiveHub, type LiveHubOptions } from "./hub.ts";
import { LIVE_CLOSE } from "./messages.ts";

/** The Retry-After of a refusal for too many sockets: a place frees as soon as a socket closes. */
const LIVE_SOCKET_RETRY_SECONDS = 5;

/** The path of a run's live socket. */
const LIVE_PATH = /^\/live\/runs\/([^/]+)$/;

/** The value of one cookie in a Cookie header (the first of that name), if present. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  }
  return undefined;
}

/**
 * Serves a request that asked for a protocol upgrade other than WebSocket through the server's
 * ordinary request handler, ignoring the upgrade (as Node does when nobody listens for upgrades).
 * The connection closes after the response. A request body is not supported here (Node stopped
 * parsing the connection at the upgrade): such a request is answered 400.
 */
function serveAsPlainRequest(
  server: HttpServer | HttpsServer,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  socket.on("error", () => socket.destroy());
  const hasBody =
    head.length > 0 || Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined;
  if (hasBody) {
    socket.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    return;
  }
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once("finish", () => {
    res.detachSocket(socket as Socket);
    socket.end();
  });
  server.emit("request", req, res);
}

/**
 * `GET /live/runs/{run_id}` upgraded to a WebSocket: the run's log chunks, stage and status
 * changes while it is not terminal. Everything is decided before the handshake completes, and a
 * refusal is an HTTP error with a JSON:API error document: a wrong or missing Origin (403), no
 * live session cookie (401; API tokens are not accepted here), a run the session may not read
 * or that does not exist (404), a run that is already terminal (409: the HTTP routes have
 * everything).
 */
export class LiveGateway {
  readonly hub: LiveHub;
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 4096,
    clientTracking: true,
  });
  private readonly sessions = new WeakMap<
    object,
    { secret: string; alive: boolean; target: AuthorizationTarget; userId: string }
  >();
  private readonly heartbeat: NodeJS.Timeout;
  private closing: Promise<void> | null = null;
  private beating = false;
  private readonly servers = new Map<
    HttpServer | HttpsServer,
    (req: IncomingMessage, socket: Duplex, head: Buffer) => void
  >();
  /**
   * Open (and opening) sockets per session id. Kept in memory: a socket lives in exactly one API
   * process and dies with it, so a count in the database would outlive crashed processes and
   * need a sweeper; the limit is therefore per process (STACKSHIP_LIVE_SOCKETS_PER_SESSION).
   */
  private readonly openPerSession = new Map<string, number>();

  constructor(
    private readonly services: Services,
    options: LiveHubOptions = {},
  ) {
    this.hub = new LiveHub(services, openRunChangeFeed(services.db, services.logger), {
      ...options,
      onAccessChange: (userId) => void this.recheckUser(userId),
    });
    this.heartbeat = setInterval(() => void this.beat(), options.heartbeatMs ?? 30_000);
    this.heartbeat.unref();
  }

  /** Serves live sockets on an HTTP or HTTPS server (its `upgrade` event). */
  attach(server: HttpServer | HttpsServer): void {
    const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // With an `upgrade` listener, Node hands every Upgrade request here (`Upgrade: h2c` from
      // `curl --http2` too); anything but a WebSocket is served as the ordinary request it is.
      if ((req.headers.upgrade ?? "").toLowerCase() !== "websocket") serveAsPlainRequest(server, req, socket, head);
      else void this.upgrade(req, socket, head);
    };
    this.servers.set(server, onUpgrade);
    server.on("upgrade", onUpgrade);
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on("error", () => socket.destroy());
    const requestId = randomUUID();
    try {
      const { runId, secret, target, sessionId, userId } = await this.admit(req, socket);
      if (socket.destroyed) return;
      // Checked and taken in one synchronous step, so concurrent handshakes cannot overshoot.
      const open = this.openPerSession.get(sessionId) ?? 0;
      const limit = this.services.config.liveSocketsPerSession;
      if (open >= limit) {
        throw new DomainError(
          "LIVE_SOCKET_LIMIT",
          `This session already has ${open} live sockets open (the limit is ${limit}); close one (another tab's) and connect again.`,
          {
            retryAfterSeconds: LIVE_SOCKET_RETRY_SECONDS,
            meta: { limit, retry_after_seconds: LIVE_SOCKET_RETRY_SECONDS },
          },
        );
      }
      this.openPerSession.set(sessionId, open + 1);
      // The TCP socket's close is the one event every path ends with (refused handshake, client
      // gone, server close), so the place is given back exactly once.
      socket.once("close", () => {
        const left = (this.openPerSession.get(sessionId) ?? 1) - 1;
        if (left > 0) this.openPerSession.set(sessionId, left);
        else this.openPerSession.delete(sessionId);
      });
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        this.sessions.set(ws, { secret, alive: true, target, userId });
        ws.on("pong", () => {
          const entry = this.sessions.get(ws);
          if (entry) entry.alive = true;
        });
        ws.on("error", () => ws.terminate());
        // Clients send nothing; whatever they send is ignored.
        void this.hub.join(runId, ws);
      });
    } catch (error) {
      this.refuse(socket, error, requestId);
    }
  }

  /** The checks of the handshake, in order: path, Origin, session, the run and its status. */
  private async admit(
    req: IncomingMessage,
    socket: Duplex,
  ): Promise<{ runId: string; secret: string; target: AuthorizationTarget; sessionId: string; userId: string }> {
    const url = new URL(req.url ?? "/", "http://x");
    const match = LIVE_PATH.exec(url.pathname);
    if (!match)
      throw new DomainError(
        "NOT_FOUND",
        `No WebSocket at ${url.pathname}; live run events are at /live/runs/{run_id}.`,
      );
    let runId: string;
    try {
      runId = decodeURIComponent(match[1]);
    } catch {
      throw new DomainError("NOT_FOUND", `Run ${match[1]} does not exist, or this token may not see it.`);
    }
    const origin = req.headers.origin;
    const ownOrigin = `${(socket as { encrypted?: boolean }).encrypted ? "https" : "http"}://${req.headers.host ?? ""}`;
    if (!origin)
      throw new DomainError(
        "FORBIDDEN",
        "The live WebSocket needs an Origin header naming this server or an allowed dashboard origin.",
        { source: { header: "Origin" } },
      );
    if (!isAllowedOrigin(origin, ownOrigin, this.services.config)) {
      throw new DomainError("FORBIDDEN", `The live WebSocket does not accept connections from origin ${origin}.`, {
        source: { header: "Origin" },
      });
    }
    const secret = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (secret === undefined) {
      throw new DomainError(
        "UNAUTHENTICATED",
        "The live WebSocket needs a dashboard session: sign in (POST /v1/auth/sessions) and send its cookie.",
        {
          source: { header: "Cookie" },
        },
      );
    }
    const principal = await sessionPrincipal(this.services, secret, this.services.clock());
    const ctx: RequestContext = {
      principal,
      requestId: "",
      baseUrl: "",
      querystring: "",
      headers: {},
      services: this.services,
      log: this.services.logger,
    };
    const run = await loadRun(ctx, runId, "run:read");
    if (isTerminalRunStatus(run.status)) {
      throw new DomainError(
        "RUN_TRANSITION_INVALID",
        `Run ${run.id} is ${run.status}: it has ended and no live events will follow. Read it through GET /v1/runs/${run.id}/review and its logs through GET /v1/runs/${run.id}/logs/{phase}.`,
        {
          meta: { status: run.status },
        },
      );
    }
    return {
      runId: run.id,
      secret,
      target: { organizationId: run.organizationId, projectId: run.projectId, workspaceId: run.workspaceId },
      sessionId: principal.session!.id,
      userId: principal.id,
    };
  }

  /** An HTTP error response on the not-yet-upgraded socket, then the socket is closed. */
  private refuse(socket: Duplex, error: unknown, requestId: string): void {
    if (socket.destroyed) return;
    let status = 500;
    let body: unknown = {
      errors: [{ status: "500", title: "Internal server error", meta: { request_id: requestId } }],
    };
    if (error instanceof DomainError) ({ status, body } = renderV1Error(error, requestId));
    else this.services.logger.error({ err: error, requestId }, "live: upgrade failed");
    const text = JSON.stringify(body);
    const retryAfter =
      error instanceof DomainError && error.retryAfterSeconds !== undefined
        ? `Retry-After: ${error.retryAfterSeconds}\r\n`
        : "";
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n` +
        `Content-Type: ${JSON_API}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nCache-Control: no-store\r\n${retryAfter}Connection: close\r\n\r\n${text}`,
    );
    setTimeout(() => socket.destroy(), 1000).unref();
  }

  /**
   * Pings every socket and drops the ones that did not answer the last ping; closes (1008) those
   * whose session was signed out or expired, or whose user lost `run:read` on the run.
   */
  private async beat(): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    try {
      await this.checkSockets();
    } finally {
      this.beating = false;
    }
  }

  /**
   * Someone's access changed (a membership removed or changed, sessions ended, the user
   * disabled): that user's sockets re-check their session and `run:read` now, not at the next
   * heartbeat, and close (1008) if either is gone.
   */
  private async recheckUser(userId: string): Promise<void> {
    try {
      await this.checkSockets({ userId });
    } catch (error) {
      this.services.logger.warn({ err: error }, "live: could not re-check sockets after an access change");
    }
  }

  private async checkSockets(only: { userId: string } | null = null): Promise<void> {
    const now = this.services.clock();
    // One session check per session, however many sockets it has open.
    const principals = new Map<string, Promise<AuthenticatedPrincipal | null>>();
    const principalOf = (secret: string) => {
      let principal = principals.get(secret);
      if (!principal) {
        principal = sessionPrincipal(this.services, secret, now).then(
          (found) => found,
          (error: unknown) => {
            if (error instanceof DomainError && error.code === "UNAUTHENTICATED") return null;
            throw error;
          },
        );
        principals.set(secret, principal);
      }
      return principal;
    };
    for (const ws of this.wss.clients) {
      const entry = this.sessions.get(ws);
      if (!entry) continue;
      if (only) {
        if (entry.userId !== only.userId) continue;
      } else {
        if (!entry.alive) {
          ws.terminate();
          continue;
        }
        entry.alive = false;
        ws.ping();
      }
      let principal: AuthenticatedPrincipal | null;
      try {
        principal = await principalOf(entry.secret);
      } catch (error) {
        // The store failed: keep the socket, check again on the next beat.
        this.services.logger.warn({ err: error }, "live: could not re-check a session");
        continue;
      }
      if (!principal) ws.close(LIVE_CLOSE.SESSION_ENDED, "the session ended; sign in again");
      else if (!isAllowed(principal, "run:read", entry.target))
        ws.close(LIVE_CLOSE.SESSION_ENDED, "this session may no longer read the run");
    }
  }

  /** Stops serving live sockets: every open one is closed with 1001. */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    clearInterval(this.heartbeat);
    for (const [server, onUpgrade] of this.servers) server.off("upgrade", onUpgrade);
    await this.hub.close();
    for (const ws of this.wss.clients) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
