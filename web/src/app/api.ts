// The dashboard's API client: the generated v1 SDK from client/, on this page's origin, so the
// HttpOnly session cookie travels by itself. A request interceptor adds the CSRF header to every
// change; a response interceptor turns a 401 on any call but sign-in into a `ss-session-expired`
// event, which sends the person to sign-in and back to where they were.
import { createStackShipClient, type Client } from "@stackship/client";

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export interface ApiHooks {
  csrfToken(): string | null;
  onUnauthenticated(request: Request): void;
}

export function createApiClient(hooks: ApiHooks, baseUrl = globalThis.location.origin): Client {
  const client = createStackShipClient({ baseUrl });
  client.interceptors.request.use((request) => {
    const token = hooks.csrfToken();
    if (token && UNSAFE.has(request.method)) request.headers.set("X-CSRF-Token", token);
    return request;
  });
  client.interceptors.response.use((response, request) => {
    const path = new URL(request.url).pathname;
    // A wrong sign-in password is a 401 of its own; everywhere else (step-up's wrong password is a 403) a 401 means the session ended.
    if (response.status === 401 && path !== "/v1/auth/sessions") hooks.onUnauthenticated(request);
    return response;
  });
  return client;
}

/** A request that failed, in the server's own words where it sent an error document. */
export class RequestFailed extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    detail: string,
  ) {
    super(detail);
    this.name = "RequestFailed";
  }

  /** The server's own sentence (the error document's detail or title), or what went wrong on the way. */
  get detail(): string {
    return this.message;
  }

  /** "HTTP 503 · SERVICE_UNAVAILABLE" secondary detail ("no answer" when the server was not reached). */
  get summary(): string {
    return this.status === 0
      ? "no answer from the server"
      : [`HTTP ${this.status}`, this.code].filter(Boolean).join(" · ");
  }
}

/** The data of a successful SDK call, or throws RequestFailed (an aborted call rethrows the abort). */
export async function dataOf<T>(call: Promise<{ data?: T; error?: unknown; response?: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response?: Response };
  try {
    result = await call;
  } catch (error) {
    if ((error as { name?: string })?.name === "AbortError") throw error;
    throw new RequestFailed(0, null, "The server could not be reached.");
  }
  if (result.response?.ok && result.data !== undefined) return result.data;
  const status = result.response?.status ?? 0;
  const first = (result.error as { errors?: Array<{ code?: string; title?: string; detail?: string }> } | undefined)
    ?.errors?.[0];
  throw new RequestFailed(
    status,
    first?.code ?? null,
    first?.detail ?? first?.title ?? `The request failed (HTTP ${status}).`,
  );
}
