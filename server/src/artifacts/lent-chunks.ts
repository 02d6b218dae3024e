import type { Readable } from "node:stream";

/**
 * An optional protocol between a streamed response body and the code that writes it to the
 * socket (sendStream in app.ts). A body that implements it lends its chunks instead of giving
 * them: each chunk is a view of memory the body reuses, valid only until its release function is
 * called with it. The writer must call it once the socket has written that chunk (the write's
 * callback), and must not keep the chunk after. A body only lends when its creator asked for it
 * knowing where the body goes (e.g. ArtifactStore.open with `lend`); other bodies give
 * chunks of their own and are piped as usual.
 */
export const lendChunks = Symbol("stackship.lendChunks");

/** A body that lends its chunks: calling this returns the function that gives one back. */
export interface LendingBody {
  [lendChunks](): (chunk: Buffer) => void;
}

/** The release function of a body that lends its chunks, or null for an ordinary body. */
export function lenderOf(body: Readable): ((chunk: Buffer) => void) | null {
  const lend = (body as Partial<LendingBody>)[lendChunks];
  return typeof lend === "function" ? lend.call(body) : null;
}
