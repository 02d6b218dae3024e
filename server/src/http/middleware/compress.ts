import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { Context, Middleware } from "koa";

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Bodies smaller than this go out as they are: the encoding would cost more than it saves. */
export const COMPRESS_MIN_BYTES = 1024;

/** The documents compressed: JSON (JSON:API, plain JSON, which carries logs and plan-changes) and plain text. */
const COMPRESSIBLE = /^(application\/(vnd\.api\+json|json|problem\+json)|text\/plain)\b/i;

/** The text of a body the server serialized itself (a string, or a document Koa would stringify); null for bytes and streams. */
function serialized(body: unknown): string | null {
  if (typeof body === "string") return body;
  if (
    body === null ||
    typeof body !== "object" ||
    Buffer.isBuffer(body) ||
    body instanceof Uint8Array ||
    typeof (body as { pipe?: unknown }).pipe === "function"
  )
    return null;
  return JSON.stringify(body);
}

/** A response header's value, "" when unset. */
function header(ctx: Context, name: string): string {
  const value: unknown = ctx.response.get(name);
  return typeof value === "string" ? value : "";
}

/** Brotli or gzip, whichever Accept-Encoding weighs higher (brotli on a tie: it is smaller); null for neither. */
export function chooseEncoding(acceptEncoding: string): "br" | "gzip" | null {
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    weights.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const weight = (name: string) => weights.get(name) ?? weights.get("*") ?? 0;
  const br = weight("br");
  const gz = weight("gzip");
  if (br <= 0 && gz <= 0) return null;
  return br >= gz ? "br" : "gzip";
}

/**
 * Compresses JSON and text responses with brotli or gzip, as the request's Accept-Encoding prefers
 * (issue 28: the 5,000-resource plan-changes document and the consoles' logs). Only bodies the
 * server serialized itself (a string or a JSON document) are encoded: raw bytes and streams (the encrypted artifacts,
 * state and plan downloads, whose exact length and SHA-256 the client checks) and attachments go
 * out byte for byte. Brotli at quality 5 and gzip at level 6 run on libuv's thread pool, off the
 * event loop.
 */
export function compress(): Middleware {
  return async (ctx, next) => {
    await next();
    const body = serialized(ctx.body);
    if (body === null || ctx.respond === false || ctx.method === "HEAD") return;
    if (!COMPRESSIBLE.test(header(ctx, "Content-Type"))) return;
    if (header(ctx, "Content-Encoding") || header(ctx, "Content-Disposition")) return;
    ctx.vary("Accept-Encoding");
    if (Buffer.byteLength(body) < COMPRESS_MIN_BYTES) return;
    const encoding = chooseEncoding(ctx.get("Accept-Encoding"));
    if (!encoding) return;
    const compressed =
      encoding === "br"
        ? await brotli(body, {
            params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
          })
        : await gzipAsync(body, { level: 6 });
    const type = header(ctx, "Content-Type");
    ctx.body = compressed;
    // Koa sets application/octet-stream for a Buffer body without a type; the type stays the document's.
    ctx.type = type;
    ctx.set("Content-Encoding", encoding);
    // RFC 9110 §8.8.3.3: a strong validator names one representation's bytes; the encoded one is another.
    const etag = header(ctx, "ETag");
    if (etag.startsWith('"')) ctx.set("ETag", `W/${etag}`);
  };
}
