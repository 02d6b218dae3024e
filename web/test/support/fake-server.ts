/**
 * A fake server behind the real generated SDK (a `fetch` that answers per route and records every
 * request), a context provider element, mounting under it, and removing what a test mounted after
 * each test (browser only, @web/test-runner with mocha, whose globals are typed in
 * mocha-globals.d.ts).
 */
import { provide } from "@lit/context";
import { createStackShipClient, type Client } from "@stackship/client";
import { LitElement, html } from "lit";
import { customElement } from "lit/decorators.js";
import { apiContext } from "../../src/app/context.ts";
import { RUN_ID } from "./fixtures.ts";

/** One recorded request of the fake server. */
export interface Recorded {
  method: string;
  path: string;
  search: string;
  body: unknown;
}

type Answer =
  | { status: number; body?: unknown; contentType?: string }
  | ((
      request: Recorded,
    ) =>
      | { status: number; body?: unknown; contentType?: string }
      | Promise<{ status: number; body?: unknown; contentType?: string }>);

/** A fake StackShip behind the real generated SDK: routes are "METHOD /path" keys. */
export class FakeServer {
  readonly requests: Recorded[] = [];
  readonly routes = new Map<string, Answer>();
  readonly client: Client;

  constructor() {
    this.client = createStackShipClient({
      baseUrl: "http://stackship.test",
      fetch: (input, init) => this.answer(input, init),
    });
  }

  on(route: string, answer: Answer): this {
    this.routes.set(route, answer);
    return this;
  }

  count(route: string): number {
    return this.requests.filter((r) => `${r.method} ${r.path}` === route).length;
  }

  private async answer(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const request = input instanceof Request ? input : new Request(input, init);
    const url = new URL(request.url);
    const text = request.method === "GET" ? "" : await request.text();
    const recorded: Recorded = {
      method: request.method,
      path: url.pathname,
      search: url.search,
      body: text ? JSON.parse(text) : undefined,
    };
    this.requests.push(recorded);
    const route = this.routes.get(`${request.method} ${url.pathname}`);
    if (!route)
      return json(404, {
        errors: [
          {
            status: "404",
            code: "NOT_FOUND",
            title: "Not found",
            detail: `no fake route ${request.method} ${url.pathname}`,
          },
        ],
      });
    const answer = typeof route === "function" ? await route(recorded) : route;
    if (request.signal?.aborted) throw new DOMException("aborted", "AbortError");
    return json(answer.status, answer.body, answer.contentType);
  }
}

function json(status: number, body: unknown, contentType = "application/vnd.api+json"): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { "Content-Type": contentType },
  });
}

/** A JSON:API error answer. */
export function errorAnswer(status: number, code: string, detail = code) {
  return { status, body: { errors: [{ status: String(status), code, title: code, detail }] } };
}

/** Provides the API client context to its children. */
@customElement("ss-test-context")
export class SsTestContext extends LitElement {
  @provide({ context: apiContext }) accessor client!: Client;
  override render() {
    return html`<slot></slot>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-test-context": SsTestContext;
  }
}

/** Mounts `element` under a context provider with `server`'s client; returns it once rendered. */
export async function mount<T extends HTMLElement>(server: FakeServer, element: T): Promise<T> {
  const provider = document.createElement("ss-test-context");
  provider.client = server.client;
  provider.append(element);
  document.body.append(provider);
  await (element as unknown as LitElement).updateComplete;
  return element;
}

/** Creates the run-page element `tag` for RUN_ID with `inputs` (its stage or evidence, the review's actions) and mounts it. */
export function mountForRun<K extends keyof HTMLElementTagNameMap>(
  server: FakeServer,
  tag: K,
  inputs: Partial<HTMLElementTagNameMap[K]>,
): Promise<HTMLElementTagNameMap[K]> {
  return mount(server, Object.assign(document.createElement(tag), { runId: RUN_ID }, inputs));
}

/** Removes what the test mounted; also runs after every test of a file that imports this module. */
export function cleanup() {
  for (const provider of document.querySelectorAll("ss-test-context")) provider.remove();
}
// A hook of the file's root suite: it runs after each test, after the hooks of the test's own suite.
afterEach(cleanup);
