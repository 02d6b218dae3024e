import { createPrivateKey, type KeyObject } from "node:crypto";
import { SignJWT } from "jose";

/**
 * StackShip as a GitHub App against the REST API (github.com or a GitHub Enterprise Server at
 * STACKSHIP_GITHUB_API_URL): the App's JWT (RS256, 9 minutes), installation tokens (cached
 * until five minutes before they expire), commit tarballs, check runs.
 */

/** A GitHub call that failed: the HTTP status (0 for a network error) and GitHub's message. */
export class GitHubApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "GitHubApiError";
  }
}

/** Thrown when a tarball exceeds the size limit while it downloads. */
export class GitHubTarballTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the tarball exceeds ${limit} bytes`);
    this.name = "GitHubTarballTooLarge";
  }
}

/** Thrown when GitHub's tarball redirect names another host or scheme than GitHub's own download hosts. */
export class GitHubRedirectRefused extends Error {
  constructor(readonly location: string) {
    super(
      `GitHub's tarball redirect goes to ${location.slice(0, 200)}, which is neither the GitHub API host nor its download host over the same scheme`,
    );
    this.name = "GitHubRedirectRefused";
  }
}

/**
 * Whether a tarball redirect may be followed: to the configured API host itself, or (for
 * `https://api.github.com`) to `codeload.github.com`, over the API's own scheme (https for GitHub
 * and any GitHub Enterprise Server; plain http only when the API URL itself is, as for a local
 * test double), on the same port. Any other host, scheme, port or credentials in the URL are refused.
 */
export function tarballRedirectAllowed(apiUrl: string, location: URL): boolean {
  const api = new URL(apiUrl);
  if (location.protocol !== api.protocol || location.username !== "" || location.password !== "") return false;
  if (location.protocol !== "https:" && location.protocol !== "http:") return false;
  if (location.port !== api.port) return false;
  const hosts = [api.hostname.toLowerCase()];
  if (api.hostname.toLowerCase() === "api.github.com") hosts.push("codeload.github.com");
  return hosts.includes(location.hostname.toLowerCase());
}

/** What `GET /app/installations/{id}` says about an installation (the parts StackShip uses). */
export interface AppInstallation {
  id: number;
  account: string | null;
  createdAt: string | null;
}

/** The body of a check run create or update (GitHub's names). */
export interface CheckRunBody {
  name?: string;
  head_sha?: string;
  status: "queued" | "in_progress" | "completed";
  conclusion?: string;
  details_url?: string;
  external_id?: string;
  started_at?: string;
  completed_at?: string;
  output?: { title: string; summary: string };
}

const USER_AGENT = "StackShip-GitHub-App";
/** One call to GitHub may take this long. */
const REQUEST_TIMEOUT_MS = 30_000;

export class GitHubAppClient {
  private readonly key: KeyObject;
  private readonly tokens = new Map<number, { token: string; expiresAt: number }>();

  constructor(
    private readonly settings: { appId: string; privateKey: string; apiUrl: string },
    private readonly clock: () => Date = () => new Date(),
  ) {
    // GitHub hands out PKCS#1 keys; node reads both PKCS#1 and PKCS#8.
    try {
      this.key = createPrivateKey(settings.privateKey);
    } catch (error) {
      throw new Error(
        `STACKSHIP_GITHUB_PRIVATE_KEY is not a readable PEM private key (${error instanceof Error ? error.message : String(error)}); use the .pem file GitHub generated for the App`,
      );
    }
    if (this.key.asymmetricKeyType !== "rsa")
      throw new Error(
        "STACKSHIP_GITHUB_PRIVATE_KEY must be the App's RSA private key (GitHub signs App JWTs with RS256)",
      );
  }

