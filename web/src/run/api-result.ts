/**
 * What the run page needs from a generated-SDK result: the data of a success, or one readable
 * failure (HTTP status, the JSON:API error code and detail) for an explicit error state.
 */

import { RequestFailed } from "../app/api.ts";

// One error model for the whole dashboard: the run page's helpers build the app's RequestFailed.
export { RequestFailed };

export interface SdkResult<T> {
  data?: T;
  error?: unknown;
  response?: Response;
}

/** The data of a successful SDK call, or throws RequestFailed with the server's own words. */
export function unwrap<T>(result: SdkResult<T>): T {
  const status = result.response?.status ?? 0;
  if (result.response?.ok && result.data !== undefined) return result.data;
  throw failure(status, result.error);
}

/** The RequestFailed of an error document (or of anything else that came back). */
export function failure(status: number, error: unknown): RequestFailed {
  const first = (error as { errors?: Array<{ code?: string; title?: string; detail?: string }> } | undefined)
    ?.errors?.[0];
  const detail =
    first?.detail ??
    first?.title ??
    (status === 0 ? "The server could not be reached." : `The request failed (HTTP ${status}).`);
  return new RequestFailed(status, first?.code ?? null, detail);
}

/** Any thrown value as a RequestFailed (network errors, aborted requests, unexpected throws). */
export function asFailure(error: unknown): RequestFailed {
  if (error instanceof RequestFailed) return error;
  return new RequestFailed(0, null, error instanceof Error ? error.message : String(error));
}
