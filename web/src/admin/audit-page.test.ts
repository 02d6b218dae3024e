import type { AuditEvent } from "@stackship/client";
import { equal, ok } from "../../test/support/assert.ts";
import { deep, deepAll, text, until } from "../../test/support/dom.ts";
import { errorAnswer, FakeServer, mount } from "../../test/support/fake-server.ts";
import { sessionFixture } from "../../test/support/fixtures.ts";
import { AUDIT_PAGE_SIZE } from "./audit-page.ts";
import "./audit-page.ts";

const EVENTS = "GET /v1/organizations/acme/audit-events";

function event(sequence: number): AuditEvent {
  return {
    type: "audit-events",
    id: `ae-${String(sequence).padStart(16, "0")}`,
    attributes: {
      sequence,
      action: sequence % 2 === 0 ? "run.created" : "run.approved",
      actor_id: null,
      target_type: "runs",
      target_id: `run-${sequence}`,
      reason: null,
      data: {},
      created_at: new Date(Date.UTC(2026, 11, 1, 0, 0, sequence)).toISOString(),
      previous_digest: "0".repeat(64),
      digest: "1".repeat(64),
    },
  };
}

/** A server paging `n` events as the API does (by limit and cursor, an index here); `failAfter` refuses later pages. */
function server(n: number, failAfter?: number) {
  const all = Array.from({ length: n }, (_, i) => event(i));
  return new FakeServer()
    .on(EVENTS, (request) => {
      const q = new URLSearchParams(request.search);
      const from = Number(q.get("cursor") ?? 0);
      if (failAfter !== undefined && from >= failAfter) return errorAnswer(503, "UNAVAILABLE", "try again");
      const limit = Number(q.get("limit"));
      const next = from + limit < all.length ? String(from + limit) : null;
      return {
        status: 200,
        body: { data: all.slice(from, from + limit), meta: { page: { limit, next_cursor: next } } },
      };
    })
    .on("GET /v1/organizations/acme/memberships", { status: 200, body: { data: [] } });
}

async function page(s: FakeServer) {
  const el = document.createElement("ss-audit-page");
  el.session = sessionFixture();
  return mount(s, el);
}

const rows = (el: HTMLElement) => deepAll(el, "tr[data-audit-id]");

describe("the audit history page", () => {
  it(`should show exactly ${AUDIT_PAGE_SIZE} events as the whole history when the first page ends the chain`, async () => {
    const s = server(AUDIT_PAGE_SIZE);
    const el = await page(s);
    await until(() => rows(el).length === AUDIT_PAGE_SIZE, "the first page");
    await until(() => deep(el, "#audit-end"), "the end sentence");
    equal(deep(el, "#load-more"), null, "no button when there is nothing more");
    equal(text(deep(el, "#audit-count")), `Showing ${AUDIT_PAGE_SIZE} of ${AUDIT_PAGE_SIZE} loaded events.`);
  });

  it(`should load event ${AUDIT_PAGE_SIZE + 1} through the cursor on request, in the chain's order`, async () => {
    const s = server(AUDIT_PAGE_SIZE + 1);
    const el = await page(s);
    await until(() => rows(el).length === AUDIT_PAGE_SIZE, "the first page");
    ok(text(deep(el, "#audit-count")).endsWith("(more available)."));
    equal(deep(el, "#audit-end"), null);
    deep<HTMLButtonElement>(el, "#load-more")!.click();
    await until(() => rows(el).length === AUDIT_PAGE_SIZE + 1, "the second page");
    equal(rows(el).at(-1)!.getAttribute("data-audit-id"), event(AUDIT_PAGE_SIZE).id);
    equal(
      s.requests
        .filter((r) => r.path.endsWith("/audit-events"))
        .map((r) => new URLSearchParams(r.search).get("cursor")),
      [null, String(AUDIT_PAGE_SIZE)],
    );
    await until(() => deep(el, "#audit-end"), "the end sentence");
    equal(deep(el, "#load-more"), null);
  });

  it("should keep the loaded events and say so when a later page cannot be read, and load it on a second try", async () => {
    const failing = server(AUDIT_PAGE_SIZE + 1, AUDIT_PAGE_SIZE);
    const el = await page(failing);
    await until(() => rows(el).length === AUDIT_PAGE_SIZE, "the first page");
    deep<HTMLButtonElement>(el, "#load-more")!.click();
    const alert = await until(() => deep(el, "[role=alert]"), "the failure notice");
    ok(text(alert).startsWith("Later events could not be loaded"), text(alert));
    equal(rows(el).length, AUDIT_PAGE_SIZE, "what was loaded stays");
    failing.routes.delete(EVENTS);
    const healthy = server(AUDIT_PAGE_SIZE + 1);
    failing.on(EVENTS, healthy.routes.get(EVENTS)!);
    deep<HTMLButtonElement>(el, "#load-more")!.click();
    await until(() => rows(el).length === AUDIT_PAGE_SIZE + 1, "the second page on the second try");
    equal(deep(el, "[role=alert]"), null);
  });
});