  /** The App's own JWT: iss = App id, issued a minute in the past against clock drift, 9 minutes long. */
  async appJwt(): Promise<string> {
    const now = Math.floor(this.clock().getTime() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: "RS256", typ: "JWT" })
      .setIssuer(this.settings.appId)
      .setIssuedAt(now - 60)
      .setExpirationTime(now + 9 * 60)
      .sign(this.key);
  }

  /** An installation access token (POST /app/installations/{id}/access_tokens), cached while it has five minutes left. */
  async installationToken(installationId: number): Promise<string> {
    const cached = this.tokens.get(installationId);
    if (cached && cached.expiresAt - 5 * 60_000 > this.clock().getTime()) return cached.token;
    const response = await this.call(`/app/installations/${installationId}/access_tokens`, {
      method: "POST",
      headers: { Authorization: `Bearer ${await this.appJwt()}` },
    });
    const body = (await response.json()) as { token?: unknown; expires_at?: unknown };
    if (typeof body.token !== "string")
      throw new GitHubApiError(response.status, "GitHub answered an installation token request without a token");
    const expiresAt =
      typeof body.expires_at === "string" ? Date.parse(body.expires_at) : this.clock().getTime() + 60 * 60_000;
    this.tokens.set(installationId, { token: body.token, expiresAt });
    return body.token;
  }

  /**
   * The tarball of `sha` (GET /repos/{owner}/{repo}/tarball/{sha}), following GitHub's redirect
   * to its download host without the token, read to at most `maxBytes`.
   */
  async tarball(installationId: number, repository: string, sha: string, maxBytes: number): Promise<Buffer> {
    const token = await this.installationToken(installationId);
    let response = await this.call(
      `/repos/${repository}/tarball/${sha}`,
      { headers: { Authorization: `Bearer ${token}` }, redirect: "manual" },
      [200, 302, 301, 307, 308],
    );
    for (let hops = 0; response.status >= 300 && response.status < 400; hops++) {
      const location = response.headers.get("location");
      if (!location || hops >= 3)
        throw new GitHubApiError(response.status, "GitHub's tarball redirect has no usable Location");
      await response.body?.cancel();
      let target: URL;
      try {
        target = new URL(location, this.settings.apiUrl);
      } catch {
        throw new GitHubRedirectRefused(location);
      }
      if (!tarballRedirectAllowed(this.settings.apiUrl, target)) throw new GitHubRedirectRefused(target.toString());
      // The download URL is pre-signed; the installation token is not sent to another host.
      response = await this.fetchWithTimeout(target.toString(), {
        headers: { "User-Agent": USER_AGENT },
        redirect: "manual",
      });
      if (response.status >= 400)
        throw new GitHubApiError(response.status, `the tarball download answered ${response.status}`);
    }
    const declared = Number(response.headers.get("content-length") ?? "0");
    if (declared > maxBytes) {
      await response.body?.cancel();
      throw new GitHubTarballTooLarge(maxBytes);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of (response.body ?? []) as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > maxBytes) throw new GitHubTarballTooLarge(maxBytes);
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks);
  }

  /** The App's public page on GitHub (GET /app with the App's JWT: `html_url`, e.g. https://github.com/apps/stackship). */
  async appPageUrl(): Promise<string> {
    const response = await this.call("/app", { headers: { Authorization: `Bearer ${await this.appJwt()}` } }, [200]);
    const body = (await response.json()) as { html_url?: unknown };
    if (typeof body.html_url !== "string" || !/^https?:\/\//.test(body.html_url))
      throw new GitHubApiError(response.status, "GitHub answered GET /app without an html_url");
    return body.html_url;
  }

  /** The installation as the App sees it (GET /app/installations/{id} with the App's JWT); null when GitHub does not know it. */
  async appInstallation(installationId: number): Promise<AppInstallation | null> {
    const response = await this.call(
      `/app/installations/${installationId}`,
      { headers: { Authorization: `Bearer ${await this.appJwt()}` } },
      [200, 404],
    );
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    const body = (await response.json()) as {
      id?: unknown;
      account?: { login?: unknown } | null;
      created_at?: unknown;
    };
    if (body.id !== installationId)
      throw new GitHubApiError(response.status, "GitHub answered an installation lookup with another installation");
    return {
      id: installationId,
      account: typeof body.account?.login === "string" ? body.account.login : null,
      createdAt: typeof body.created_at === "string" ? body.created_at : null,
    };
  }

  /**
   * Whether the installation can access `repository` (GET /installation/repositories with its
   * token, 100 a page, at most 50 pages); false when GitHub refuses the installation a token.
   */
  async installationCanAccess(installationId: number, repository: string): Promise<boolean> {
    let token: string;
    try {
      token = await this.installationToken(installationId);
    } catch (error) {
      if (error instanceof GitHubApiError && (error.status === 404 || error.status === 403 || error.status === 401))
        return false;
      throw error;
    }
    const wanted = repository.toLowerCase();
    for (let page = 1; page <= 50; page++) {
      const response = await this.call(
        `/installation/repositories?per_page=100&page=${page}`,
        { headers: { Authorization: `Bearer ${token}` } },
        [200],
      );
      const body = (await response.json()) as { total_count?: unknown; repositories?: Array<{ full_name?: unknown }> };
      const repositories = Array.isArray(body.repositories) ? body.repositories : [];
      if (repositories.some((r) => typeof r.full_name === "string" && r.full_name.toLowerCase() === wanted))
        return true;
      const total = typeof body.total_count === "number" ? body.total_count : 0;
      if (repositories.length < 100 || page * 100 >= total) return false;
    }
    return false;
  }

  /** Creates a check run; its id. */
  async createCheckRun(installationId: number, repository: string, body: CheckRunBody): Promise<number> {
    const response = await this.call(
      `/repos/${repository}/check-runs`,
      {
        method: "POST",
        headers: {
          Authorization: `Bearer ${await this.installationToken(installationId)}`,
          "Content-Type": "application/json",
        },
        body: JSON.stringify(body),
      },
      [201],
    );
    const created = (await response.json()) as { id?: unknown };
    if (typeof created.id !== "number")
      throw new GitHubApiError(response.status, "GitHub answered a check run creation without an id");
    return created.id;
  }

  /** Updates a check run. */
  async updateCheckRun(
    installationId: number,
    repository: string,
    checkRunId: number,
    body: CheckRunBody,
  ): Promise<void> {
    const response = await this.call(
      `/repos/${repository}/check-runs/${checkRunId}`,
      {
        method: "PATCH",
        headers: {
          Authorization: `Bearer ${await this.installationToken(installationId)}`,
          "Content-Type": "application/json",
        },
        body: JSON.stringify(body),
      },
      [200],
    );
    await response.body?.cancel();
  }

  private async call(path: string, init: RequestInit, ok: number[] = [200, 201]): Promise<Response> {
    const response = await this.fetchWithTimeout(`${this.settings.apiUrl}${path}`, {
      ...init,
      headers: {
        Accept: "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": USER_AGENT,
        ...(init.headers as Record<string, string>),
      },
    });
    if (!ok.includes(response.status)) {
      let message = `${init.method ?? "GET"} ${path} answered ${response.status}`;
      try {
        const body = (await response.json()) as { message?: unknown };
        if (typeof body.message === "string") message += `: ${body.message}`;
      } catch {
        // not JSON
      }
      throw new GitHubApiError(response.status, message);
    }
    return response;
  }

  private async fetchWithTimeout(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (error) {
      throw new GitHubApiError(
        0,
        `cannot reach GitHub at ${new URL(url).origin}: ${error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error)}`,
      );
    }
  }
}
