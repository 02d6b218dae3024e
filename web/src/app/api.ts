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
    if (response.status === 401 && path !== "/v1/auth/sessions" && path !== "/v1/auth/step-up") hooks.onUnauthenticated(request);
    return response;
  });
  return client;
}
