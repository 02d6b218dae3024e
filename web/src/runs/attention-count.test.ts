import { NAVIGATE_EVENT } from "../app/router.ts";
import { equal, ok } from "../../test/support/assert.ts";
import { deep, text, until } from "../../test/support/dom.ts";
import { cleanup, errorAnswer, FakeServer, mount } from "../../test/support/fake-server.ts";
import { sessionFixture } from "../../test/support/fixtures.ts";
import { ATTENTION_LIMIT } from "./attention-count.ts";
import "./attention-count.ts";

const RUNS = "GET /v1/organizations/acme/runs";
const session = (organization: string) =>
  sessionFixture({
    organizations: [
      { id: "org-1", name: "acme" },
      { id: "org-2", name: "beta" },
    ],
    organization,
  });

const runs = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ type: "runs", id: `run-${String(i).padStart(16, "0")}` }));

async function count(server: FakeServer, organization = "acme") {
  const el = document.createElement("ss-attention-count");
  el.session = session(organization);
  return mount(server, el);
}

const link = (el: HTMLElement) => deep<HTMLAnchorElement>(el, "#needs-attention");

describe("ss-attention-count", () => {
  it("should read the waiting statuses through the run list's filter and link to them", async () => {
    let n = 3;
    const server = new FakeServer().on(RUNS, () => ({
      status: 200,
      body: { data: runs(n), meta: { page: { limit: ATTENTION_LIMIT, next_cursor: null } } },
    }));
    const el = await count(server);
    const a = await until(() => link(el));
    equal(text(a), "Needs attention 3: 3 runs wait on a person");
    equal(a.getAttribute("href"), "/runs?status=needs_attention");
    const query = new URLSearchParams(server.requests[0].search);
    equal(query.get("status"), "awaiting_approval,policy_soft_failed,needs_recovery");
    equal(query.get("limit"), String(ATTENTION_LIMIT));
    // Read again on navigation.
    n = 1;
    window.dispatchEvent(new Event(NAVIGATE_EVENT));
    await until(
      () =>
        text(link(el)) === "Needs attention 1: 1 run wait on a person" ||
        text(link(el)).startsWith("Needs attention 1"),
      "the new count",
    );
    equal(server.count(RUNS), 2);
  });

  it(`should read ${ATTENTION_LIMIT}+ when more than one page waits, and 0 plainly`, async () => {
    const more = new FakeServer().on(RUNS, {
      status: 200,
      body: { data: runs(ATTENTION_LIMIT), meta: { page: { limit: ATTENTION_LIMIT, next_cursor: "c" } } },
    });
    const el = await count(more);
    await until(() => link(el));
    ok(text(link(el)).startsWith(`Needs attention ${ATTENTION_LIMIT}+`), text(link(el)));
    cleanup();
    const exactly = new FakeServer().on(RUNS, {
      status: 200,
      body: { data: runs(ATTENTION_LIMIT), meta: { page: { limit: ATTENTION_LIMIT, next_cursor: null } } },
    });
    const el2 = await count(exactly);
    await until(() => link(el2));
    ok(text(link(el2)).startsWith(`Needs attention ${ATTENTION_LIMIT}:`), text(link(el2)));
    cleanup();
    const none = new FakeServer().on(RUNS, {
      status: 200,
      body: { data: [], meta: { page: { limit: ATTENTION_LIMIT, next_cursor: null } } },
    });
    const el3 = await count(none);
    await until(() => link(el3));
    equal(text(link(el3)), "Needs attention 0: no run waits on a person");
  });

  it("should show no link to a caller who may not list the organization's runs", async () => {
    const server = new FakeServer().on(RUNS, errorAnswer(403, "FORBIDDEN"));
    const el = await count(server);
    await until(() => server.requests.length > 0);
    await el.updateComplete;
    equal(link(el), null);
  });

  it("should count the organization switched to, not the one before", async () => {
    const server = new FakeServer()
      .on(RUNS, { status: 200, body: { data: runs(2), meta: { page: { limit: ATTENTION_LIMIT, next_cursor: null } } } })
      .on("GET /v1/organizations/beta/runs", {
        status: 200,
        body: { data: runs(7), meta: { page: { limit: ATTENTION_LIMIT, next_cursor: null } } },
      });
    const el = await count(server);
    await until(() => text(link(el)).startsWith("Needs attention 2"));
    el.session = session("beta");
    await until(() => text(link(el)).startsWith("Needs attention 7"), "beta's count");
  });
});
