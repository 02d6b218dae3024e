import type { components } from "../../../../generated/tfe/types.gen.ts";
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

/**
 * One page of a list in the TFE pagination shape. A page past the last one is empty and says so
 * (its number, no next page), so a client paging until it gets nothing stops.
 */
export function paginate<T>(
  items: T[],
  pageNumber: number | undefined,
  pageSize: number | undefined,
): { data: T[]; meta: { pagination: components["schemas"]["Pagination"] } } {
  const size = pageSize ?? 20;
  const totalPages = Math.max(1, Math.ceil(items.length / size));
  const current = Math.max(1, pageNumber ?? 1);
  return {
    data: items.slice((current - 1) * size, current * size),
    meta: {
      pagination: {
        "current-page": current,
        "next-page": current < totalPages ? current + 1 : null,
        "prev-page": current > 1 ? current - 1 : null,
        "total-count": items.length,
        "total-pages": totalPages,
      },
    },
  };
}
