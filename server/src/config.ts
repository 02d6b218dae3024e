import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import type { ArtifactStoreSetting } from "./artifacts/backends/setting.ts";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (server/src/config.ts → ../..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Everything the server reads from the environment, documented in the README. */
export interface Config {
  dataDir: string;
  databaseUrl: string;
  httpPort: number;
  host: string;
  publicUrl: string | null;
  bootstrapToken: string | null;
  encryptionKey: string | null;
  region: string;
  validateResponses: boolean;
  logLevel: string;
  /** How many phases the in-process runner executes at once; 0 = an API-only process (no runner). Default: the machine's cores. */
  runnerConcurrency: number;
  /** Where a runner-only process serves its Prometheus metrics (STACKSHIP_RUNNER_METRICS_PORT; null = not served, 0 = any free port). */
  runnerMetricsPort: number | null;
  /** Wall-clock limit of one plan or apply attempt. */
  phaseTimeoutMs: number;
  /**
   * How long a SIGTERM/SIGINT waits for the plans, applies and HTTP requests in flight before it
   * interrupts them (STACKSHIP_SHUTDOWN_GRACE_SECONDS, default 60; 0 = interrupt at once).
   */
  shutdownGraceMs: number;
  /** What one plan or apply sandbox may use (STACKSHIP_SANDBOX_*); unset entries take the sandbox's defaults. */
  sandboxLimits: SandboxLimitsConfig;
  /**
   * Reverse proxies (IPs and CIDRs, STACKSHIP_TRUSTED_PROXIES, comma-separated) whose X-Forwarded-For
   * names the client the sign-in throttle counts; from any other peer the header is ignored.
   */
  trustedProxies: string[];
  /** Origins besides this server's own that may use a session (STACKSHIP_ALLOWED_ORIGINS, comma-separated). */
  allowedOrigins: string[];
  /** The first deployment administrator, created on start when set (STACKSHIP_BOOTSTRAP_ADMIN_EMAIL/_PASSWORD). */
  bootstrapAdmin: { email: string; password: string } | null;
  /** Configuration uploads inflated and checked at once, each on a worker thread (STACKSHIP_UPLOAD_INSPECTIONS). */
  uploadInspections: number;
  /** Uploads that may wait for a free inspection before one is refused as busy (STACKSHIP_UPLOAD_INSPECTION_QUEUE). */
  uploadInspectionQueue: number;
  /** How many live WebSockets one dashboard session may hold open on one API process (STACKSHIP_LIVE_SOCKETS_PER_SESSION). */
  liveSocketsPerSession: number;
  /** The cap of one phase's stored log in bytes; over it the first half and the newest half are kept (STACKSHIP_PHASE_LOG_MAX_BYTES). */
  phaseLogMaxBytes: number;
  /** The GitHub App source pipeline: `on` with the App's settings, or `off` with the reason. */
  github: GitHubAppSettings;
  /** The built dashboard (web/dist: index.html and hashed assets), served at `/`. */
  dashboardDir: string;
  /** Where artifacts' bytes live (STACKSHIP_ARTIFACT_URL; by default a local directory on SQLite, PostgreSQL itself on PostgreSQL). */
  artifactStore: ArtifactStoreSetting;
  /**
   * When the audit history is checkpointed (a signed note over a chain's size and head): once a
   * chain has `everyEvents` events past its last checkpoint (STACKSHIP_AUDIT_CHECKPOINT_EVENTS,
   * default 100), or its oldest such event is `everyMs` old (STACKSHIP_AUDIT_CHECKPOINT_MINUTES,
   * default 10).
   */
  auditCheckpoint: { everyEvents: number; everyMs: number };
}

/**
 * STACKSHIP_ARTIFACT_URL: `file:///abs/dir` (a local directory), `postgres` or the database URL
 * itself (PostgreSQL), or `s3://bucket/prefix?endpoint=…&region=…&force_path_style=true`. Unset: a
 * local directory under the data directory on SQLite, PostgreSQL on PostgreSQL.
 */
export function artifactStoreSetting(
  value: string | undefined,
  dataDir: string,
  databaseUrl: string,
): ArtifactStoreSetting {
  const onPostgres = /^postgres(ql)?:\/\//.test(databaseUrl);
  if (!value) return onPostgres ? { kind: "postgres" } : { kind: "local", directory: join(dataDir, "artifacts") };
  const fail = (why: string) =>
    new Error(`STACKSHIP_ARTIFACT_URL: ${why} (use file:///absolute/dir, postgres, or s3://bucket/prefix?endpoint=…)`);
  if (value === "postgres" || value === databaseUrl) {
    if (!onPostgres) throw fail("the PostgreSQL artifact backend needs a PostgreSQL database (STACKSHIP_DATABASE_URL)");
    return { kind: "postgres" };
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw fail(`'${value}' is not a URL`);
  }
  switch (url.protocol) {
    case "file:":
      if (url.host !== "" || url.search !== "" || url.hash !== "")
        throw fail("a file URL is file:///absolute/dir, with no host or query");
      return { kind: "local", directory: resolve(decodeURIComponent(url.pathname)) };
    case "postgres:":
    case "postgresql:":
      throw fail(
        "artifacts go to the database StackShip uses; write postgres (a separate artifact database is not supported)",
      );
    case "s3:":
      if (url.hostname === "") throw fail("an S3 URL names its bucket: s3://bucket/prefix");
      for (const name of url.searchParams.keys()) {
        if (!["endpoint", "region", "force_path_style"].includes(name)) throw fail(`unknown S3 parameter '${name}'`);
      }
      if (url.searchParams.has("endpoint")) {
        const endpoint = url.searchParams.get("endpoint")!;
        if (!/^https?:\/\/[^/]+/.test(endpoint)) throw fail(`endpoint '${endpoint}' is not an http(s) URL`);
      }
      return { kind: "s3", url: url.toString() };
    default:
      throw fail(`unsupported scheme '${url.protocol}'`);
  }
}

/** The GitHub App's settings (STACKSHIP_GITHUB_*); the pipeline is off unless all are set. */
export type GitHubAppSettings =
  | { state: "on"; appId: string; privateKey: string; webhookSecret: string; apiUrl: string; tarballMaxBytes: number }
  | { state: "off"; detail: string; apiUrl: string };

/** The variables the pipeline needs (the private key may come from a file instead). */
const GITHUB_VARIABLES = [
  "STACKSHIP_GITHUB_APP_ID",
  "STACKSHIP_GITHUB_PRIVATE_KEY",
  "STACKSHIP_GITHUB_WEBHOOK_SECRET",
] as const;

function githubSettings(env: NodeJS.ProcessEnv): GitHubAppSettings {
  const apiUrl = (env.STACKSHIP_GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, "");
  try {
    new URL(apiUrl);
  } catch {
    throw new Error(`STACKSHIP_GITHUB_API_URL: '${apiUrl}' is not a URL`);
  }
  let privateKey = env.STACKSHIP_GITHUB_PRIVATE_KEY || "";
  if (!privateKey && env.STACKSHIP_GITHUB_PRIVATE_KEY_FILE) {
    try {
      privateKey = readFileSync(env.STACKSHIP_GITHUB_PRIVATE_KEY_FILE, "utf8");
    } catch (error) {
      throw new Error(
        `STACKSHIP_GITHUB_PRIVATE_KEY_FILE: cannot read ${env.STACKSHIP_GITHUB_PRIVATE_KEY_FILE} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      );
    }
  }
  const values = {
    STACKSHIP_GITHUB_APP_ID: env.STACKSHIP_GITHUB_APP_ID || "",
    STACKSHIP_GITHUB_PRIVATE_KEY: privateKey,
    STACKSHIP_GITHUB_WEBHOOK_SECRET: env.STACKSHIP_GITHUB_WEBHOOK_SECRET || "",
  };
  const missing = GITHUB_VARIABLES.filter((name) => values[name].trim() === "").map((name) =>
    name === "STACKSHIP_GITHUB_PRIVATE_KEY" ? "STACKSHIP_GITHUB_PRIVATE_KEY (or _FILE)" : name,
  );
  if (missing.length > 0) {
    return { state: "off", apiUrl, detail: `The GitHub App pipeline is off: set ${missing.join(", ")}.` };
  }
  if (!/^[1-9][0-9]*$/.test(values.STACKSHIP_GITHUB_APP_ID.trim()))
    throw new Error(`STACKSHIP_GITHUB_APP_ID must be the App's numeric id, got '${values.STACKSHIP_GITHUB_APP_ID}'`);
  if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(privateKey))
    throw new Error(
      "STACKSHIP_GITHUB_PRIVATE_KEY must be the App's PEM private key (-----BEGIN RSA PRIVATE KEY----- …)",
    );
  return {
    state: "on",
    appId: values.STACKSHIP_GITHUB_APP_ID.trim(),
    // A key pasted into one line with literal \n separators is read as the PEM it stands for.
    privateKey: privateKey.replace(/\\n/g, "\n"),
    webhookSecret: values.STACKSHIP_GITHUB_WEBHOOK_SECRET,
    apiUrl,
    tarballMaxBytes: positive(
      env.STACKSHIP_GITHUB_TARBALL_MAX_BYTES,
      64 * 1024 * 1024,
      "STACKSHIP_GITHUB_TARBALL_MAX_BYTES",
    ),
  };
}

/** The default of STACKSHIP_PHASE_LOG_MAX_BYTES: 64 MiB per phase's stored log. */
export const DEFAULT_PHASE_LOG_MAX_BYTES = 64 * 1024 * 1024;

/** The default of STACKSHIP_LIVE_SOCKETS_PER_SESSION: a few dashboard tabs each watching a run or two. */
export const DEFAULT_LIVE_SOCKETS_PER_SESSION = 8;

/** The STACKSHIP_SANDBOX_* limits (runner/sandbox.ts `SandboxLimits`), in bytes and seconds. */
export interface SandboxLimitsConfig {
  memoryBytes?: number;
  processes?: number;
  fileSizeBytes?: number;
  diskBytes?: number;
  cpuSeconds?: number;
}

function sandboxLimits(env: NodeJS.ProcessEnv): SandboxLimitsConfig {
  const read = (name: string, scale: number) => {
    const value = env[name];
    if (value === undefined || value === "") return undefined;
    return positive(value, 0, name) * scale;
  };
  const MIB = 1024 * 1024;
  return {
    memoryBytes: read("STACKSHIP_SANDBOX_MEMORY_MB", MIB),
    processes: read("STACKSHIP_SANDBOX_PROCESSES", 1),
    fileSizeBytes: read("STACKSHIP_SANDBOX_FILE_SIZE_MB", MIB),
    diskBytes: read("STACKSHIP_SANDBOX_DISK_MB", MIB),
    cpuSeconds: read("STACKSHIP_SANDBOX_CPU_SECONDS", 1),
  };
}

function port(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new Error(`${name} must be a port number (0-65535), got '${value}'`);
  return n;
}

function positive(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got '${value}'`);
  return n;
}

function nonNegative(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got '${value}'`);
  return n;
}

/** The default runner concurrency: one phase per core of this machine. */
export function defaultRunnerConcurrency(): number {
  return Math.max(1, availableParallelism());
}

function runnerConcurrency(value: string | undefined): number {
  if (value === undefined || value === "") return defaultRunnerConcurrency();
  const n = /^[0-9]{1,6}$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(n)) {
    throw new Error(
      `STACKSHIP_RUNNER_CONCURRENCY must be a whole number: how many plans and applies this process runs at once (0 = API only, no runner in this process), got '${value}'. Unset it to use this machine's ${defaultRunnerConcurrency()} cores.`,
    );
  }
  return n;
}

/** The items of a comma-separated setting, trimmed; empty ones dropped. */
function commaSeparated(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}

function origins(value: string | undefined): string[] {
  return commaSeparated(value).map((item) => {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      throw new Error(`STACKSHIP_ALLOWED_ORIGINS: '${item}' is not an origin like https://dashboard.example.com`);
    }
    if (url.origin !== item.replace(/\/+$/, ""))
      throw new Error(`STACKSHIP_ALLOWED_ORIGINS: '${item}' is not an origin (scheme, host and port only)`);
    return url.origin;
  });
}

