import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Purpose-bound keys derived from one master key. */
export interface Keys {
  cursor: Buffer;
  uploadUrl: Buffer;
  /** Derives a session's CSRF token from its cookie secret. */
  csrf: Buffer;
  secrets: SecretBox;
  /** Wraps the random per-artifact data keys of framed artifacts (framed.ts). */
  artifactDataKeys: Buffer;
  /** Seals the private halves of the workload identity issuer's signing keys. */
  signingKeys: SecretBox;
  /** Seals the private halves of the run decision attestation keys (ECDSA P-256). */
  attestationKeys: SecretBox;
  /** Seals the private halves of the audit checkpoint signing keys (Ed25519). */
  auditCheckpointKeys: SecretBox;
}

/**
 * AES-256-GCM sealing. Output: base64url(iv ‖ tag ‖ ciphertext); the purpose is bound as AAD so
 * a value sealed for one purpose cannot be opened as another.
 */
export class SecretBox {
  constructor(
    private readonly key: Buffer,
    private readonly purpose: string,
  ) {}

  seal(plaintext: Buffer | string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(this.purpose));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer): Buffer {
    const decipher = createDecipheriv("aes-256-gcm", this.key, sealed.subarray(0, 12));
    decipher.setAAD(Buffer.from(this.purpose));
    decipher.setAuthTag(sealed.subarray(12, 28));
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]);
  }

  sealText(plaintext: string): string {
    return this.seal(plaintext).toString("base64url");
  }

  openText(sealed: string): string {
    return this.open(Buffer.from(sealed, "base64url")).toString("utf8");
  }
}

function derive(master: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), `stackship/${purpose}`, 32));
}

/** Derives the purpose keys from a 32-byte master key. */
export function deriveKeys(master: Buffer): Keys {
  if (master.length !== 32) throw new Error("the master key must be 32 bytes");
  return {
    cursor: derive(master, "run-list-cursor"),
    uploadUrl: derive(master, "upload-url"),
    csrf: derive(master, "session-csrf"),
    secrets: new SecretBox(derive(master, "secrets"), "secrets"),
    artifactDataKeys: derive(master, "artifact-data-key-wrap"),
    signingKeys: new SecretBox(derive(master, "workload-identity-signing-keys"), "workload-identity-signing-keys"),
    attestationKeys: new SecretBox(derive(master, "run-attestation-keys"), "run-attestation-keys"),
    auditCheckpointKeys: new SecretBox(derive(master, "audit-checkpoint-keys"), "audit-checkpoint-keys"),
  };
}

/**
 * The master key: STACKSHIP_ENCRYPTION_KEY (base64 of 32 bytes) when set, otherwise
 * `<data dir>/keys/master.key`, created with mode 0600 on first start.
 */
export function loadMasterKey(dataDir: string, fromEnv: string | null): Buffer {
  if (fromEnv) {
    const key = Buffer.from(fromEnv, "base64");
    if (key.length !== 32)
      throw new Error(
        "STACKSHIP_ENCRYPTION_KEY must be the base64 encoding of exactly 32 bytes (try: openssl rand -base64 32)",
      );
    return key;
  }
  const file = join(dataDir, "keys", "master.key");
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, randomBytes(32).toString("base64") + "\n", { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return Buffer.from(readFileSync(file, "utf8").trim(), "base64");
}
