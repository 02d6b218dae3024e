import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// The embedded default serves HTTPS so the `tofu` CLI's service discovery (always HTTPS) works on
// a fresh machine. On first start a local CA and a server certificate for localhost, 127.0.0.1
// and ::1 are created in the data directory with the `openssl` CLI; users trust the CA through
// SSL_CERT_FILE (Go on Linux reads it instead of the system store, so it must hold the system
// bundle too: contract §2.4).

/** The files of the local TLS setup. */
export interface LocalTls {
  dir: string;
  /** The local CA certificate (PEM). */
  caFile: string;
  /** The system bundle plus the local CA: the value for SSL_CERT_FILE. */
  bundleFile: string;
  /** The server certificate (PEM), signed by the local CA. */
  certFile: string;
  /** The server private key (PEM, mode 0600). */
  keyFile: string;
  cert: Buffer;
  key: Buffer;
  /** Whether this call created the CA and certificate. */
  created: boolean;
}

/** Where system CA bundles usually live; the first that exists goes into the combined bundle. */
const SYSTEM_BUNDLES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/ca-bundle.pem",
  "/etc/ssl/cert.pem",
];

function openssl(args: string[]): void {
  execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
}

/** The system CA bundle on this machine, if one is found. */
export function systemCaBundle(): string | null {
  return SYSTEM_BUNDLES.find((file) => existsSync(file)) ?? null;
}

/** openssl req's options for a new, unencrypted P-256 key (the CA's and the server's). */
const NEW_P256_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

/**
 * The local CA and server certificate in `<dataDir>/tls`, created on first use. Throws when
 * `openssl` is missing or fails (the caller then serves HTTP only).
 */
export function ensureLocalTls(dataDir: string): LocalTls {
  const dir = join(dataDir, "tls");
  const caFile = join(dir, "ca.pem");
  const caKeyFile = join(dir, "ca.key");
  const certFile = join(dir, "server.pem");
  const keyFile = join(dir, "server.key");
  const bundleFile = join(dir, "ca-bundle.pem");
  const created = !(existsSync(caFile) && existsSync(certFile) && existsSync(keyFile));
  if (created) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const csrFile = join(dir, "server.csr");
    const extFile = join(dir, "server.ext");
    openssl([
      "req",
      "-x509",
      ...NEW_P256_KEY,
      "-keyout",
      caKeyFile,
      "-out",
      caFile,
      "-days",
      "3650",
      "-sha256",
      "-subj",
      `/CN=StackShip local CA ${randomBytes(4).toString("hex")}`,
      "-addext",
      "basicConstraints=critical,CA:TRUE,pathlen:0",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl(["req", ...NEW_P256_KEY, "-keyout", keyFile, "-out", csrFile, "-subj", "/CN=localhost"]);
    writeFileSync(
      extFile,
      "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\n",
    );
    openssl([
      "x509",
      "-req",
      "-in",
      csrFile,
      "-CA",
      caFile,
      "-CAkey",
      caKeyFile,
      "-set_serial",
      `0x${randomBytes(16).toString("hex")}`,
      "-out",
      certFile,
      "-days",
      "825",
      "-sha256",
      "-extfile",
      extFile,
    ]);
    rmSync(csrFile, { force: true });
    rmSync(extFile, { force: true });
    for (const file of [caKeyFile, keyFile, caFile, certFile]) chmodSync(file, 0o600);
  }
  const ca = readFileSync(caFile, "utf8");
  const system = systemCaBundle();
  writeFileSync(bundleFile, `${system ? readFileSync(system, "utf8").trimEnd() + "\n" : ""}${ca}`, { mode: 0o600 });
  return {
    dir,
    caFile,
    bundleFile,
    certFile,
    keyFile,
    cert: readFileSync(certFile),
    key: readFileSync(keyFile),
    created,
  };
}

/** STACKSHIP_HTTPS_PORT: a port (default 8443), or `off` to serve HTTP only. */
export function httpsPortFrom(env: NodeJS.ProcessEnv): number | null {
  const value = env.STACKSHIP_HTTPS_PORT?.trim();
  if (value === "off") return null;
  if (value === undefined || value === "") return 8443;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new Error(`STACKSHIP_HTTPS_PORT must be a port number (0-65535) or 'off', got '${value}'`);
  return n;
}
