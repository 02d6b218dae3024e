import { chmod, rm } from "node:fs/promises";
import http from "node:http";
import type net from "node:net";
import type { OperationDescriptor } from "../../../generated/operation-table.ts";
import { operations as tfeOperations } from "../../../generated/tfe/operations.gen.ts";
import { operations as v1Operations } from "../../../generated/v1/operations.gen.ts";
import { RUN_TOKEN_PERMISSIONS } from "../domain/principal.ts";

/**
 * The only way out of a sandbox: a per-attempt Unix socket on the host that forwards HTTP requests
 * to the StackShip API. The sandbox has no network of its own (`--unshare-net`); the socket is
 * bind-mounted in and the sandbox launcher (`sandbox-launcher.mjs`) serves it on the sandbox's
 * loopback at SANDBOX_API_PORT, so inside the sandbox `SANDBOX_API_URL` is StackShip.
 *
 * The channel forwards only the operations a run token may call (`runTokenOperation`); anything
 * else (signing in, another API, a path no operation has) is answered 403 here and never reaches
 * the API, so a configuration cannot use the host's loopback address to guess passwords (and lock
 * people out through the sign-in throttle) or to reach anything a run token could not.
 */

/** The loopback port inside the sandbox that reaches the StackShip API. */
export const SANDBOX_API_PORT = 7480;
/** The StackShip API as seen from inside the sandbox (plain HTTP: the bytes never leave the host). */
export const SANDBOX_API_URL = `http://127.0.0.1:${SANDBOX_API_PORT}`;
/** The `host:port` form OpenTofu uses in CLI-config `host`/`credentials` blocks and `TF_TOKEN_*`. */
export const SANDBOX_API_HOST = `127.0.0.1:${SANDBOX_API_PORT}`;
/** Where the channel's directory is mounted inside the sandbox (read-only; the socket is in it). */
export const SANDBOX_API_SOCKET_DIR = "/run/stackship/channel";
/** The channel socket's name inside its directory, on the host and in the sandbox. */
export const API_SOCKET_NAME = "api.sock";
/** The channel socket's path inside the sandbox. */
export const SANDBOX_API_SOCKET_PATH = `${SANDBOX_API_SOCKET_DIR}/${API_SOCKET_NAME}`;

/** Where the StackShip API listens, as reachable from the runner host. */
export interface ApiTarget {
  host: string;
  port: number;
}

export interface ApiChannelOptions {
  /** The Unix socket to create; it must not exist yet, and its directory should be private to the attempt. */
  socketPath: string;
  target: ApiTarget;
}

export interface ApiChannel {
  readonly socketPath: string;
  readonly target: ApiTarget;
  /** How many connections the sandbox has opened through the channel so far. */
  readonly connectionCount: number;
  /** Stops accepting, cuts every open connection and removes the socket file. Idempotent. */
  close(): Promise<void>;
}

/**
 * Unauthenticated operations the sandboxed tofu needs: service discovery, ping, and the state
 * uploads its run token's signed upload URLs name.
 */
const CLI_UNAUTHENTICATED: ReadonlySet<string> = new Set([
  "getDiscovery",
  "ping",
  "uploadStateVersion",
  "uploadStateVersionJson",
]);

/** Whether a run token may call the operation: marked for run tokens, or needing only what a run token holds. */
export function runTokenOperation(
  surface: "tfe" | "v1",
  op: Pick<OperationDescriptor, "operationId" | "permission" | "runToken">,
): boolean {
  if (op.runToken) return true;
  if (op.permission === "none") return surface === "tfe" && CLI_UNAUTHENTICATED.has(op.operationId);
  return (RUN_TOKEN_PERMISSIONS as readonly string[]).includes(op.permission);
}

interface Route {
  method: string;
  /** Exactly the path the template names. */
  exact: RegExp;
  /** The template as the API's router may also match it (any letter case, a trailing slash). */
  loose: RegExp;
  allowed: boolean;
}