/** STACKSHIP_TRUSTED_PROXIES: `10.0.0.5, 192.168.0.0/16, ::1` (addresses and CIDR ranges, IPv4 or IPv6). */
export function trustedProxies(value: string | undefined): string[] {
  return commaSeparated(value).map((item) => {
    const [address, prefix, extra] = item.split("/");
    const version = isIP(address);
    const bits = version === 6 ? 128 : 32;
    const validPrefix = prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (version === 0 || !validPrefix || extra !== undefined) {
      throw new Error(
        `STACKSHIP_TRUSTED_PROXIES: '${item}' is not an IP address or CIDR range like 10.0.0.5 or 10.0.0.0/8`,
      );
    }
    return item;
  });
}

function bootstrapAdmin(env: NodeJS.ProcessEnv): Config["bootstrapAdmin"] {
  const email = env.STACKSHIP_BOOTSTRAP_ADMIN_EMAIL;
  const password = env.STACKSHIP_BOOTSTRAP_ADMIN_PASSWORD;
  if (!email && !password) return null;
  if (!email || !password)
    throw new Error("set both STACKSHIP_BOOTSTRAP_ADMIN_EMAIL and STACKSHIP_BOOTSTRAP_ADMIN_PASSWORD, or neither");
  if (!/^[^\s@]+@[^\s@]+$/.test(email))
    throw new Error(`STACKSHIP_BOOTSTRAP_ADMIN_EMAIL: '${email}' is not an email address`);
  if (password.length < 12) throw new Error("STACKSHIP_BOOTSTRAP_ADMIN_PASSWORD needs at least 12 characters");
  return { email, password };
}

