import type { ArtifactStore } from "../artifacts/artifact-store.ts";
import type { ArtifactRef } from "../domain/artifacts.ts";
import { recordArtifactBytes } from "./registry.ts";

/**
 * The artifact store with its traffic counted (stackship_artifact_bytes_total), whatever the
 * backend: bytes written are the stored ref's plaintext size, bytes read the size the
 * reader asked for (a stream is counted when it opens). Streams themselves are not touched.
 * Every other member goes to the store unchanged.
 */
export function meteredArtifacts(store: ArtifactStore): ArtifactStore {
  const writes =
    <A extends unknown[]>(write: (...args: A) => Promise<ArtifactRef>) =>
    async (...args: A) => {
      const ref = await write(...args);
      recordArtifactBytes("written", ref.sizeBytes);
      return ref;
    };
  const reads =
    <A extends unknown[]>(read: (...args: A) => Promise<Buffer>) =>
    async (...args: A) => {
      const bytes = await read(...args);
      recordArtifactBytes("read", bytes.length);
      return bytes;
    };
  const metered: Partial<ArtifactStore> = {
    write: writes(store.write.bind(store)),
    read: reads(store.read.bind(store)),
    open: async (...args) => {
      const stream = await store.open(...args);
      recordArtifactBytes("read", args[0].sizeBytes);
      return stream;
    },
  };
  return new Proxy(store, {
    get(target, property, receiver) {
      if (typeof property === "string" && property in metered) return metered[property as keyof ArtifactStore];
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
