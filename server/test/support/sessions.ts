import { randomBytes } from "node:crypto";
import type { Role } from "../../src/domain/authorization.ts";
import type { Client } from "../../../client/src/index.ts";
import type { TestServer } from "./test-server.ts";

/** A signed-in dashboard session: its cookie, its CSRF token, and raw and SDK ways to use them. */
export interface TestSession {
  cookie: string;
  csrfToken: string;
  userId: string;
  /** The Set-Cookie header the sign-in answered with. */
  setCookie: string;
  /** fetch() against the server with the session cookie (and, unless `csrf: false`, the CSRF header on changes). */
  request(
    method: string,
    path: string,
    options?: { body?: unknown; headers?: Record<string, string>; csrf?: boolean },
  ): Promise<Response>;
  /** A v1 SDK client sending the cookie and the CSRF token. */
  client(): Client;
}

/** Creates a user through the API as the deployment administrator; returns its credentials. */
export async function createUser(
  server: TestServer,
  options: { email?: string; password?: string; siteAdmin?: boolean; displayName?: string } = {},
) {
  const email = options.email ?? `user-${randomBytes(4).toString("hex")}@example.com`;
  const password = options.password ?? `pw-${randomBytes(12).toString("base64url")}`;
  const response = await fetch(`${server.baseUrl}/v1/users`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.bootstrapToken}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({
      data: {
        type: "users",
        attributes: {
          email,
          password,
          display_name: options.displayName ?? email.split("@")[0],
          site_admin: options.siteAdmin ?? false,
        },
      },
    }),
  });
  if (response.status !== 201) throw new Error(`createUser: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { data: { id: string } };
  return { email, password, userId: body.data.id };
}

/** Gives the user a role in the organization (at a project or workspace when named). */
export async function addMembership(
  server: TestServer,
  organizationName: string,
  email: string,
  role: Role,
  scope: { project_id?: string; workspace_id?: string } = {},
): Promise<void> {
  const response = await fetch(`${server.baseUrl}/v1/organizations/${organizationName}/memberships`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.bootstrapToken}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({ data: { type: "memberships", attributes: { email, role, ...scope } } }),
  });
  if (response.status !== 201) throw new Error(`addMembership: ${response.status} ${await response.text()}`);
}

/** Signs in with email and password; throws unless the server answers 201. */
export async function signIn(server: TestServer, email: string, password: string): Promise<TestSession> {
  const response = await fetch(`${server.baseUrl}/v1/auth/sessions`, {
    method: "POST",
    headers: { "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({ data: { type: "sessions", attributes: { email, password } } }),
  });
  if (response.status !== 201) throw new Error(`signIn: ${response.status} ${await response.text()}`);
  const setCookie = response.headers.get("set-cookie") ?? "";
  const cookie = setCookie.split(";")[0];
  const body = (await response.json()) as { data: { attributes: { csrf_token: string; user: { id: string } } } };
  const csrfToken = body.data.attributes.csrf_token;
  const request: TestSession["request"] = (method, path, options = {}) => {
    const headers: Record<string, string> = { Cookie: cookie, ...options.headers };
    if (options.csrf !== false && method !== "GET" && method !== "HEAD") headers["X-CSRF-Token"] ??= csrfToken;
    if (options.body !== undefined) headers["Content-Type"] ??= "application/vnd.api+json";
    return fetch(`${server.baseUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  };
  return {
    cookie,
    csrfToken,
    setCookie,
    userId: body.data.attributes.user.id,
    request,
    client() {
      const client = server.v1();
      client.setConfig({ headers: { Cookie: cookie, "X-CSRF-Token": csrfToken } });
      return client;
    },
  };
}

/** A new user with `role` in the organization, signed in. */
export async function signedInMember(
  server: TestServer,
  organizationName: string,
  role: Role,
  scope: { project_id?: string; workspace_id?: string } = {},
) {
  const user = await createUser(server);
  await addMembership(server, organizationName, user.email, role, scope);
  return { ...user, session: await signIn(server, user.email, user.password) };
}
