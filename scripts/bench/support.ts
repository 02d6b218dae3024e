// What several benchmarks share: a JSON:API call with a bearer token, and a StackShip on SQLite in
// a fresh data directory listening on loopback.
import { randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { loadConfig } from "../../server/src/config.ts";
import { createStackShip, type StackShip } from "../../server/src/server.ts";
import type { V1 } from "../../server/test/support/documents.ts";

/**
 * The benchmarks' HTTP client: node's own, keeping its connections. A bench's client shares the
 * process (and so the event loop) with the server it measures; `fetch` (undici) spent about
 * 0.6 ms of that loop per request, several times what the server's own handling of a small
 * request costs, and a real client runs in a process of its own.
 */
const agent = new Agent({ keepAlive: true });

/** A JSON:API document holding one resource: the least every `api` answer read without a named shape has. */
export interface ResourceDocument {
  data: { type: string; id: string; attributes: Record<string, unknown> };
}

/**
 * `method path` against `base` with a bearer token; the parsed JSON body as the documented shape
 * `T` the caller names (`V1["WorkspaceDocument"]`, …; undefined for an empty body), or throws with
 * the status and body.
 */
export async function api<T = ResourceDocument>(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = httpRequest(
      `${base}${path}`,
      {
        method,
        agent,
        headers: {
          Authorization: `Bearer ${token}`,
          Accept: "application/vnd.api+json",
          ...(payload === undefined
            ? {}
            : { "Content-Type": "application/vnd.api+json", "Content-Length": Buffer.byteLength(payload) }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(payload);
  });
  if (status < 200 || status > 299) throw new Error(`${method} ${path}: ${status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The signed URL a new configuration version's `.tar.gz` is PUT to (null only once it is uploaded). */
export function uploadUrlOf(cv: V1["ConfigurationVersion"]): string {
  const url = cv.attributes.upload_url;
  if (url === null) throw new Error(`configuration version ${cv.id} has no upload URL`);
  return url;
}

/** A benchmark's StackShip configuration: SQLite in `dataDir`, silent, responses not validated. */
export function benchConfig(dataDir: string, bootstrapToken: string) {
  return {
    ...loadConfig({}),
    dataDir,
    databaseUrl: `sqlite://${join(dataDir, "stackship.db")}`,
    bootstrapToken,
    validateResponses: false,
    logLevel: "silent",
  };
}

/** A new admin token of the organization `bench`; its secret. */
export async function benchAdminToken(base: string, bootstrapToken: string): Promise<string> {
  const token = await api<V1["TokenDocument"]>(base, bootstrapToken, "POST", "/v1/organizations/bench/tokens", {
    data: { type: "tokens", attributes: { role: "admin" } },
  });
  return token.data.attributes.secret;
}

/** Creates the organization `bench`; the secret of an admin token of it. */
export async function createBenchOrganization(base: string, bootstrapToken: string): Promise<string> {
  await api(base, bootstrapToken, "POST", "/v1/organizations", {
    data: { type: "organizations", attributes: { name: "bench" } },
  });
  return benchAdminToken(base, bootstrapToken);
}

/** A new workspace of the organization `bench`. */
export async function createBenchWorkspace(
  base: string,
  token: string,
  name: string,
  attributes: Record<string, unknown> = {},
): Promise<V1["Workspace"]> {
  const workspace = await api<V1["WorkspaceDocument"]>(base, token, "POST", "/v1/organizations/bench/workspaces", {
    data: { type: "workspaces", attributes: { name, ...attributes } },
  });
  return workspace.data;
}

/** A configuration of one `main.tf` as a `.tar.gz`. */
export function configurationTarball(mainTf: string): Buffer<ArrayBuffer> {
  const src = mkdtempSync(join(tmpdir(), "ss-bench-src-"));
  try {
    mkdirSync(join(src, "c"));
    writeFileSync(join(src, "c", "main.tf"), mainTf);
    execFileSync("tar", ["-czf", join(src, "c.tgz"), "-C", join(src, "c"), "."]);
    return readFileSync(join(src, "c.tgz"));
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
}

/** A new configuration version of the workspace, with `tarball` (a `.tar.gz`) uploaded to it. */
export async function uploadConfiguration(
  base: string,
  token: string,
  workspaceId: string,
  tarball: Buffer<ArrayBuffer>,
): Promise<V1["ConfigurationVersion"]> {
  const cv = await api<V1["ConfigurationVersionDocument"]>(
    base,
    token,
    "POST",
    `/v1/workspaces/${workspaceId}/configuration-versions`,
    { data: { type: "configuration-versions" } },
  );
  const upload = await fetch(uploadUrlOf(cv.data), { method: "PUT", body: tarball });
  if (!upload.ok) throw new Error(`upload: ${upload.status}`);
  return cv.data;
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
  const stackship = await createStackShip(benchConfig(dataDir, bootstrapToken), { logger: pino({ level: "silent" }) });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors (ctx.onerror)
  const http = createServer(stackship.app.callback());
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const port = (http.address() as AddressInfo).port;
  return { dataDir, bootstrapToken, stackship, http, port, base: `http://127.0.0.1:${port}` };
}
