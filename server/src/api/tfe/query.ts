import { DomainError } from "../../domain/errors.ts";

/**
 * Refuses a `filter[…]` or `search[…]` parameter the operation does not implement: answering
 * every item as if it had been filtered would mislead a client (go-tfe pages through whatever it
 * is given). The tfe surface otherwise accepts unknown query parameters, as TFE does.
 */
export function refuseUnknownFilters(query: Record<string, unknown>, known: readonly string[]): void {
  for (const name of Object.keys(query)) {
    if ((name.startsWith("filter[") || name.startsWith("search[")) && !known.includes(name)) {
      throw new DomainError("REQUEST_INVALID", `The query parameter '${name}' is not supported by this operation.`, {
        source: { parameter: name },
      });
    }
  }
}

/** The values of a comma-separated list parameter (go-tfe joins them with commas), or undefined when absent or empty. */
export function listParameter(value: string | undefined): Set<string> | undefined {
  const values = (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  return values.length > 0 ? new Set(values) : undefined;
}
