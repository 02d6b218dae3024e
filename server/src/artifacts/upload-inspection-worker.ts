// The upload inspection worker (started by upload-inspection.ts, whose bootstrap calls
// serveUploadInspections): inflates one configuration upload at a time, streaming, from the
// shared bytes the main thread received, and hands every inflated chunk to the TarInspector; the
// inflated data is never held whole. Inflation stops at the first limit it crosses.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { MessagePort } from "node:worker_threads";
import { createGunzip } from "node:zlib";
import { TarInspector, UploadRefusal } from "./tar-inspection.ts";
import type { InspectionLimits, InspectionRequest, InspectionResult } from "./upload-inspection.ts";

const SLICE = 64 * 1024;

function* slices(bytes: Uint8Array): Generator<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += SLICE) yield bytes.subarray(offset, offset + SLICE);
}

function mib(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/** The most `compressedBytes` of upload may inflate to: the size limit, and the ratio limit above its floor. */
export function inflationLimit(compressedBytes: number, limits: InspectionLimits): { bytes: number; why: string } {
  const byRatio = Math.max(limits.ratioFloorBytes, limits.maxRatio * compressedBytes);
  if (byRatio < limits.maxUnpackedBytes) {
    return {
      bytes: byRatio,
      why: `it unpacks to more than ${limits.maxRatio} times its compressed size (${compressedBytes} bytes; at most ${mib(byRatio)} for this upload), which looks like a compression bomb`,
    };
  }
  return { bytes: limits.maxUnpackedBytes, why: `it unpacks to more than ${mib(limits.maxUnpackedBytes)}` };
}

/** Inspects one upload; resolves to the reply for the main thread (never rejects). */
export async function inspectUpload(bytes: Uint8Array, limits: InspectionLimits): Promise<InspectionResult> {
  const limit = inflationLimit(bytes.length, limits);
  const tar = new TarInspector(limits.maxEntries);
  let unpacked = 0;
  const gunzip = createGunzip({ chunkSize: SLICE });
  // Kept aside: the pipeline may reject with the premature close its destroyed streams report.
  let refusal: UploadRefusal | null = null;
  try {
    await pipeline(Readable.from(slices(bytes)), gunzip, async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) {
        unpacked += chunk.length;
        try {
          if (unpacked > limit.bytes) throw new UploadRefusal(limit.why);
          tar.push(chunk);
        } catch (error) {
          if (error instanceof UploadRefusal) refusal = error;
          throw error;
        }
      }
    });
    const summary = tar.finish();
    return { ok: true, unpackedBytes: unpacked, entries: summary.entries };
  } catch (error) {
    const refused = refusal ?? (error instanceof UploadRefusal ? error : null);
    if (refused) return { ok: false, refusal: refused.message, unpackedBytes: unpacked };
    return { ok: false, refusal: "it does not decompress (not valid gzip, or truncated)", unpackedBytes: unpacked };
  }
}

export function serveUploadInspections(port: MessagePort): void {
  port.on("message", (request: InspectionRequest) => {
    void inspectUpload(new Uint8Array(request.bytes, request.byteOffset, request.byteLength), request.limits).then(
      (reply) => port.postMessage({ id: request.id, ...reply }),
    );
  });
}
