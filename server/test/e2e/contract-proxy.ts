// Puts `prism proxy --errors` (the bundled spec/tfe document, generated/tfe/openapi.json) between
// the tofu CLI and a test server, so that every compatibility-surface response the CLI receives is
// checked against spec/tfe and a violating one fails the scenario.
//
//   tofu ──► front (localhost:F) ──┬─ /api/v2/*, /.well-known/terraform.json ──► prism ──► relay ──► server
//                                  └─ everything else (configuration uploads) ─────────────────────► server
//
// - front: what the CLI's `cloud` block / `host` block names. Plain HTTP, or HTTPS with the test's
//   certificate when the scenario uses HTTPS discovery.
// - prism: `prism proxy --errors` on a free loopback port. Only operations in spec/tfe are routed
//   through it: with --errors prism answers every path it does not know with 404 (it would no longer
//   forward it), and it reads request bodies as UTF-8 text, which would corrupt the binary
//   configuration tarball. The one path the CLI uses outside spec/tfe is the configuration upload,
//   `PUT /uploads/configuration-versions/{token}` (specified in spec/v1), which goes to the server
//   directly.
// - relay: prism's upstream. Prism drops the CLI's Host header; the relay puts back the front's
//   `localhost:F`, so the absolute URLs the server builds from the request's host (configuration
//   upload URL, log-read-url) point at the front again and go through prism as well. This is used
//   instead of `config.publicUrl`: a public URL would also be handed to the runner's sandboxed
//   tofu, which reaches the API only through its channel (127.0.0.1:7480) and could not follow
//   URLs pointing at the front.
//
// Every error prism produces itself (a response violation, a request violation, an unknown path,
// a failed upstream call) is an `application/problem+json` response with a
// `https://stoplight.io/prism/errors#…` type; the server never answers with that media type. The
// front records them, so the scenario can fail with prism's own explanation. Findings prism only
// warns about and passes through (notably a status code the operation does not declare, which
// prism rates an error only for 2xx) come back in its `sl-violations` header; the front records
// those too, so they fail the scenario as well.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer, request as httpsRequest } from "node:https";
import { connect, type AddressInfo } from "node:net";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/config.ts";
import { freePort } from "../support/ports.ts";

/** The prism binary installed with the workspace's devDependencies. */
export const PRISM = join(REPO_ROOT, "node_modules/.bin/prism");
/** The bundled spec/tfe document prism validates against. */
export const TFE_DOCUMENT = join(REPO_ROOT, "generated/tfe/openapi.json");

/** The paths the front sends through prism (all of them are spec/tfe operations). */
export function validatedPath(path: string): boolean {
  return path.startsWith("/api/v2/") || path === "/.well-known/terraform.json";
}

/** One error prism answered with instead of (or on top of) the server's response. */
export interface ContractViolation {
  method: string;
  path: string;
  status: number;
  /** prism's problem document (type, title, detail and, for violations, `validation`). */
  problem: unknown;
}

export interface ContractProxy {
  /** The front's port: the CLI talks to `localhost:<port>`. */
  port: number;
  violations: ContractViolation[];
  /** Requests that went through prism, as "METHOD path status". */
  validated: string[];
  /** Requests that bypassed prism (not in spec/tfe), as "METHOD path status". */
  direct: string[];
  /** What prism printed (stdout and stderr). */
  output(): string;
  close(): Promise<void>;
}

export interface ContractProxyOptions {
  /** The server the requests end up at (`http://127.0.0.1:p` or `https://127.0.0.1:p`). */
  upstream: string;
  /** Serve the front over HTTPS with this certificate; the CA bundle is trusted towards an https upstream. */
  tls?: { cert: string | Buffer; key: string | Buffer; caBundleFile: string };
}

const PRISM_READY_TIMEOUT_MS = 60_000;

/** Prism processes still running: killed if the test process exits without closing them. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Plain log lines: FORCE_COLOR=0 alone (node warns when NO_COLOR is set too). */
function withoutColorSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { FORCE_COLOR: _force, NO_COLOR: _no, ...rest } = env;
  return rest;
}

/** Pipes `req` to `target` (with `host` as the Host header) and the answer back to `res`. */
function forward(
  req: IncomingMessage,
  res: ServerResponse,
  target: URL,
  host: string,
  ca: string | undefined,
  onResponse?: (status: number, headers: IncomingMessage["headers"], body: Buffer | null) => void,
  inspect?: (headers: IncomingMessage["headers"]) => boolean,
  onError?: (error: Error) => void,
): void {
  const request = target.protocol === "https:" ? httpsRequest : httpRequest;
  const upstream = request(
    {
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host },
      ...(target.protocol === "https:" ? { ca, servername: "localhost" } : {}),
    },
    (answer) => {
      const status = answer.statusCode ?? 502;
      if (inspect?.(answer.headers)) {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => {
          const body = Buffer.concat(chunks);
          onResponse?.(status, answer.headers, body);
          res.writeHead(status, answer.headers);
          res.end(body);
        });
        return;
      }
      onResponse?.(status, answer.headers, null);
      res.writeHead(status, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", (error) => {
    onError?.(error);
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end(`contract proxy: ${target.origin}: ${error.message}`);
  });
  req.pipe(upstream);
}

