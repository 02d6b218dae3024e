import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { Test } from "uvu";
import { createStackShipClient, type Client } from "../../../client/src/index.ts";
import {
  createClient as createTfeClient,
  type Client as TfeClient,
} from "../../../generated/tfe/client/client/index.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import { RunnerEngine, type RunnerOptions } from "../../src/runner/engine.ts";
import { GitHubWorker, type GitHubWorkerOptions } from "../../src/runner/github-worker.ts";
import type { LiveHubOptions } from "../../src/live/hub.ts";
import { createStackShip, type StackShip } from "../../src/server.ts";
import type { Services } from "../../src/commands/services.ts";
import type { Database, Dialect } from "../../src/store/index.ts";
import { skipPostgresHalf, testDialects, withDatabase } from "./databases.ts";

/** A running StackShip on a private database and data directory. */
export interface TestServer {
  baseUrl: string;
  /** The server's data directory (artifacts, master key): a second process needs the same. */
  dataDir: string;
  /** A URL another process can open the same database with. */
  databaseUrl: string;
  dialect: Dialect;
  db: Database;
  services: Services;
  bootstrapToken: string;
  /** A v1 SDK client authenticated as the deployment administrator. */
  admin: Client;
  /** A v1 SDK client with the given token (or none). */
  v1(token?: string): Client;
  /** A compatibility-surface SDK client with the given token (or none). */
  tfe(token?: string): TfeClient;
  /** The in-process runner, when the options asked for one. */
  runner: RunnerEngine | null;
  /** The GitHub pipeline's job loop, when the options asked for one. */
  githubWorker: GitHubWorker | null;
  /** The live run WebSocket gateway serving this server's `/live/runs/{run_id}`. */
  live: StackShip["live"];
}

/** Options of a test server: an injectable clock, an in-process runner. */
export interface TestServerOptions {
  clock?: () => Date;
  /** Start the job loop in the test process (real bubblewrap and tofu). */
  runner?: Partial<RunnerOptions> | true;
  /** Configuration to override (e.g. bootstrapAdmin, allowedOrigins, publicUrl). */
  config?: Partial<Config>;
  /** Limits of the live WebSocket hub. */
  live?: LiveHubOptions;
  /** Start the GitHub pipeline's job loop (needs config.github on). */
  githubWorker?: Partial<GitHubWorkerOptions> | true;
  /** Set STACKSHIP_PUBLIC_URL to the server's own base URL once it listens (the workload identity issuer). */
  publicUrlIsBaseUrl?: boolean;
  /** Keep artifacts in `<dataDir>/artifacts` on PostgreSQL too (for tests that tamper with the objects' files). */
  localArtifacts?: boolean;
}

/** Starts StackShip on a fresh database of `dialect`, runs `fn`, and tears everything down. */
export async function withTestServer<T>(
  dialect: Dialect,
  fn: (server: TestServer) => Promise<T>,
  options: TestServerOptions = {},
): Promise<T> {
  return withDatabase(dialect, async (db) => {
    const dataDir = await mkdtemp(join(tmpdir(), "ss-server-"));
    const bootstrapToken = `ss0.${randomBytes(24).toString("base64url")}`;
    const config = {
      ...loadConfig({}),
      dataDir,
      databaseUrl: "unused://",
      bootstrapToken,
      validateResponses: true,
      logLevel: "silent",
      // The backend a deployment on this database gets by default.
      artifactStore:
        dialect === "postgres" && !options.localArtifacts
          ? { kind: "postgres" as const }
          : { kind: "local" as const, directory: join(dataDir, "artifacts") },
      ...options.config,
    };
    const stackship = await createStackShip(config, {
      database: db,
      logger: pino({ level: "silent" }),
      clock: options.clock,
      live: options.live,
    });
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors (ctx.onerror)
    const http: Server = createServer(stackship.app.callback());
    // The test and its server share one event loop: a test step that blocks it for longer than
    // Node's 5 s keep-alive timeout (building a large document, say) lets the server's idle timer
    // close a pooled connection just as the test's next request goes out on it (ECONNRESET, never
    // retried for a POST). That race belongs to the shared loop, not to StackShip, so idle
    // connections live longer here; close() below still ends them.
    http.keepAliveTimeout = 120_000;
    stackship.live.attach(http);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    if (options.publicUrlIsBaseUrl) stackship.services.config.publicUrl = baseUrl;
    const runner = options.runner
      ? new RunnerEngine(
          {
            services: stackship.services,
            api: { host: "127.0.0.1", port: (http.address() as AddressInfo).port },
            phaseTimeoutMs: 120_000,
            sandboxLimits: config.sandboxLimits,
          },
          { pollIntervalMs: 50, heartbeatIntervalMs: 500, ...(options.runner === true ? {} : options.runner) },
        )
      : null;
    await runner?.start();
    const githubWorker = options.githubWorker
      ? new GitHubWorker(stackship.services, {
          pollIntervalMs: 50,
          backoffBaseMs: 200,
          ...(options.githubWorker === true ? {} : options.githubWorker),
        })
      : null;
    await githubWorker?.start();
    const v1 = (token?: string) => createStackShipClient({ baseUrl, token });
    const tfe = (token?: string) =>
      createTfeClient({ baseUrl, headers: { Accept: "application/vnd.api+json" }, auth: token });
    try {
      return await fn({
        baseUrl,
        dataDir,
        databaseUrl: db.url,
        dialect,
        db,
        services: stackship.services,
        bootstrapToken,
        admin: v1(bootstrapToken),
        v1,
        tfe,
        runner,
        githubWorker,
        live: stackship.live,
      });
    } finally {
      await githubWorker?.stop();
      await runner?.stop({ interrupt: true });
      // Live sockets first: an open WebSocket would keep http.close() waiting.
      await stackship.live.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await stackship.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
}

/** Registers one uvu case per test dialect, each on its own fresh server. */
export function testEachServer<T>(
  test: Test<T>,
  title: string,
  fn: (server: TestServer) => Promise<void>,
  options: TestServerOptions = {},
): void {
  for (const dialect of testDialects()) {
    test(`${title} [${dialect}]`, () => withTestServer(dialect, fn, options));
  }
  skipPostgresHalf(test, title);
}
