import { createPublicKey, generateKeyPairSync, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import type { Webhooks } from "@octokit/webhooks";
import type { WebhookDefinition } from "@octokit/webhooks-examples";
import { jwtVerify } from "jose";
import type { Config } from "../../src/config.ts";

/**
 * A local stand-in for the GitHub REST API, on loopback, speaking the shapes StackShip uses: the
 * App's JWT (RS256, verified with the App's public key) exchanged for an installation token;
 * `GET /repos/{owner}/{repo}/tarball/{sha}` answering 302 to a pre-signed download URL (which
 * must be fetched without the token); check runs created and updated; an installation as the
 * App sees it (`GET /app/installations/{id}`, JWT) and the repositories it can see
 * (`GET /installation/repositories`, its token, paginated). `down` makes every call answer 503.
 */
export interface CheckRunCall {
  method: "POST" | "PATCH";
  id: number;
  repository: string;
  body: CheckRunRequest;
}

/**
 * The body of a check run create (POST) or update (PATCH), as GitHub's REST API names its fields
 * (https://docs.github.com/en/rest/checks/runs): the double keeps what it received.
 */
export interface CheckRunRequest {
  name?: string;
  head_sha?: string;
  status?: string;
  conclusion?: string | null;
  details_url?: string;
  external_id?: string;
  started_at?: string;
  completed_at?: string;
  output?: { title?: string; summary: string; text?: string };
}

export class GitHubDouble {
  readonly appId = "424242";
  readonly webhookSecret = `whsec-${randomBytes(8).toString("hex")}`;
  readonly privateKeyPem: string;
  private readonly publicKey;
  private server: Server | null = null;
  url = "";
  /** Installation id → repositories it can see (`owner/name`). */
  readonly installations = new Map<number, string[]>();
  /** Installation id → when it was created (GET /app/installations/{id}); the time of the request when not set (a fresh install). */
  readonly installationCreatedAt = new Map<number, string>();
  /** When set, a tarball request is redirected to what this returns for the pre-signed download URL (tests of hostile redirects). */
  tarballRedirect: ((downloadUrl: string) => string) | null = null;
  private readonly tokens = new Map<string, number>();
  private readonly tarballs = new Map<string, Buffer>();
  private readonly downloads = new Map<string, string>();
  readonly checkRuns: CheckRunCall[] = [];
  /** Every request as `METHOD path`, in order. */
  readonly requests: string[] = [];
  /** Whether any tarball download carried an Authorization header (it must not). */
  downloadSawAuthorization = false;
  down = false;
  /** Check run calls answer 502 (the rest of the API works). */
  checkRunsDown = false;
  private nextCheckRunId = 1000;
  private webhooks: Webhooks | null = null;

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    // GitHub hands Apps PKCS#1 keys ("BEGIN RSA PRIVATE KEY").
    this.privateKeyPem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
    this.publicKey = createPublicKey(publicKey.export({ type: "spki", format: "pem" }));
  }

  async start(): Promise<this> {
    this.server = createServer(
      (req, res) => void this.handle(req, res).catch((error) => this.json(res, 500, { message: String(error) })),
    );
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** StackShip's configuration for this double (the pipeline on); its API URL is read when used, so it may be taken before start(). */
  config(tarballMaxBytes = 64 * 1024 * 1024): Config["github"] {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the returned object's getters read the double's live state
    const double = this;
    return {
      state: "on",
      appId: this.appId,
      privateKey: this.privateKeyPem,
      webhookSecret: this.webhookSecret,
      get apiUrl() {
        if (!double.url) throw new Error("the GitHub double is not started");
        return double.url;
      },
      tarballMaxBytes,
    };
  }

  /** Serves `bytes` as the tarball of `repository` at `sha`. */
  setTarball(repository: string, sha: string, bytes: Buffer): void {
    this.tarballs.set(`${repository.toLowerCase()}@${sha}`, bytes);
  }

  /** Signs a body as GitHub does with the webhook secret (`sha256=…`). */
  async sign(body: string): Promise<string> {
    // ESM-only package, imported dynamically (the test runner's CommonJS hook cannot require it).
    this.webhooks ??= new (await import("@octokit/webhooks")).Webhooks({ secret: this.webhookSecret });
    return this.webhooks.sign(body);
  }

  private json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", ...headers });
    res.end(JSON.stringify(body));
  }

  /** A check run request's JSON body (an empty body reads as `{}`). */
  private async body(req: IncomingMessage): Promise<CheckRunRequest> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    return text ? (JSON.parse(text) as CheckRunRequest) : {};
  }

  /** Null when the request carries the App's valid JWT; else GitHub's message. */
  private async verifyAppJwt(req: IncomingMessage): Promise<string | null> {
    const jwt = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (!jwt) return "A JSON web token could not be decoded";
    try {
      await jwtVerify(jwt, this.publicKey, { issuer: this.appId, algorithms: ["RS256"] });
      return null;
    } catch (error) {
      return `'Issued at' claim or signature invalid: ${(error as Error).message}`;
    }
  }

  private installationOf(req: IncomingMessage): number | undefined {
    const match = /^(?:Bearer|token) (.+)$/.exec(req.headers.authorization ?? "");
    return match ? this.tokens.get(match[1]) : undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.url);
    this.requests.push(`${req.method} ${url.pathname}`);
    if (this.down) return this.json(res, 503, { message: "Service Unavailable (the double is down)" });
    let m: RegExpExecArray | null;
    if (req.method === "POST" && (m = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(url.pathname))) {
      const refused = await this.verifyAppJwt(req);
      if (refused) return this.json(res, 401, { message: refused });
      const installation = Number(m[1]);
      if (!this.installations.has(installation)) return this.json(res, 404, { message: "Not Found" });
      const token = `ghs_${randomBytes(18).toString("base64url")}`;
      this.tokens.set(token, installation);
      return this.json(res, 201, {
        token,
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
        permissions: { contents: "read", checks: "write" },
        repository_selection: "selected",
      });
    }
    if (req.method === "GET" && url.pathname === "/app") {
      // As the App: https://docs.github.com/en/rest/apps/apps#get-the-authenticated-app
      const refused = await this.verifyAppJwt(req);
      if (refused) return this.json(res, 401, { message: refused });
      return this.json(res, 200, {
        id: Number(this.appId),
        slug: "stackship",
        node_id: "MDM6QXBwNDI0MjQy",
        owner: { login: "stackship", type: "Organization" },
        name: "StackShip",
        description: "OpenTofu runs",
        external_url: "https://stackship.example",
        html_url: `${this.url}/apps/stackship`,
        created_at: "2026-01-01T00:00:00Z",
        updated_at: "2026-01-01T00:00:00Z",
        permissions: { contents: "read", checks: "write", metadata: "read" },
        events: ["push", "pull_request"],
      });
    }
    if (req.method === "GET" && (m = /^\/app\/installations\/(\d+)$/.exec(url.pathname))) {
      // As the App (its JWT), like GitHub: https://docs.github.com/en/rest/apps/apps#get-an-installation-for-the-authenticated-app
      const refused = await this.verifyAppJwt(req);
      if (refused) return this.json(res, 401, { message: refused });
      const id = Number(m[1]);
      const repositories = this.installations.get(id);
      if (!repositories)
        return this.json(res, 404, {
          message: "Not Found",
          documentation_url: "https://docs.github.com/rest/apps/apps#get-an-installation-for-the-authenticated-app",
        });
      const login = repositories[0]?.split("/")[0] ?? `account-${id}`;
      const created = this.installationCreatedAt.get(id) ?? new Date().toISOString();
      return this.json(res, 200, {
        id,
        account: { login, id: id + 1, node_id: "MDEyOk9yZ2FuaXphdGlvbjE=", type: "Organization", site_admin: false },
        repository_selection: "selected",
        access_tokens_url: `${this.url}/app/installations/${id}/access_tokens`,
        repositories_url: `${this.url}/installation/repositories`,
        html_url: `https://github.com/organizations/${login}/settings/installations/${id}`,
        app_id: Number(this.appId),
        app_slug: "stackship",
        target_id: id + 1,
        target_type: "Organization",
        permissions: { contents: "read", checks: "write", metadata: "read" },
        events: ["push", "pull_request"],
        created_at: created,
        updated_at: created,
        single_file_name: null,
        suspended_at: null,
        suspended_by: null,
      });
    }
    if (req.method === "GET" && url.pathname === "/installation/repositories") {
      // With the installation's token: https://docs.github.com/en/rest/apps/installations#list-repositories-accessible-to-the-app-installation
      const installation = this.installationOf(req);
      if (installation === undefined) return this.json(res, 401, { message: "Bad credentials" });
      const repositories = this.installations.get(installation) ?? [];
      const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get("per_page") ?? "30")));
      const page = Math.max(1, Number(url.searchParams.get("page") ?? "1"));
      return this.json(res, 200, {
        total_count: repositories.length,
        repository_selection: "selected",
        repositories: repositories.slice((page - 1) * perPage, page * perPage).map((full_name, i) => ({
          id: 1000 + i,
          node_id: "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
          name: full_name.split("/")[1],
          full_name,
          private: true,
          owner: { login: full_name.split("/")[0], type: "Organization" },
        })),
      });
    }
    if (req.method === "GET" && (m = /^\/repos\/([^/]+\/[^/]+)\/tarball\/([0-9a-f]{40})$/.exec(url.pathname))) {
      const installation = this.installationOf(req);
      if (installation === undefined) return this.json(res, 401, { message: "Bad credentials" });
      const repository = m[1];
      if (!(this.installations.get(installation) ?? []).some((r) => r.toLowerCase() === repository.toLowerCase()))
        return this.json(res, 404, { message: "Not Found" });
      if (!this.tarballs.has(`${repository.toLowerCase()}@${m[2]}`))
        return this.json(res, 404, { message: "Not Found" });
      const key = randomBytes(12).toString("hex");
      this.downloads.set(key, `${repository.toLowerCase()}@${m[2]}`);
      const download = `${this.url}/_codeload/${key}?token=${key}`;
      res.writeHead(302, { Location: this.tarballRedirect ? this.tarballRedirect(download) : download });
      return void res.end();
    }
    if (req.method === "GET" && (m = /^\/_codeload\/([0-9a-f]+)$/.exec(url.pathname))) {
      if (req.headers.authorization) this.downloadSawAuthorization = true;
      const target = this.downloads.get(m[1]);
      if (!target || url.searchParams.get("token") !== m[1]) return this.json(res, 404, { message: "Not Found" });
      const bytes = this.tarballs.get(target)!;
      res.writeHead(200, { "Content-Type": "application/x-gzip", "Content-Length": String(bytes.length) });
      return void res.end(bytes);
    }
    if (
      (m = /^\/repos\/([^/]+\/[^/]+)\/check-runs(?:\/(\d+))?$/.exec(url.pathname)) &&
      (req.method === "POST" || req.method === "PATCH")
    ) {
      if (this.installationOf(req) === undefined) return this.json(res, 401, { message: "Bad credentials" });
      if (this.checkRunsDown) return this.json(res, 502, { message: "Server Error" });
      const body = await this.body(req);
      if (req.method === "POST") {
        if (!body.name || !body.head_sha)
          return this.json(res, 422, { message: "Invalid request: name and head_sha are required" });
        const id = this.nextCheckRunId++;
        this.checkRuns.push({ method: "POST", id, repository: m[1], body });
        return this.json(res, 201, {
          id,
          head_sha: body.head_sha,
          status: body.status ?? "queued",
          conclusion: body.conclusion ?? null,
          details_url: body.details_url ?? null,
        });
      }
      const id = Number(m[2]);
      if (!this.checkRuns.some((c) => c.id === id)) return this.json(res, 404, { message: "Not Found" });
      this.checkRuns.push({ method: "PATCH", id, repository: m[1], body });
      return this.json(res, 200, { id, status: body.status, conclusion: body.conclusion ?? null });
    }
    return this.json(res, 404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
  }

  /** The states a check run went through, as `status` or `completed:<conclusion>`. */
  statesOf(checkRunId: number): Array<string | undefined> {
    return this.checkRuns
      .filter((c) => c.id === checkRunId)
      .map((c) => (c.body.status === "completed" ? `completed:${c.body.conclusion}` : c.body.status));
  }
}

