/**
 * The StackShip SDK: the generated v1 client plus authentication and pagination helpers.
 * Everything the dashboard and the tests call goes through here.
 */
import { createClient, type Client } from "../../generated/v1/client/client/index.ts";
import { listOrganizationRuns } from "../../generated/v1/client/sdk.gen.ts";
import type { Run } from "../../generated/v1/client/types.gen.ts";

export * from "../../generated/v1/client/index.ts";
export type { Client } from "../../generated/v1/client/client/index.ts";

/** The JSON:API media type. */
export const JSON_API = "application/vnd.api+json";

/** A v1 client for one server and (optionally) one bearer token. */
export function createStackShipClient(options: { baseUrl: string; token?: string; fetch?: typeof fetch }): Client {
  return createClient({
    baseUrl: options.baseUrl,
    headers: { Accept: JSON_API },
    auth: options.token,
    fetch: options.fetch,
  });
}

/**
 * Every run of an organization, newest first, following `meta.page.next_cursor` until it is
 * null. Throws the error document of a failed page.
 */
export async function* paginateOrganizationRuns(
  client: Client,
  organizationName: string,
  limit = 100,
): AsyncGenerator<Run> {
  let cursor: string | undefined;
  do {
    const page = await listOrganizationRuns({
      client,
      path: { organization_name: organizationName },
      query: { limit, cursor },
      throwOnError: true,
    });
    yield* page.data.data;
    cursor = page.data.meta.page.next_cursor ?? undefined;
  } while (cursor !== undefined);
}
