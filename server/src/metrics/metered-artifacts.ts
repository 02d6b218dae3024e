import type { ArtifactStore } from "../artifacts/artifact-store.ts";
import { recordArtifactBytes } from "./registry.ts";

/**
 * The artifact store with its traffic counted (stackship_artifact_bytes_total), whatever the
 * backend: bytes written are the stored descriptor's plaintext size, bytes read the size the
 * reader asked for (a stream is counted when it opens). Streams themselves are not touched.
 * Every other member goes to the store unchanged.
 */
export function meteredArtifacts(store: ArtifactStore): ArtifactStore {
  const metered: Partial<ArtifactStore> = {
    put: async (...args) => {
      const descriptor = await store.put(...args);
      recordArtifactBytes("written", descriptor.sizeBytes);
      return descriptor;
    },
    putFramed: async (...args) => {
      const descriptor = await store.putFramed(...args);
      recordArtifactBytes("written", descriptor.sizeBytes);
      return descriptor;
    },
    get: async (...args) => {
      const bytes = await store.get(...args);
      recordArtifactBytes("read", bytes.length);
      return bytes;
    },
    getFramed: async (...args) => {
      const bytes = await store.getFramed(...args);
      recordArtifactBytes("read", bytes.length);
      return bytes;
    },
    openFramed: async (...args) => {
      const stream = await store.openFramed(...args);
      recordArtifactBytes("read", args[2].sizeBytes);
      return stream;
    },
  };
  return new Proxy(store, {
    get(target, property, receiver) {
      if (typeof property === "string" && property in metered) return metered[property as keyof ArtifactStore];
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
