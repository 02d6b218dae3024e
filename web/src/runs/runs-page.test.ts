import type { Run } from "@stackship/client";
import { setViewport } from "@web/test-runner-commands";
import { navigate } from "../app/router.ts";
import { equal, ok } from "../../test/support/assert.ts";
import { deep, deepAll, sleep, text, until } from "../../test/support/dom.ts";
import { cleanup, FakeServer, mount } from "../../test/support/fake-server.ts";
import { sessionFixture } from "../../test/support/fixtures.ts";
import { PAGE_SIZE, SEARCH_BUDGET } from "./runs-page.ts";

// A filter finds runs older than the first page: while it is active and a continuation token
// remains, the page reads on through the same forward pagination until a page of runs match or
// the list ends, saying how many runs it searched; a search that finds little stops after
// SEARCH_BUDGET runs and continues on request.

const RUNS = "GET /v1/organizations/acme/runs";
const session = sessionFixture();

/** `count` runs, newest first; the ones in `awaiting` await approval, every other one is applied. */
function runsHistory(count: number, awaiting: number[] = []): Run[] {
  const start = Date.parse("2026-12-01T00:00:00.000Z");
  return Array.from({ length: count }, (_, i) => {
    const created = new Date(start - i * 60_000).toISOString();
    return {
      type: "runs",
      id: `run-${String(i).padStart(16, "0")}`,
      attributes: {
        status: awaiting.includes(i) ? "awaiting_approval" : "applied",
        message: `change ${i}`,
        source: "api",
        commit: null,
        created_at: created,
        updated_at: created,
        finished_at: awaiting.includes(i) ? null : created,
      },
      relationships: { workspace: { data: { type: "workspaces", id: "ws-1" } } },
    } as unknown as Run;
  });
}

function server(runs: Run[]) {
  const s = new FakeServer();
  s.on(RUNS, (request) => {
    const query = new URLSearchParams(request.search);
    const from = Number(query.get("cursor") ?? 0);
    const limit = Number(query.get("limit"));
    const next = from + limit < runs.length ? String(from + limit) : null;
    return { status: 200, body: { data: runs.slice(from, from + limit), meta: { page: { next_cursor: next } } } };
  });
  s.on("GET /v1/organizations/acme/workspaces", {
    status: 200,
    body: { data: [{ type: "workspaces", id: "ws-1", attributes: { name: "app" } }] },
  });
  return s;
}

async function page(s: FakeServer, search = "") {
  history.replaceState(null, "", `${location.pathname}${search}`);
  const el = document.createElement("ss-runs-page");
  el.session = session;
  el.refreshMs = 60_000;
  await mount(s, el);
  return el;
}

const rows = (el: HTMLElement) => deepAll(el, "tr[data-run-id]");
const searched = (el: HTMLElement) => text(deep(el, "#runs-searched"));

describe("the runs page's filters", () => {
  const original = location.pathname + location.search;
  afterEach(() => {
    history.replaceState(null, "", original);
  });

  it("should find an awaiting run older than the first page through ?status=, and say how many runs it searched", async () => {
    const s = server(runsHistory(200, [150]));
    const el = await page(s, "?status=awaiting_approval");
    await until(() => searched(el) === "Searched 200 runs: the whole history.", "the whole history searched");
    equal(
      rows(el).map((row) => row.dataset.runId),
      [`run-${"150".padStart(16, "0")}`],
    );
    equal(s.count(RUNS), 200 / PAGE_SIZE, "one read per page, forward only");
    ok(!deep(el, "#search-older"));
  });

  it("should stop reading once a page of runs match", async () => {
    const matching = Array.from({ length: 30 }, (_, i) => 40 + i * 2); // 40, 42, … 98
    const s = server(runsHistory(400, matching));
    const el = await page(s);
    const status = await until(() => deep<HTMLSelectElement>(el, "#filter-status"));
    status.value = "awaiting_approval";
    status.dispatchEvent(new Event("change"));
    await until(() => rows(el).length >= PAGE_SIZE, "a page of matches");
    await sleep(100);
    // Matches 40..78 (20 of them) lie in the first four pages.
    equal(s.count(RUNS), 4);
    equal(searched(el), "Searched 80 runs.");
  });

  it(`should pause after ${SEARCH_BUDGET} runs without enough matches, and search older runs on request`, async () => {
    const s = server(runsHistory(1_200));
    const el = await page(s);
    const filter = await until(() => deep<HTMLInputElement>(el, "#filter-text"));
    filter.value = "no such message";
    filter.dispatchEvent(new Event("input"));
    const more = await until(() => deep<HTMLButtonElement>(el, "#search-older"), "the pause");
    equal(rows(el).length, 0);
    // The budget counts from what was loaded when the filter changed (the first page).
    const first = PAGE_SIZE + SEARCH_BUDGET;
    equal(searched(el).startsWith(`Searched ${first} runs.`), true, searched(el));
    await sleep(100);
    equal(s.count(RUNS), first / PAGE_SIZE, `exactly ${SEARCH_BUDGET} more runs read, not one page more`);
    more.click();
    await until(
      () => s.count(RUNS) === (first + SEARCH_BUDGET) / PAGE_SIZE && deep(el, "#search-older"),
      "the next budget",
    );
    equal(searched(el).startsWith(`Searched ${first + SEARCH_BUDGET} runs.`), true, searched(el));
  });

  it("should read no further page without a filter", async () => {
    const s = server(runsHistory(200));
    const el = await page(s);
    await until(() => rows(el).length === PAGE_SIZE);
    await sleep(100);
    equal(s.count(RUNS), 1);
    ok(!deep(el, "#runs-searched"));
  });
});

