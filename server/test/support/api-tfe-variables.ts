// Shared by tfe-variables.test.ts and tfe-variables-refusals.test.ts: the canaries, a recorder of every
// response (to search for the canaries), error and document helpers, and the set-up.
import * as assert from "uvu/assert";
import * as tfeValidators from "../../../generated/tfe/validators.gen.js";
import { expectNothingWritten, leakForms } from "./database.ts";
import { createOrganizationWithToken, createWorkspace } from "./factories.ts";
import type { Tfe } from "./documents.ts";
import type { TestServer } from "./test-server.ts";

export const CANARY = "tfe-vars-canary-7c1e93";
export const CANARY_UPDATED = "tfe-vars-canary-updated-40b8d2";
export const V1_CANARY = "tfe-vars-v1-canary-913f55";
export const VARIABLE_TABLES = ["workspace_variables", "audit_events"] as const;

export interface Answer<T = unknown> {
  status: number;
  text: string;
  json: T;
}

/** Every response body of the test, to search for canaries at the end. */
export class Calls {
  readonly texts: string[] = [];
  constructor(private readonly server: TestServer) {}

  async send<T = unknown>(method: string, path: string, token: string, body?: unknown): Promise<Answer<T>> {
    const response = await fetch(`${this.server.baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    this.texts.push(text);
    return { status: response.status, text, json: (text ? JSON.parse(text) : undefined) as T };
  }

  tfe<T = unknown>(method: string, path: string, token: string, body?: unknown) {
    return this.send<T>(method, `/api/v2${path}`, token, body);
  }

  /** An /api/v2 call checked to leave the variables and the audit log as they were. */
  refused<T = unknown>(method: string, path: string, token: string, body?: unknown) {
    return expectNothingWritten(this.server, () => this.tfe<T>(method, path, token, body), VARIABLE_TABLES);
  }

  v1<T = unknown>(method: string, path: string, token: string, body?: unknown) {
    return this.send<T>(method, `/v1${path}`, token, body);
  }

  assertNoLeak(...secrets: string[]) {
    for (const secret of secrets) {
      for (const form of leakForms(secret)) {
        const leaked = this.texts.find((text) => text.includes(form));
        assert.is(leaked, undefined, `a response carries the sensitive value (${form})`);
      }
    }
  }
}

export function expectError(answer: Answer, status: number, code: string): Tfe["ErrorDocument"]["errors"][number] {
  assert.is(answer.status, status, `expected ${status} ${code}, got ${answer.status}: ${answer.text}`);
  const document = answer.json as Tfe["ErrorDocument"] | undefined;
  assert.ok(tfeValidators.ErrorDocument(answer.json) || document?.errors, answer.text);
  const error = document!.errors[0];
  assert.is(error.code, code);
  return error;
}

export function varsDocument(attributes: Record<string, unknown>, id?: string) {
  return { data: { type: "vars", ...(id ? { id } : {}), attributes } };
}

export async function setUp(server: TestServer) {
  const acme = await createOrganizationWithToken(server, "acme", "admin");
  const workspace = await createWorkspace(server, acme.token, "acme", { name: "networking" });
  return { token: acme.token, workspace, calls: new Calls(server) };
}

export async function storedRow(server: TestServer, id: string) {
  return server.services.stores.variables.getById(id);
}