/** A webhook event's name (`X-GitHub-Event`) as @octokit/webhooks-examples lists it. */
export type WebhookEventName = WebhookDefinition["name"];
/** An example payload of `event` (a union of its actions' shapes for events with actions). */
export type WebhookExample<E extends WebhookEventName> = WebhookDefinition<E>["examples"][number];

/**
 * Webhook payload examples from @octokit/webhooks-examples (real GitHub shapes), typed by
 * @octokit/webhooks-types; a `pick` that narrows (`(p) => p.action === "created"`) narrows the result.
 */
export function webhookExample<E extends WebhookEventName, P extends WebhookExample<E>>(
  event: E,
  pick: (example: WebhookExample<E>) => example is P,
): P;
export function webhookExample<E extends WebhookEventName>(
  event: E,
  pick?: (example: WebhookExample<E>) => unknown,
): WebhookExample<E>;
export function webhookExample<E extends WebhookEventName>(
  event: E,
  pick: (example: WebhookExample<E>) => unknown = () => true,
): WebhookExample<E> {
  const examples = createRequire(import.meta.url)("@octokit/webhooks-examples") as WebhookDefinition[];
  const definition = examples.find((e): e is WebhookDefinition<E> => e.name === event);
  const found = definition?.examples.find(pick);
  if (!found) throw new Error(`no ${event} example`);
  return structuredClone(found);
}
