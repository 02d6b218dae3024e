// Assertions on the generated SDK's answers: a success's status and data, a v1 or tfe error
// document checked against its spec, and a rejected promise.
import * as assert from "uvu/assert";
import type { ErrorObject } from "../../../client/src/index.ts";
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import type { Validator } from "../../../generated/v1/validators.gen.js";
import * as tfeValidators from "../../../generated/tfe/validators.gen.js";

/** What an SDK call returns (the fields the assertions read). */
export interface SdkResult {
  response: Response;
  data?: unknown;
  error?: unknown;
}

/** Expected properties of a v1 error answer. */
export interface ExpectedV1Error {
  pointer?: string;
  parameter?: string;
}

/**
 * Asserts a v1 error answer: the status, exactly one error object with the code, string status,
 * the catalogue title, a detail, `meta.request_id` equal to X-Request-Id, the JSON:API media type,
 * a document valid against the spec's ErrorDocument, and (when given) the source.
 */
export function expectV1Error(
  result: SdkResult,
  status: number,
  code: string,
  expected: ExpectedV1Error = {},
): ErrorObject {
  const errors = errorDocument<ErrorObject>(result, status, code, v1Validators.ErrorDocument, "the spec");
  assert.is(errors.length, 1);
  const [error] = errors;
  assert.is(error.code, code, `detail: ${error.detail}`);
  assert.is(error.status, String(status));
  assert.type(error.title, "string");
  assert.ok(error.title.length > 0);
  assert.type(error.detail, "string");
  assert.ok((error.detail ?? "").length > 0);
  const requestId = result.response.headers.get("x-request-id");
  assert.ok(requestId, "no X-Request-Id header");
  assert.is(error.meta?.request_id, requestId);
  assert.is(result.response.headers.get("content-type")?.split(";")[0], "application/vnd.api+json");
  if (expected.pointer !== undefined)
    assert.is(error.source?.pointer, expected.pointer, `source: ${JSON.stringify(error.source)}`);
  if (expected.parameter !== undefined)
    assert.is(error.source?.parameter, expected.parameter, `source: ${JSON.stringify(error.source)}`);
  return error;
}

/** One error object of the compatibility surface. */
export interface TfeErrorObject {
  status: string;
  title: string;
  detail?: string;
  code?: string;
  source?: { pointer?: string; parameter?: string };
}

/** Asserts a tfe error answer: status, string `errors[0].status`, the title; returns the object. */
export function expectTfeError(result: SdkResult, status: number, title: string): TfeErrorObject {
  const [error] = errorDocument<TfeErrorObject>(result, status, title, tfeValidators.ErrorDocument, "the tfe spec");
  assert.is(error.status, String(status));
  assert.is(typeof error.status, "string");
  assert.is(error.title, title);
  assert.type(error.detail, "string");
  return error;
}

/**
 * Asserts an error answer's status and that its body is an error document valid against `spec`,
 * and returns its error objects. `expected` names the error in the failure message.
 */
function errorDocument<E>(result: SdkResult, status: number, expected: string, validate: Validator, spec: string): E[] {
  const body = result.error as { errors?: E[] } | undefined;
  assert.is(
    result.response.status,
    status,
    `expected ${status} ${expected}, got ${result.response.status}: ${brief(body ?? result.data)}`,
  );
  assert.ok(body && Array.isArray(body.errors), `no error document: ${JSON.stringify(body)}`);
  assert.ok(validate(body), `error document violates ${spec}: ${JSON.stringify(validate.errors)}`);
  return body.errors;
}

/** A value as JSON, cut to 600 characters, for a failure message. */
export function brief(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}

/** Asserts a successful SDK answer and returns its data. */
export function expectStatus<T>(result: { response: Response; data?: T; error?: unknown }, status: number): T {
  answered(result);
  assert.is(
    result.response.status,
    status,
    `expected ${status}, got ${result.response.status}: ${brief(result.error ?? result.data)}`,
  );
  return result.data as T;
}

/**
 * Asserts that a generated client's call got an answer at all: when fetch itself failed (a reset
 * connection, say) the SDK leaves `response` undefined and puts fetch's error in `error`.
 */
export function answered(result: { response?: Response; error?: unknown }): void {
  if (result.response) return;
  const error = result.error as (Error & { cause?: Error }) | undefined;
  assert.unreachable(`no HTTP answer: ${String(error)}${error?.cause ? ` (${String(error.cause)})` : ""}`);
}

/** Asserts that `promise` rejects and returns the rejection. */
export async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return assert.unreachable("expected a rejection");
}
