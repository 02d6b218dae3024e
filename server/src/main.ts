import { startAuditCheckpointer } from "./commands/audit-checkpoints.ts";
import { issueSetupToken } from "./commands/setup.ts";
import { randomBytes } from "node:crypto";
import { describeArtifactStore } from "./artifacts/backends/index.ts";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import { join } from "node:path";
import { loadConfig, type Config } from "./config.ts";
import { ensureLocalTls, httpsPortFrom } from "./http/tls.ts";
import { RunnerEngine } from "./runner/engine.ts";
import { describeShutdown } from "./runner/runner-reports.ts";
import { GitHubWorker } from "./runner/github-worker.ts";
import { sandboxPrerequisites } from "./runner/sandbox.ts";
import { createStackShip, makeDataPrivate } from "./server.ts";

function say(message: string) {
  process.stdout.write(`[stackship] ${message}\n`);
}

/**
 * The bootstrap token: STACKSHIP_BOOTSTRAP_TOKEN, or on the embedded default one generated on
 * first start into the data directory (mode 0600), so a fresh machine needs no setup.
 */
function bootstrapToken(config: Config): { token: string; file: string | null } {
  if (config.bootstrapToken) return { token: config.bootstrapToken, file: null };
  const file = join(config.dataDir, "bootstrap-token");
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `ss0.${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return { token: readFileSync(file, "utf8").trim(), file };
}

async function main() {
  const config = loadConfig();
  makeDataPrivate(config, say);
  const bootstrap = bootstrapToken(config);
  say(`data directory: ${config.dataDir}`);
  say(`database: ${config.databaseUrl.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@")}`);
  say(`artifacts: ${describeArtifactStore(config.artifactStore)}`);
  const stackship = await createStackShip({ ...config, bootstrapToken: bootstrap.token }, {}, (m) =>
    say(`migrations: ${m}`),
  );
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors (ctx.onerror)
  const server = createServer(stackship.app.callback());
  stackship.live.attach(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.httpPort, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.httpPort;
  const url = `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${port}`;
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors (ctx.onerror)
  const https = await startHttps(config, stackship.app.callback());
  if (https) stackship.live.attach(https.server);
  // The embedded default runs the job loop in this process; sandboxes reach the API on loopback.
  // Without what a sandbox needs the runner is not started (every run would fail): the API still
  // serves, runs wait as pending, and the log says the exact command that fixes it.
  const missing = config.runnerConcurrency === 0 ? [] : sandboxPrerequisites();
  let runner: RunnerEngine | null = null;
  if (config.runnerConcurrency === 0) {
    say(
      "API only (STACKSHIP_RUNNER_CONCURRENCY=0): no runner in this process, no job polling; runs wait as pending until a runner-only process (npm run runner) on this database takes them.",
    );
  } else if (missing.length === 0) {
    runner = new RunnerEngine(
      {
        services: stackship.services,
        api: { host: config.host === "0.0.0.0" ? "127.0.0.1" : config.host, port },
        phaseTimeoutMs: config.phaseTimeoutMs,
        sandboxLimits: config.sandboxLimits,
      },
      { concurrency: config.runnerConcurrency },
    );
    await runner.start();
    say(
      `runner ${runner.runnerId} started (concurrency ${config.runnerConcurrency}${process.env.STACKSHIP_RUNNER_CONCURRENCY ? "" : ", this machine's cores; STACKSHIP_RUNNER_CONCURRENCY changes it, 0 = API only"})`,
    );
  } else {
    say("the runner is NOT started: runs stay pending until it is. This host cannot run sandboxes yet:");
    for (const { problem, fix } of missing) say(`  ${problem}; run: ${fix}`);
    say("then restart StackShip (npm start).");
  }
  const githubWorker = new GitHubWorker(stackship.services);
  await githubWorker.start();
  // Signs audit checkpoints (STACKSHIP_AUDIT_CHECKPOINT_EVENTS / _MINUTES); any API process may: a size is signed once.
  const auditCheckpointer = startAuditCheckpointer(stackship.services);
  say(
    config.github.state === "on"
      ? `GitHub App pipeline: on (App ${config.github.appId}, API ${config.github.apiUrl}); webhook URL ${config.publicUrl ?? url}/v1/github/webhooks`
      : `GitHub App pipeline: off. ${config.github.detail.replace(/^The GitHub App pipeline is off: /, "To turn it on, ")}`,
  );
  say(`StackShip is listening on ${url}  (health: ${url}/healthz, Prometheus metrics: ${url}/metrics)`);
  say(
    bootstrap.file
      ? `administrator token: in ${bootstrap.file} (set STACKSHIP_BOOTSTRAP_TOKEN to choose your own)`
      : "administrator token: the value of STACKSHIP_BOOTSTRAP_TOKEN",
  );
  say("create an organization and an admin token for it:");
  const tokenExpr = bootstrap.file ? `$(cat ${bootstrap.file})` : "$STACKSHIP_BOOTSTRAP_TOKEN";
  say(
    `  curl -s -X POST ${url}/v1/organizations -H "Authorization: Bearer ${tokenExpr}" -H 'Content-Type: application/vnd.api+json' -d '{"data":{"type":"organizations","attributes":{"name":"acme"}}}'`,
  );
  say(
    `  curl -s -X POST ${url}/v1/organizations/acme/tokens -H "Authorization: Bearer ${tokenExpr}" -H 'Content-Type: application/vnd.api+json' -d '{"data":{"type":"tokens","attributes":{"role":"admin"}}}'`,
  );
  say(`dashboard: ${url}/  (sign in with a user's email and password)`);
  if (config.bootstrapAdmin)
    say(
      `sign in as ${config.bootstrapAdmin.email} (a deployment administrator: sees every organization), in the dashboard or with POST ${url}/v1/auth/sessions`,
    );
  // While no deployment administrator exists: a new one-time link each start (the token is stored only hashed).
  const setupLink = await issueSetupToken(stackship.services);
  if (setupLink) {
    say(
      `no administrator yet. Open this one-time setup link to create one (valid until ${setupLink.expiresAt.toISOString()}, single use):`,
    );
    say(`  ${url}/setup?token=${setupLink.token}`);
    say("  (or set STACKSHIP_BOOTSTRAP_ADMIN_EMAIL and STACKSHIP_BOOTSTRAP_ADMIN_PASSWORD before the start)");
  }
  if (https) printCloudInstructions(https.port, https.bundleFile, tokenExpr);
  const listeners = https ? [server, https.server] : [server];
  // The HTTP requests in flight, so that a shutdown can say what it waited for.
  const requests = new Set<ServerResponse>();
  let stopping = false;
  const track = (_request: IncomingMessage, response: ServerResponse) => {
    requests.add(response);
    // During a shutdown a response ends its connection (no keep-alive).
    if (stopping) response.shouldKeepAlive = false;
    response.once("close", () => {
      requests.delete(response);
      if (stopping) for (const listener of listeners) listener.closeIdleConnections();
    });
  };
  for (const listener of listeners) listener.on("request", track);
  /**
   * Graceful shutdown, bounded by STACKSHIP_SHUTDOWN_GRACE_SECONDS: no new work; live sockets
   * closed (1001); the in-process runner's phases get the grace (the listener keeps serving
   * meanwhile: their sandboxes reach the API through it), then no new connections and the
   * requests in flight get what is left of the grace; whatever is still open then is cut.
   */
  const stop = async (signal: string) => {
    const graceSeconds = config.shutdownGraceMs / 1000;
    if (stopping)
      return say(`${signal}: already shutting down (waiting at most ${graceSeconds} s for the work in flight)`);
    stopping = true;
    const deadline = Date.now() + config.shutdownGraceMs;
    say(
      `${signal}: shutting down: no new work, live sockets closed; ${runner ? "the plans and applies in flight, then " : ""}the HTTP requests in flight get up to ${graceSeconds} s (STACKSHIP_SHUTDOWN_GRACE_SECONDS)`,
    );
    await githubWorker.stop();
    auditCheckpointer.stop();
    await stackship.live.close();
    const phases = runner ? await runner.shutdown(config.shutdownGraceMs, signal) : null;
    const waitedFor = requests.size;
    const closed = Promise.all(
      listeners.map((listener) => new Promise<void>((resolve) => listener.close(() => resolve()))),
    );
    for (const listener of listeners) listener.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      closed.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now())))),
    ]);
    clearTimeout(timer);
    const cut = requests.size;
    if (!finished) {
      for (const listener of listeners) listener.closeAllConnections();
      await closed;
    }
    await stackship.close();
    say(
      `shut down: ${phases ? `${describeShutdown(phases)}; ` : ""}waited for ${waitedFor} HTTP request(s) in flight: ${cut === 0 ? "all finished" : `${cut} cut off when the grace ran out`}`,
    );
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