/** Reads the configuration from an environment (process.env by default). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.STACKSHIP_DATA_DIR || ".stackship");
  const databaseUrl = env.STACKSHIP_DATABASE_URL || `sqlite://${join(dataDir, "stackship.db")}`;
  return {
    dataDir,
    databaseUrl,
    httpPort: port(env.STACKSHIP_HTTP_PORT, 8080, "STACKSHIP_HTTP_PORT"),
    host: env.STACKSHIP_HOST || "127.0.0.1",
    publicUrl: env.STACKSHIP_PUBLIC_URL ? env.STACKSHIP_PUBLIC_URL.replace(/\/+$/, "") : null,
    bootstrapToken: env.STACKSHIP_BOOTSTRAP_TOKEN || null,
    encryptionKey: env.STACKSHIP_ENCRYPTION_KEY || null,
    region: env.STACKSHIP_REGION || "local",
    validateResponses:
      (env.STACKSHIP_VALIDATE_RESPONSES ?? (env.NODE_ENV === "production" ? "false" : "true")) === "true",
    logLevel: env.STACKSHIP_LOG_LEVEL || "info",
    runnerConcurrency: runnerConcurrency(env.STACKSHIP_RUNNER_CONCURRENCY),
    runnerMetricsPort: env.STACKSHIP_RUNNER_METRICS_PORT
      ? port(env.STACKSHIP_RUNNER_METRICS_PORT, 0, "STACKSHIP_RUNNER_METRICS_PORT")
      : null,
    phaseTimeoutMs: positive(env.STACKSHIP_PHASE_TIMEOUT_SECONDS, 3600, "STACKSHIP_PHASE_TIMEOUT_SECONDS") * 1000,
    shutdownGraceMs: nonNegative(env.STACKSHIP_SHUTDOWN_GRACE_SECONDS, 60, "STACKSHIP_SHUTDOWN_GRACE_SECONDS") * 1000,
    sandboxLimits: sandboxLimits(env),
    allowedOrigins: origins(env.STACKSHIP_ALLOWED_ORIGINS),
    trustedProxies: trustedProxies(env.STACKSHIP_TRUSTED_PROXIES),
    bootstrapAdmin: bootstrapAdmin(env),
    uploadInspections: positive(env.STACKSHIP_UPLOAD_INSPECTIONS, 2, "STACKSHIP_UPLOAD_INSPECTIONS"),
    uploadInspectionQueue: nonNegative(env.STACKSHIP_UPLOAD_INSPECTION_QUEUE, 8, "STACKSHIP_UPLOAD_INSPECTION_QUEUE"),
    github: githubSettings(env),
    liveSocketsPerSession: positive(
      env.STACKSHIP_LIVE_SOCKETS_PER_SESSION,
      DEFAULT_LIVE_SOCKETS_PER_SESSION,
      "STACKSHIP_LIVE_SOCKETS_PER_SESSION",
    ),
    phaseLogMaxBytes: positive(
      env.STACKSHIP_PHASE_LOG_MAX_BYTES,
      DEFAULT_PHASE_LOG_MAX_BYTES,
      "STACKSHIP_PHASE_LOG_MAX_BYTES",
    ),
    dashboardDir: join(REPO_ROOT, "web/dist"),
    artifactStore: artifactStoreSetting(env.STACKSHIP_ARTIFACT_URL, dataDir, databaseUrl),
    auditCheckpoint: {
      everyEvents: positive(env.STACKSHIP_AUDIT_CHECKPOINT_EVENTS, 100, "STACKSHIP_AUDIT_CHECKPOINT_EVENTS"),
      everyMs: positive(env.STACKSHIP_AUDIT_CHECKPOINT_MINUTES, 10, "STACKSHIP_AUDIT_CHECKPOINT_MINUTES") * 60_000,
    },
  };
}

/** The pinned tool versions from scripts/tool-versions.env (what .tools provides). */
export function pinnedToolVersions(): { opentofu: string; opa: string; task: string } {
  const text = readFileSync(join(REPO_ROOT, "scripts/tool-versions.env"), "utf8");
  const read = (key: string) => {
    const match = new RegExp(`^${key}=(.+)$`, "m").exec(text);
    if (!match) throw new Error(`scripts/tool-versions.env has no ${key}`);
    return match[1].trim();
  };
  return { opentofu: read("OPENTOFU_VERSION"), opa: read("OPA_VERSION"), task: read("GO_TASK_VERSION") };
}
