import type { Context } from "koa";
import type { Validator } from "../../../../generated/v1/validators.gen.js";
import { DomainError } from "../../domain/errors.ts";

type AjvError = NonNullable<Validator["errors"]>[number];

function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The JSON Pointer an ajv error is about, including the member a `required` or `additionalProperties` error names. */
export function pointerOf(error: AjvError): string {
  const member = (error.params.missingProperty ??
    error.params.additionalProperty ??
    error.params.unevaluatedProperty) as string | undefined;
  return member === undefined ? error.instancePath : `${error.instancePath}/${escapePointer(member)}`;
}

function describe(error: AjvError): string {
  if (error.keyword === "additionalProperties")
    return `'${String(error.params.additionalProperty)}' is not allowed here`;
  if (error.keyword === "required") return `'${String(error.params.missingProperty)}' is required`;
  if (error.keyword === "const") return `must be ${JSON.stringify(error.params.allowedValue)}`;
  if (error.keyword === "enum")
    return `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
  return error.message ?? "is invalid";
}

function firstError(validate: Validator): AjvError {
  const errors = validate.errors ?? [];
  // Prefer the most specific error (ajv lists oneOf/anyOf summaries after their branches).
  return errors.find((e) => e.keyword !== "oneOf" && e.keyword !== "anyOf") ?? errors[0];
}

/** Validates a request document; failure is 422 DOCUMENT_INVALID with `source.pointer`. */
export function validateDocument(validate: Validator, body: unknown): void {
  if (validate(body)) return;
  const error = firstError(validate);
  const pointer = pointerOf(error);
  throw new DomainError("DOCUMENT_INVALID", `${pointer || "The document"} ${describe(error)}.`, {
    source: { pointer },
  });
}

/** Validates (and coerces, in place) path or query parameters; failure is 400 REQUEST_INVALID. */
export function validateParameters(
  validate: Validator,
  values: Record<string, unknown>,
  where: "path" | "query",
): void {
  if (validate(values)) return;
  const error = firstError(validate);
  const name = pointerOf(error).replace(/^\//, "").split("/")[0];
  const detail =
    error.keyword === "additionalProperties"
      ? `The ${where} parameter '${name}' is not supported by this operation.`
      : `The ${where} parameter '${name}' ${describe(error)}.`;
  throw new DomainError("REQUEST_INVALID", detail, { source: { parameter: name } });
}

/** Reads the raw request body, refusing more than `limit` bytes. */
export async function readBody(ctx: Context, limit: number, tooLarge: () => DomainError): Promise<Buffer> {
  const declared = Number(ctx.get("content-length") || "0");
  if (declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

// Fatal: a body that is not UTF-8 is refused rather than stored with U+FFFD in place of its bytes.
// ignoreBOM keeps a byte order mark in the text, where JSON.parse refuses it (as before).
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Parses a JSON request body; an empty body is `undefined`. Invalid UTF-8 is 400 REQUEST_ENCODING_INVALID. */
export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  let text: string;
  try {
    text = UTF8.decode(raw);
  } catch {
    const offset = firstInvalidUtf8(raw);
    const pointer = pointerAtEnd(UTF8.decode(raw.subarray(0, offset)));
    throw new DomainError(
      "REQUEST_ENCODING_INVALID",
      `The request body is not valid UTF-8 (byte ${offset}${pointer ? `, in ${pointer}` : ""}); JSON text must be UTF-8.`,
      {
        source: { pointer },
      },
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new DomainError("REQUEST_INVALID", "The request body is not valid JSON.", { source: { pointer: "" } });
  }
}

/** The offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629), or the length. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b < 0x80) {
      i += 1;
      continue;
    }
    let length: number;
    let min = 0x80;
    let max = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) min = 0xa0; // no overlong forms
      if (b === 0xed) max = 0x9f; // no surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) min = 0x90;
      if (b === 0xf4) max = 0x8f; // nothing above U+10FFFF
    } else return i;
    if (i + length > bytes.length) return i;
    const second = bytes[i + 1];
    if (second < min || second > max) return i;
    for (let k = 2; k < length; k += 1) if ((bytes[i + k] & 0xc0) !== 0x80) return i;
    i += length;
  }
  return i;
}

/**
 * The JSON Pointer of the value a JSON text's prefix ends inside: the string member or element
 * being read where `prefix` stops (the object holding it when the prefix stops inside a member
 * name), or "" (the whole body) when the prefix does not stop inside a string.
 */
export function pointerAtEnd(prefix: string): string {
  type Frame = { array: boolean; index: number; key: string | null; expectingKey: boolean };
  const stack: Frame[] = [];
  const path = (frames: Frame[]) =>
    frames.map((f) => "/" + escapePointer(f.array ? String(f.index) : (f.key ?? ""))).join("");
  let i = 0;
  while (i < prefix.length) {
    const c = prefix[i];
    const top = stack[stack.length - 1];
    if (c === "{" || c === "[") {
      stack.push({ array: c === "[", index: 0, key: null, expectingKey: c === "{" });
      i += 1;
    } else if (c === "}" || c === "]") {
      stack.pop();
      i += 1;
    } else if (c === ",") {
      if (top?.array) top.index += 1;
      else if (top) top.expectingKey = true;
      i += 1;
    } else if (c === ":") {
      if (top) top.expectingKey = false;
      i += 1;
    } else if (c === '"') {
      let j = i + 1;
      while (j < prefix.length && prefix[j] !== '"') j += prefix[j] === "\\" ? 2 : 1;
      if (j >= prefix.length) {
        // The prefix stops inside this string.
        if (!top) return "";
        if (!top.array && top.expectingKey) return path(stack.slice(0, -1));
        return path(stack);
      }
      if (top && !top.array && top.expectingKey) {
        try {
          top.key = JSON.parse(prefix.slice(i, j + 1)) as string;
        } catch {
          return "";
        }
      }
      i = j + 1;
    } else i += 1;
  }
  return "";
}