/** Starts the front, prism and the relay in front of `options.upstream`; resolves once prism answers. */
export async function startContractProxy(options: ContractProxyOptions): Promise<ContractProxy> {
  const upstream = new URL(options.upstream);
  const ca = options.tls ? readFileSync(options.tls.caBundleFile, "utf8") : undefined;
  const violations: ContractViolation[] = [];
  const validated: string[] = [];
  const direct: string[] = [];
  let frontHost = "";
  let prismUrl: URL | null = null;

  const relay = createHttpServer((req, res) => forward(req, res, upstream, frontHost, ca));
  const relayPort = await listen(relay);

  const onFront = (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? "GET";
    const path = new URL(req.url ?? "/", "http://front").pathname;
    if (validatedPath(path) && prismUrl) {
      forward(
        req,
        res,
        prismUrl,
        frontHost,
        undefined,
        (status, headers, body) => {
          validated.push(`${method} ${path} ${status}`);
          // Findings prism let through (warnings, e.g. an undeclared 4xx status) are in this header.
          const header = headers["sl-violations"];
          if (body === null) {
            if (header)
              violations.push({
                method,
                path,
                status,
                problem: {
                  title: "Violations prism let through (sl-violations)",
                  validation: parseJson(String(header)),
                },
              });
            return;
          }
          violations.push({ method, path, status, problem: parseJson(body.toString("utf8")) });
        },
        (headers) => String(headers["content-type"] ?? "").startsWith("application/problem+json"),
        (error) =>
          violations.push({
            method,
            path,
            status: 502,
            problem: { title: `prism could not be reached: ${error.message}` },
          }),
      );
    } else {
      forward(req, res, upstream, frontHost, ca, (status) => direct.push(`${method} ${path} ${status}`));
    }
  };
  const front: Server = options.tls
    ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, onFront)
    : createHttpServer(onFront);
  const frontPort = await listen(front);
  frontHost = `localhost:${frontPort}`;

  let output = "";
  let prism: ChildProcess | null = null;
  const stop = async () => {
    if (prism && prism.exitCode === null && prism.signalCode === null) {
      const exited = new Promise<void>((resolve) => prism!.once("exit", () => resolve()));
      prism.kill("SIGTERM");
      const timer = setTimeout(() => prism?.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await closeServer(front);
    await closeServer(relay);
  };

  try {
    const prismPort = await freePort();
    prism = spawn(
      PRISM,
      [
        "proxy",
        TFE_DOCUMENT,
        `http://127.0.0.1:${relayPort}`,
        "--errors",
        "--host",
        "127.0.0.1",
        "--port",
        String(prismPort),
        "--verboseLevel",
        "warn",
        "--cors",
        "false",
      ],
      {
        cwd: REPO_ROOT,
        env: { ...withoutColorSettings(process.env), FORCE_COLOR: "0" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    running.add(prism);
    prism.once("exit", () => running.delete(prism!));
    prism.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    prism.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const exited = new Promise<never>((_, reject) =>
      prism!.once("exit", (code, signal) =>
        reject(new Error(`prism exited (${signal ?? code}) before it was ready:\n${output}`)),
      ),
    );
    exited.catch(() => undefined);
    // Poll until prism accepts connections (it listens only once the document is loaded).
    const ready = (async () => {
      const deadline = Date.now() + PRISM_READY_TIMEOUT_MS;
      for (;;) {
        try {
          await new Promise<void>((resolve, reject) => {
            const socket = connect({ host: "127.0.0.1", port: prismPort }, () => {
              socket.end();
              resolve();
            });
            socket.once("error", reject);
          });
          return;
        } catch {
          if (Date.now() > deadline)
            throw new Error(`prism did not answer within ${PRISM_READY_TIMEOUT_MS} ms:\n${output}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    })();
    await Promise.race([ready, exited]);
    prismUrl = new URL(`http://127.0.0.1:${prismPort}`);
  } catch (error) {
    await stop();
    throw error;
  }

  return { port: frontPort, violations, validated, direct, output: () => output, close: stop };
}

/** A readable account of what prism refused, with the tail of its log. */
export function describeViolations(proxy: ContractProxy): string {
  const lines = proxy.violations.map((v) => {
    const problem = v.problem as
      | {
          type?: string;
          title?: string;
          detail?: string;
          validation?: { location?: string[]; severity?: string; message?: string }[];
        }
      | string;
    if (typeof problem !== "object" || problem === null)
      return `- ${v.method} ${v.path} → prism ${v.status}: ${String(problem)}`;
    const type = (problem.type ?? "").replace("https://stoplight.io/prism/errors#", "");
    const details = (problem.validation ?? [])
      .map(
        (item) =>
          `\n    ${item.severity ? `[${item.severity}] ` : ""}${(item.location ?? []).join(".")}: ${item.message ?? ""}`,
      )
      .join("");
    return `- ${v.method} ${v.path} → ${v.status}${type ? ` prism ${type}` : ""}: ${problem.title ?? ""}${details || (problem.detail ? `\n    ${problem.detail}` : "")}`;
  });
  const log = proxy.output().trim().split("\n").slice(-40).join("\n");
  return `prism proxy --errors (spec/tfe) found ${proxy.violations.length} non-conforming response(s):\n${lines.join("\n")}${log ? `\n--- prism log (tail) ---\n${log}` : ""}`;
}
