import type { Context } from "koa";
import type { Validator } from "../../../../generated/v1/validators.gen.js";
import { DomainError } from "../../domain/errors.ts";

type AjvError = NonNullable<Validator["errors"]>[number];

function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The JSON Pointer an ajv error is about, including the member a `required` or `additionalProperties` error names. */
export function pointerOf(error: AjvError): string {
  const member = (error.params.missingProperty ?? error.params.additionalProperty ?? error.params.unevaluatedProperty) as string | undefined;
  return member === undefined ? error.instancePath : `${error.instancePath}/${escapePointer(member)}`;
}

function describe(error: AjvError): string {
  if (error.keyword === "additionalProperties") return `'${String(error.params.additionalProperty)}' is not allowed here`;
  if (error.keyword === "required") return `'${String(error.params.missingProperty)}' is required`;
  if (error.keyword === "const") return `must be ${JSON.stringify(error.params.allowedValue)}`;
  if (error.keyword === "enum") return `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
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
  throw new DomainError("DOCUMENT_INVALID", `${pointer || "The document"} ${describe(error)}.`, { source: { pointer } });
}

/** Validates (and coerces, in place) path or query parameters; failure is 400 REQUEST_INVALID. */
export function validateParameters(validate: Validator, values: Record<string, unknown>, where: "path" | "query"): void {
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

/** Parses a JSON request body; an empty body is `undefined`. */
export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    throw new DomainError("REQUEST_INVALID", "The request body is not valid JSON.", { source: { pointer: "" } });
  }
}
