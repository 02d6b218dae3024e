/**
 * Component-test support (browser only, @web/test-runner with mocha, whose globals are typed in
 * mocha-globals.d.ts): removing what a test mounted after each test, small assertions, a fake
 * server behind the real generated SDK (a `fetch` that answers per route and records every
 * request), a context provider element, and review fixtures.
 */
import { provide } from "@lit/context";
import { createStackShipClient, type Client, type PlanDiff, type PlanDiffResource } from "@stackship/client";
import { LitElement, html } from "lit";
import { customElement } from "lit/decorators.js";
import { apiContext } from "../../src/app/context.ts";
import type { Session } from "../../src/app/session.ts";
import type { Review } from "../../src/run/review-model.ts";

export function ok(value: unknown, message = "expected a truthy value"): asserts value {
  if (!value) throw new Error(message);
}
export function equal<T>(actual: T, expected: T, message = ""): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${message ? `${message}: ` : ""}expected ${e}, got ${a}`);
}
export function match(actual: string, pattern: RegExp, message = ""): void {
  if (!pattern.test(actual))
    throw new Error(`${message ? `${message}: ` : ""}${JSON.stringify(actual)} does not match ${pattern}`);
}

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

/**
 * Resolves once `check` returns a truthy value (polling every 10 ms), or fails naming `what` after
 * `ms`. The limit is only a backstop for a loaded machine: a wait never asserts a speed.
 */
export async function until<T>(check: () => T, what = "condition", ms = 10_000): Promise<NonNullable<T>> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** querySelector through shadow roots. */
export function deep<E extends Element = HTMLElement>(
  root: Element | ShadowRoot | Document,
  selector: string,
): E | null {
  if (root instanceof Element && root.shadowRoot) {
    const inside = deep<E>(root.shadowRoot, selector);
    if (inside) return inside;
  }
  const direct = root.querySelector<E>(selector);
  if (direct) return direct;
  for (const el of root.querySelectorAll("*")) {
    if (el.shadowRoot) {
      const found = deep<E>(el.shadowRoot, selector);
      if (found) return found;
    }
  }
  return null;
}

/** Every match through shadow roots. */
export function deepAll<E extends Element = HTMLElement>(
  root: Element | ShadowRoot | Document,
  selector: string,
  out: E[] = [],
): E[] {
  if (root instanceof Element && root.shadowRoot) deepAll(root.shadowRoot, selector, out);
  out.push(...root.querySelectorAll<E>(selector));
  for (const el of root.querySelectorAll("*")) if (el.shadowRoot) deepAll(el.shadowRoot, selector, out);
  return out;
}

/** The visible text of an element including its shadow content. */
export function text(el: Element | null): string {
  if (!el) return "";
  return ((el as HTMLElement).shadowRoot ? (el as HTMLElement).shadowRoot!.textContent : el.textContent)
    .replace(/\s+/g, " ")
    .trim();
}

/** A member's session in acme (no organization admin), changed by `patch`. */
export function sessionFixture(patch: Partial<Session> = {}): Session {
  return {
    id: "ses-1",
    csrfToken: "csrf",
    expiresAt: "2027-01-01T00:00:00.000Z",
    stepUpFreshUntil: null,
    user: { id: "usr-1", email: "a@example.com", display_name: "A", site_admin: false },
    organizations: [{ id: "org-1", name: "acme" }],
    organization: "acme",
    organizationAdmin: false,
    ...patch,
  };
}

export const RUN_ID = "run-0000000000000001";
export const WS_ID = "ws-0000000000000001";
export const DIGEST = "a".repeat(64);

/** The soft-mandatory finding of a policy that flags the fixture's resource. */
export const NEEDS_TAGS_FINDING = {
  title: "Needs tags",
  message: "terraform_data.greeting is flagged",
  address: "terraform_data.greeting",
  enforcement_level: "soft_mandatory",
} as const;

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> | T[K] : T[K] };

/** A review of a run awaiting approval (1 create, 0 destroys), changed by `patch`. */
export function reviewFixture(patch: (review: Review) => void = () => undefined): Review {
  const review: Review = {
    type: "run-reviews",
    id: RUN_ID,
    attributes: {
      header: {
        title: "Add the greeting",
        title_generated: false,
        commit_message: { state: "not_recorded", value: null },
        status: "awaiting_approval",
        kind: "plan_and_apply",
        source: "api",
        commit_sha: { state: "not_recorded", value: null },
        commit_url: { state: "not_recorded", value: null },
        source_ref: { state: "not_recorded", value: null },
        working_directory: { state: "recorded", value: "" },
        commit_author: { state: "not_recorded", value: null },
        created_at: "2026-12-03T10:00:00.000Z",
        started_at: "2026-12-03T10:00:01.000Z",
        finished_at: null,
        run_id: RUN_ID,
        workspace: { id: WS_ID, name: "app", href: `/v1/workspaces/${WS_ID}` },
      },
      available_actions: ["approve", "discard", "cancel"],
      stages: {
        plan: {
          status: "succeeded",
          phase_status: "finished",
          started_at: "2026-12-03T10:00:01.000Z",
          finished_at: "2026-12-03T10:00:05.000Z",
          summary: { state: "recorded", counts: { create: 1, change: 0, destroy: 0 }, has_changes: true },
        },
        policy: {
          status: "skipped",
          outcome: "skipped",
          started_at: null,
          finished_at: "2026-12-03T10:00:05.000Z",
          findings: [],
          override_control: null,
          overrides: [],
          overrides_truncated: false,
        },
        approval: {
          status: "waiting",
          state: "awaiting",
          decided_by: null,
          decided_at: null,
          reason: null,
          approval_expires_at: "2026-12-04T10:00:05.000Z",
          plan_digest: DIGEST,
          destroy_confirmation_required: false,
          started_at: "2026-12-03T10:00:05.000Z",
          finished_at: null,
          attestations: [],
        },
        apply: {
          status: "pending",
          phase_status: "pending",
          started_at: null,
          finished_at: null,
          state_version: { state: "not_recorded" },
        },
      },
      terminal_reason: null,
      recovery: null,
      evidence: {
        jobs: [],
        definition_sha: { state: "not_recorded", value: null },
        build_sha: { state: "not_recorded", value: null },
        opentofu_version: { state: "recorded", value: "1.10.0" },
        opentofu_build: { state: "not_recorded", value: null },
        runner_release: { state: "not_recorded", value: null },
        sandbox_base_profile: { state: "not_recorded", value: null },
        sandbox_profile_digest: { state: "not_recorded", value: null },
        protocol: { state: "not_recorded", value: null },
        opa_version: { state: "not_recorded", value: null },
        opa_build_commit: { state: "not_recorded", value: null },
        job_engine_build: { state: "not_recorded", value: null },
        attempts: [],
      },
      downloads: {
        state: "permitted",
        items: [
          {
            kind: "redacted_plan",
            method: "GET",
            href: `/v1/runs/${RUN_ID}/downloads/redacted-plan`,
            requires_reason: false,
            requires_step_up: false,
            available: true,
          },
        ],
      },
    },
    relationships: {
      organization: { data: { type: "organizations", id: "org-0000000000000001" } },
      workspace: { data: { type: "workspaces", id: WS_ID } },
      run: { data: { type: "runs", id: RUN_ID } },
    },
    links: { self: `/v1/runs/${RUN_ID}/review` },
  };
  patch(review);
  return review;
}
export type { DeepPartial };

/** A plan-diff of `n` resources (create, update, delete, replace in turn), with markers on the first few. */
export function planDiffFixture(n: number, patch: (diff: PlanDiff) => void = () => undefined): PlanDiff {
  const actions = ["create", "update", "delete", "replace"] as const;
  const resources: PlanDiffResource[] = [];
  for (let i = 0; i < n; i++) {
    const action = actions[i % actions.length];
    resources.push({
      address: `terraform_data.item[${i}]`,
      provider: "terraform.io/builtin/terraform",
      mode: "managed",
      type: "terraform_data",
      name: "item",
      actions: action === "replace" ? ["delete", "create"] : [action],
      action,
      before: action === "create" ? null : { input: `old-${i}`, password: { $stackship: "sensitive" } },
      after:
        action === "delete"
          ? null
          : { input: `new-${i}`, password: { $stackship: "sensitive" }, id: { $stackship: "unknown" } },
      ...(action === "replace" ? { replace_paths: [["input"]] } : {}),
    });
  }
  const diff: PlanDiff = {
    format: "stackship.plan-diff/v1",
    run_id: RUN_ID,
    opentofu_version: "1.10.0",
    plan_format_version: "1.2",
    plan_timestamp: null,
    plan_errored: false,
    truncated: false,
    truncation: { max_resources: 5000, max_bytes: 4194304, changed_resources: n, cut: 0, withheld: 0, dropped: 0 },
    resources,
  };
  patch(diff);
  return diff;
}

/** A fake browser WebSocket for the live feed: records every socket, lets a test deliver frames and close it. */
export class FakeSocket {
  static all: FakeSocket[] = [];
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  closed = false;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  static create = (url: string) => new FakeSocket(url);
  static get last(): FakeSocket {
    return FakeSocket.all[FakeSocket.all.length - 1];
  }
  send(message: unknown) {
    this.onmessage?.(new MessageEvent("message", { data: JSON.stringify(message) }));
  }
  /** The server (or the network) closes the socket. */
  drop(code = 1006) {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.(new CloseEvent("close", { code }));
  }
  close() {
    this.closed = true;
  }
}

/** A `hello` for RUN_ID with the given per-phase positions. */
export function helloMessage(
  logs: Partial<
    Record<"plan" | "policy" | "apply", { next_seq: number; next_offset: number; complete?: boolean }>
  > = {},
  status = "applying",
) {
  const at = (phase: "plan" | "policy" | "apply") => ({ next_seq: 0, next_offset: 0, complete: false, ...logs[phase] });
  return {
    type: "hello",
    version: 1,
    run_id: RUN_ID,
    run: {
      status,
      status_reason: null,
      plan_status: "finished",
      policy_outcome: "passed",
      apply_status: "running",
      terminal: false,
    },
    logs: { plan: at("plan"), policy: at("policy"), apply: at("apply") },
  };
}

/** A `log` message for RUN_ID. */
export function logMessage(
  phase: "plan" | "policy" | "apply",
  seq: number,
  offset: number,
  text: string,
  final = false,
) {
  return { type: "log", run_id: RUN_ID, phase, seq, offset, next_offset: offset + text.length, text, final };
}
