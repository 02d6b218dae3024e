import { createHash } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import type { SecretBox } from "./keys.ts";

/** What is recorded about a stored artifact: its plaintext size and SHA-256. */
export interface ArtifactDescriptor {
  key: string;
  sizeBytes: number;
  sha256: string;
}

/** An object store for encrypted artifacts. */
export interface ArtifactStore {
  put(key: string, plaintext: Buffer): Promise<ArtifactDescriptor>;
  get(key: string, expected: { sizeBytes: number; sha256: string }): Promise<Buffer>;
  delete(key: string): Promise<void>;
}

/** Local-directory adapter: each object is sealed with AES-256-GCM and written atomically. */
export class LocalArtifactStore implements ArtifactStore {
  private readonly root: string;

  constructor(directory: string, private readonly box: SecretBox) {
    this.root = resolve(directory);
  }

  private path(key: string): string {
    if (!/^[a-z0-9][a-z0-9._/-]*$/.test(key) || key.includes("..")) throw new Error(`invalid artifact key '${key}'`);
    const path = resolve(join(this.root, key));
    if (!path.startsWith(this.root + sep)) throw new Error(`invalid artifact key '${key}'`);
    return path;
  }

  async put(key: string, plaintext: Buffer): Promise<ArtifactDescriptor> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(temporary, this.box.seal(plaintext), { mode: 0o600 });
    await rename(temporary, path);
    return { key, sizeBytes: plaintext.length, sha256: createHash("sha256").update(plaintext).digest("hex") };
  }

  async get(key: string, expected: { sizeBytes: number; sha256: string }): Promise<Buffer> {
    const plaintext = this.box.open(await readFile(this.path(key)));
    const sha256 = createHash("sha256").update(plaintext).digest("hex");
    // NOTE: a descriptor that disagrees with the bytes is never released.
    if (plaintext.length !== expected.sizeBytes || sha256 !== expected.sha256) throw new Error(`artifact '${key}' does not match its descriptor`);
    return plaintext;
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}