describe("the runs page's rows and the way back", () => {
  const original = location.pathname + location.search;
  afterEach(() => {
    document.body.style.minHeight = "";
    history.replaceState(null, "", original);
  });

  it("should show per row the plan's counts, the kind, and who started it through what", async () => {
    const runs = runsHistory(3);
    Object.assign(runs[0].attributes, {
      kind: "plan_and_apply",
      source: "cli",
      plan_counts: { create: 2, change: 3, destroy: 1 },
      created_by: { id: "usr-1", kind: "user", name: "Ada Lovelace" },
    });
    Object.assign(runs[1].attributes, {
      kind: "speculative",
      source: "github_pull_request",
      plan_counts: { create: 0, change: 0, destroy: 0 },
      created_by: null,
    });
    Object.assign(runs[2].attributes, {
      kind: "plan_and_apply",
      source: "api",
      plan_counts: null,
      created_by: { id: "pri-1", kind: "token", name: "ci token" },
    });
    const el = await page(server(runs));
    await until(() => rows(el).length === 3);
    const [first, second, third] = rows(el);
    const changes = (row: HTMLElement) => text(row.querySelector(".changes"));
    ok(changes(first).includes("+2 ~3 −1"), changes(first));
    ok(changes(first).includes("2 to add, 3 to change, 1 to destroy"), "the counts in words for a screen reader");
    equal(changes(second), "no changes");
    equal(text(third.querySelector(".changes")), "–");
    equal(text(first.querySelector(".kind")), "plan and apply");
    equal(text(second.querySelector(".kind")), "speculative");
    equal(text(first.querySelector(".started-by")), "by Ada Lovelace · CLI");
    equal(text(second.querySelector(".started-by")), "GitHub pull request");
    equal(text(third.querySelector(".started-by")), "by ci token · API");
  });

  it("should filter by ?status=needs_attention to the runs that wait on a person", async () => {
    const runs = runsHistory(6);
    const statuses = [
      "awaiting_approval",
      "applied",
      "policy_soft_failed",
      "errored",
      "needs_recovery",
      "planning",
    ] as const;
    statuses.forEach((status, i) => Object.assign(runs[i].attributes, { status, finished_at: null }));
    const el = await page(server(runs), "?status=needs_attention");
    await until(() => searched(el).endsWith("the whole history."));
    equal(
      rows(el).map((row) => row.dataset.status),
      ["awaiting_approval", "policy_soft_failed", "needs_recovery"],
    );
    equal(deep<HTMLSelectElement>(el, "#filter-status")!.value, "needs_attention");
    ok(!deep(el, "#ignored-status"), "needs_attention is a known filter");
  });

  it("should restore the loaded pages, the filters and the scroll position on Back, reading no page but the first again", async () => {
    document.body.style.minHeight = "6000px";
    const s = server(runsHistory(100));
    history.replaceState(null, "", `${location.pathname}`);
    const first = document.createElement("ss-runs-page");
    first.session = session;
    first.refreshMs = 60_000;
    await mount(s, first);
    await until(() => rows(first).length === PAGE_SIZE);
    deep<HTMLButtonElement>(first, "#load-more")!.click();
    await until(() => rows(first).length === 2 * PAGE_SIZE, "the second page");
    const filter = deep<HTMLInputElement>(first, "#filter-text")!;
    filter.value = "change 1";
    filter.dispatchEvent(new Event("input"));
    // The filter reads on through the whole history (fewer than a page match).
    await until(() => searched(first).endsWith("the whole history."), "the search");
    const shown = rows(first).map((row) => row.dataset.runId);
    const countLine = text(deep(first, ".count"));
    equal(countLine, `Showing ${shown.length} of 100 loaded runs.`);
    window.scrollTo(0, 900);
    await until(() => window.scrollY === 900, "the scroll");
    window.dispatchEvent(new Event("scroll"));
    const entry = history.state as { runsPage: string };
    ok(typeof entry?.runsPage === "string", "the history entry carries the page's key");
    // Away to a run (a new entry), then Back: the same entry's state again.
    cleanup();
    window.scrollTo(0, 0);
    history.pushState(null, "", `${location.pathname}?away`);
    history.replaceState(entry, "", location.pathname);
    const readsBefore = s.count(RUNS);
    const back = document.createElement("ss-runs-page");
    back.session = session;
    back.refreshMs = 60_000;
    await mount(s, back);
    await until(() => rows(back).length === shown.length, "the restored rows");
    equal(
      rows(back).map((row) => row.dataset.runId),
      shown,
    );
    equal(deep<HTMLInputElement>(back, "#filter-text")!.value, "change 1");
    equal(text(deep(back, ".count")), countLine);
    await until(() => window.scrollY === 900, "the restored scroll position");
    await sleep(100);
    ok(s.count(RUNS) - readsBefore <= 1, "at most the first page is read again (to merge fresh statuses)");
    // A fresh visit (no entry state) starts over.
    cleanup();
    history.replaceState(null, "", location.pathname);
    const fresh = await page(s);
    await until(() => rows(fresh).length === PAGE_SIZE);
    equal(deep<HTMLInputElement>(fresh, "#filter-text")!.value, "");
  });
});

