import { chmod, rm } from "node:fs/promises";
import net from "node:net";

/**
 * The only way out of a sandbox: a per-attempt Unix socket on the host that relays raw TCP bytes
 * to the StackShip API. The sandbox has no network of its own (`--unshare-net`); the socket is
 * bind-mounted in and the sandbox launcher (`sandbox-launcher.mjs`) serves it on the sandbox's
 * loopback at SANDBOX_API_PORT, so inside the sandbox `SANDBOX_API_URL` is StackShip.
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

  const server = net.createServer({ allowHalfOpen: true }, (inner) => {
    connectionCount += 1;
    const upstream = net.connect({ host: target.host, port: target.port, allowHalfOpen: true });
    open.add(inner);
    open.add(upstream);
    // A failure on either side ends both: the client inside then sees a reset, as it would for a
    // refused TCP connection.
    const teardown = () => {
      inner.destroy();
      upstream.destroy();
    };
    inner.on("error", teardown);
    upstream.on("error", teardown);
    inner.on("close", () => {
      open.delete(inner);
      upstream.destroy();
    });
    upstream.on("close", () => {
      open.delete(upstream);
      inner.destroy();
    });
    // pipe() forwards each half-close to the other side, so request/response framing that relies on
    // a shutdown (rare for HTTP, but raw bytes are raw bytes) still works.
    inner.pipe(upstream);
    upstream.pipe(inner);
  });

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
        await closed;
        await rm(socketPath, { force: true });
      })();
      return closing;
    },
  };
}