/**
 * HTTPS beside HTTP (STACKSHIP_HTTPS_PORT, default 8443, `off` to disable) with a local CA and a
 * certificate for localhost/127.0.0.1 from the data directory, so `tofu`'s HTTPS-only service
 * discovery works. Without `openssl` StackShip still starts, HTTP only.
 */
async function startHttps(
  config: Config,
  callback: Parameters<typeof createHttpsServer>[1],
): Promise<{ server: HttpsServer; port: number; bundleFile: string } | null> {
  const httpsPort = httpsPortFrom(process.env);
  if (httpsPort === null) return null;
  let tls;
  try {
    tls = ensureLocalTls(config.dataDir);
  } catch (error) {
    say(
      `HTTPS is off: could not create the local CA with openssl (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`,
    );
    return null;
  }
  if (tls.created) say(`created a local CA (${tls.caFile}) and a server certificate for localhost and 127.0.0.1`);
  const server = createHttpsServer({ cert: tls.cert, key: tls.key }, callback);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(httpsPort, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : httpsPort;
  say(`HTTPS on https://localhost:${port}  (certificate from the local CA ${tls.caFile})`);
  return { server, port, bundleFile: tls.bundleFile };
}

/** How to point the tofu CLI at this server through a `cloud` block. */
function printCloudInstructions(port: number, bundleFile: string, tokenExpr: string) {
  say("use StackShip from the tofu CLI (OpenTofu Cloud compatibility):");
  say(
    `  1. trust the local CA (Linux; the bundle is the system CAs plus StackShip's):  export SSL_CERT_FILE=${bundleFile}`,
  );
  say(`  2. give tofu an organization token, e.g. in the file TF_CLI_CONFIG_FILE names (or ~/.terraformrc):`);
  say(`       credentials "localhost:${port}" { token = "<the admin token's secret>" }`);
  say(`  3. add to the configuration:`);
  say(
    `       terraform { cloud { hostname = "localhost:${port}"  organization = "acme"  workspaces { name = "app" } } }`,
  );
  say(
    `  then: tofu init && tofu plan && tofu apply   (create the token with the curl commands above; bootstrap token: ${tokenExpr})`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`[stackship] failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  if ((error as NodeJS.ErrnoException | null | undefined)?.code === "EADDRINUSE")
    process.stderr.write("[stackship] the port is taken: set STACKSHIP_HTTP_PORT to a free port.\n");
  process.exit(1);
});
