import { errorCodes } from "../../../generated/v1/error-codes.gen.ts";
import type { DomainError } from "../domain/errors.ts";

/** The JSON:API media type both surfaces speak. */
export const JSON_API = "application/vnd.api+json";

/** One JSON:API error object as StackShip writes it. */
export interface ErrorObject {
  status: string;
  code: string;
  title: string;
  detail?: string;
  source?: { pointer?: string; parameter?: string; header?: string };
  meta?: Record<string, unknown>;
}

/** The HTTP status of a code, from the catalogue in spec/v1/error-codes.yaml. */
export function statusOf(code: DomainError["code"]): number {
  return errorCodes[code].status;
}

/** A JSON:API error object for a domain error. */
export function errorObject(error: DomainError, requestId: string): ErrorObject {
  const object: ErrorObject = {
    status: String(statusOf(error.code)),
    code: error.code,
    title: errorCodes[error.code].title,
    detail: error.detail,
  };
  if (error.source) object.source = error.source;
  object.meta = { ...(error.meta ?? {}), request_id: requestId };
  return object;
}