function templatePattern(path: string): string {
  return path
    .split(/(\{[a-z_]+\})/)
    .map((part) => (/^\{[a-z_]+\}$/.test(part) ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
}

const ROUTES: readonly Route[] = [
  ...tfeOperations.map((op) => ({ surface: "tfe" as const, op })),
  ...v1Operations.map((op) => ({ surface: "v1" as const, op })),
].map(({ surface, op }) => ({
  method: op.method,
  exact: new RegExp(`^${templatePattern(op.path)}$`),
  loose: new RegExp(`^${templatePattern(op.path)}/?$`, "i"),
  allowed: runTokenOperation(surface, op),
}));

/**
 * Whether the channel forwards a request: its path names an operation a run token may call, and
 * no operation a run token may not call could be what the API routes it to.
 */
export function channelAllows(method: string, pathname: string): boolean {
  let allowed = false;
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    if (!route.allowed && route.loose.test(pathname)) return false;
    if (route.allowed && route.exact.test(pathname)) allowed = true;
  }
  return allowed;
}

/** Headers that describe one connection (RFC 9110 §7.6.1), and proxy headers the sandbox may not set. */
const NOT_FORWARDED = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "forwarded",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-real-ip",
]);

function forwardedHeaders(raw: string[]): Record<string, string | string[]> {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() === "connection")
      for (const token of raw[i + 1].split(",")) named.add(token.trim().toLowerCase());
  }
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (NOT_FORWARDED.has(name) || named.has(name)) continue;
    const existing = headers[name];
    headers[name] =
      existing === undefined ? raw[i + 1] : [...(Array.isArray(existing) ? existing : [existing]), raw[i + 1]];
  }
  return headers;
}

function refuse(res: http.ServerResponse, method: string, pathname: string): void {
  const body = JSON.stringify({
    errors: [
      {
        status: "403",
        code: "FORBIDDEN",
        title: "Not available to a run",
        detail: `${method} ${pathname} is not an operation a run token may call; the sandbox's API channel forwards only those.`,
      },
    ],
  });
  res.writeHead(403, { "Content-Type": "application/vnd.api+json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

/** Creates the host side of an attempt's API channel and resolves once the socket accepts connections. */
export async function openApiChannel(options: ApiChannelOptions): Promise<ApiChannel> {
  const { socketPath } = options;
  // sun_path holds 108 bytes including the terminating NUL.
  if (Buffer.byteLength(socketPath) > 107) {
    throw new Error(`openApiChannel: socket path is longer than a Unix socket allows (${socketPath})`);
  }
  const target = { host: options.target.host, port: options.target.port };
  const open = new Set<net.Socket>();
  let connectionCount = 0;
  const agent = new http.Agent({ keepAlive: true });

  const server = http.createServer((req, res) => {
    const rawUrl = req.url ?? "";
    // Origin-form only ("/path?query"): the API sees exactly the path checked here.
    const url = rawUrl.startsWith("/") && !rawUrl.startsWith("//") ? new URL(rawUrl, "http://channel.invalid") : null;
    const method = req.method ?? "";
    if (!url || !channelAllows(method, url.pathname)) {
      req.resume();
      refuse(res, method, url?.pathname ?? rawUrl.slice(0, 200));
      return;
    }
    const upstream = http.request({
      host: target.host,
      port: target.port,
      method,
      path: url.pathname + url.search,
      headers: forwardedHeaders(req.rawHeaders),
      agent,
    });
    // A failure on either side ends both: the client inside then sees a reset, as it would for a
    // refused TCP connection.
    upstream.on("error", () => res.destroy());
    req.on("error", () => upstream.destroy());
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardedHeaders(answer.rawHeaders));
      answer.on("error", () => res.destroy());
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  server.on("connection", (socket: net.Socket) => {
    connectionCount += 1;
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  });
  // Upgrades (WebSocket) are not operations: the socket is closed.
  server.on("upgrade", (_req, socket: net.Socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // The sandbox runs as uid 0 without capabilities, which still owns the socket; nobody else
  // on the host needs it.
  await chmod(socketPath, 0o600);

  let closing: Promise<void> | undefined;
  return {
    socketPath,
    target,
    get connectionCount() {
      return connectionCount;
    },
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of open) socket.destroy();
        agent.destroy();
        await closed;
        await rm(socketPath, { force: true });
      })();
      return closing;
    },
  };
}