describe("the runs page under a link to itself", () => {
  const original = location.pathname + location.search;
  afterEach(() => {
    history.replaceState(null, "", original);
  });

  it("should apply the status of a /runs?status=… link followed while the page is open", async () => {
    const runs = runsHistory(6, [2]);
    const s = server(runs);
    history.replaceState(null, "", "/runs");
    const el = document.createElement("ss-runs-page");
    el.session = session;
    el.refreshMs = 60_000;
    await mount(s, el);
    await until(() => rows(el).length === 6);
    navigate("/runs?status=needs_attention");
    await until(() => rows(el).length === 1, "the filtered list");
    equal(rows(el)[0].dataset.status, "awaiting_approval");
    equal(deep<HTMLSelectElement>(el, "#filter-status")!.value, "needs_attention");
    navigate("/runs");
    await until(() => rows(el).length === 6, "every run again");
  });
});

describe("the runs page on a phone", () => {
  afterEach(async () => {
    await setViewport({ width: 800, height: 600 });
  });

  it("should show each run as a card at 390 px, message first, with nothing scrolling sideways; a table from 601 px", async () => {
    const runs = runsHistory(5);
    Object.assign(runs[0].attributes, {
      message: "a-very-long-message-without-spaces-".repeat(8),
      kind: "plan_and_apply",
      source: "cli",
      plan_counts: { create: 12, change: 0, destroy: 3 },
      created_by: { id: "usr-1", kind: "user", name: "Ada Lovelace" },
    });
    await setViewport({ width: 390, height: 800 });
    const el = await page(server(runs));
    await until(() => rows(el).length === 5);
    const row = rows(el)[0];
    equal(getComputedStyle(row).display, "block", "a card, not a table row");
    equal(getComputedStyle(deep(el, "thead")!).position, "absolute", "the column heads are for screen readers only");
    ok(
      document.documentElement.scrollWidth <= 390,
      `the page scrolls sideways: ${document.documentElement.scrollWidth} px`,
    );
    ok(row.getBoundingClientRect().right <= 390, `a card overflows: ${row.getBoundingClientRect().right}`);
    const message = row.querySelector<HTMLElement>("a.message")!;
    const first = [...row.querySelectorAll<HTMLElement>("td *")]
      .filter((n) => n.getBoundingClientRect().height > 0)
      .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)[0];
    equal(first, message, "the message is the first thing in the card");
    equal(
      getComputedStyle(row.querySelector("td.duration")!, "::before").content,
      '"Duration "',
      "a card labels its facts",
    );
    await setViewport({ width: 601, height: 800 });
    await until(() => getComputedStyle(row).display === "table-row", "the table again at 601 px");
  });
});
