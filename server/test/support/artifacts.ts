// What the artifact store holds, whichever backend the test server uses (a local directory on
// SQLite, PostgreSQL on PostgreSQL): for tests that check nothing was stored, or that what was
// stored is encrypted.
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { FramedArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { LocalObjectBackend } from "../../src/artifacts/backends/local.ts";
import type { TestServer } from "./test-server.ts";

/** The keys of every stored object under `prefix`, sorted. */
export async function storedArtifactKeys(server: TestServer, prefix = ""): Promise<string[]> {
  const backend = (server.services.artifacts as FramedArtifactStore).backend;
  const keys: string[] = [];
  if (backend instanceof LocalObjectBackend) {
    const walk = (dir: string) => {
      let entries: string[];
      try {
        entries = readdirSync(dir);
      } catch {
        return;
      }
      for (const entry of entries) {
        const path = join(dir, entry);
        if (statSync(path).isDirectory()) walk(path);
        else keys.push(relative(backend.root, path));
      }
    };
    walk(backend.root);
  } else {
    for (const row of await server.db.knex("artifact_objects").select<Array<{ object_key: string }>>("object_key"))
      keys.push(row.object_key);
  }
  return keys.filter((key) => key.startsWith(prefix)).sort();
}

/** The stored (encrypted) bytes of an object. */
export async function storedObject(server: TestServer, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of (server.services.artifacts as FramedArtifactStore).backend.read(key))
    chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
