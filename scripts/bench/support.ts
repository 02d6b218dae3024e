// What several benchmarks share: a JSON:API call with a bearer token, and a StackShip on SQLite in
// a fresh data directory listening on loopback.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { loadConfig } from "../../server/src/config.ts";
import { createStackShip, type StackShip } from "../../server/src/server.ts";

/** `method path` against `base` with a bearer token; the parsed JSON body, or throws with the status and body. */
export async function api(base: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json", Accept: "application/vnd.api+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

export interface BenchServer {
  dataDir: string;
  bootstrapToken: string;
  stackship: StackShip;
  http: Server;
  port: number;
  base: string;
}

/** A StackShip on SQLite in a new data directory (named after `prefix`), served on a loopback port. */
export async function startBenchServer(prefix: string): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const bootstrapToken = `ss0.${randomBytes(24).toString("base64url")}`;
  const config = { ...loadConfig({}), dataDir, databaseUrl: `sqlite://${join(dataDir, "stackship.db")}`, bootstrapToken, validateResponses: false, logLevel: "silent" };
  const stackship = await createStackShip(config, { logger: pino({ level: "silent" }) });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors (ctx.onerror)
  const http = createServer(stackship.app.callback());
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const port = (http.address() as AddressInfo).port;
  return { dataDir, bootstrapToken, stackship, http, port, base: `http://127.0.0.1:${port}` };
}
