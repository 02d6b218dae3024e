import type { Workspace } from "@stackship/client";
import { equal, ok } from "../../test/support/assert.ts";
import { deep, deepAll, text, until } from "../../test/support/dom.ts";
import { FakeServer, mount } from "../../test/support/fake-server.ts";
import { sessionFixture } from "../../test/support/fixtures.ts";
import { PAGE_SIZE } from "./workspaces-page.ts";
import "./workspaces-page.ts";

const WORKSPACES = "GET /v1/organizations/acme/workspaces";
const session = sessionFixture();

function workspace(name: string, i: number): Workspace {
  return {
    type: "workspaces",
    id: `ws-${String(i).padStart(16, "0")}`,
    attributes: { name, description: "" },
    relationships: {
      organization: { data: { type: "organizations", id: "org-1" } },
      project: { data: { type: "projects", id: "prj-1" } },
    },
  } as unknown as Workspace;
}

/** A server paging `names` as the API does: by limit and cursor (an index here), filtered by name. */
function server(names: string[]) {
  const all = names.map(workspace);
  return new FakeServer()
    .on(WORKSPACES, (request) => {
      const q = new URLSearchParams(request.search);
      const needle = (q.get("name") ?? "").toLowerCase();
      const matching = all.filter((w) => w.attributes.name.toLowerCase().includes(needle));
      const from = Number(q.get("cursor") ?? 0);
      const limit = Number(q.get("limit"));
      const next = from + limit < matching.length ? String(from + limit) : null;
      return {
        status: 200,
        body: { data: matching.slice(from, from + limit), meta: { page: { limit, next_cursor: next } } },
      };
    })
    .on("GET /v1/organizations/acme/projects", {
      status: 200,
      body: { data: [{ type: "projects", id: "prj-1", attributes: { name: "Default Project" } }] },
    })
    .on("GET /v1/organizations/acme/runs", {
      status: 200,
      body: { data: [], meta: { page: { limit: 100, next_cursor: null } } },
    })
    .on("GET /v1/workspaces/ws-0000000000000000/state-summary", { status: 404, body: {} });
}

async function page(s: FakeServer) {
  const el = document.createElement("ss-workspaces-page");
  el.session = session;
  return mount(s, el);
}

const rows = (el: HTMLElement) => deepAll(el, "tr[data-workspace-id]");

describe("the workspaces page", () => {
  it(`should read ${PAGE_SIZE} workspaces a page and load more through the cursor until the list ends`, async () => {
    const s = server(Array.from({ length: 45 }, (_, i) => `ws-${String(i).padStart(2, "0")}`));
    const el = await page(s);
    await until(() => rows(el).length === PAGE_SIZE);
    equal(
      new URLSearchParams(s.requests.find((r) => r.path.endsWith("/workspaces"))!.search).get("limit"),
      String(PAGE_SIZE),
    );
    ok(text(deep(el, "#workspaces-count")).includes("(more available)"));
    deep<HTMLButtonElement>(el, "#load-more-workspaces")!.click();
    await until(() => rows(el).length === 2 * PAGE_SIZE, "the second page");
    deep<HTMLButtonElement>(el, "#load-more-workspaces")!.click();
    await until(() => rows(el).length === 45, "the last page");
    equal(deep(el, "#load-more-workspaces"), null, "nothing more to load");
    equal(text(deep(el, "#workspaces-count")), "Showing 45 workspaces.");
  });

  it("should ask the server for the typed name once typing pauses, finding workspaces beyond the first page", async () => {
    const names = Array.from({ length: 60 }, (_, i) => `svc-${String(i).padStart(2, "0")}`);
    names.push("zz-billing");
    const s = server(names);
    const el = await page(s);
    await until(() => rows(el).length === PAGE_SIZE);
    const input = deep<HTMLInputElement>(el, "#filter-name")!;
    for (const partial of ["b", "bi", "bil"]) {
      input.value = partial;
      input.dispatchEvent(new Event("input"));
    }
    await until(() => rows(el).length === 1, "the filtered list");
    equal(text(rows(el)[0].querySelector("a")), "zz-billing");
    const filtered = s.requests.filter(
      (r) => r.path.endsWith("/workspaces") && new URLSearchParams(r.search).has("name"),
    );
    equal(
      filtered.map((r) => new URLSearchParams(r.search).get("name")),
      ["bil"],
      "one request, after typing paused",
    );
    input.value = "nothing-like-it";
    input.dispatchEvent(new Event("input"));
    await until(() => deep(el, "#workspaces-no-match"), "the no-match sentence");
    equal(text(deep(el, "#workspaces-no-match")), "No workspace name contains “nothing-like-it”.");
  });
  it("should create a workspace with the switches the form sets: structured run output on by default, turned off here", async () => {
    const s = server(["alpha"]).on("POST /v1/organizations/acme/workspaces", {
      status: 201,
      body: { data: workspace("beta", 9), meta: { permissions: { write: true, verify_federation_profiles: false } } },
    });
    const el = await page(s);
    await until(() => rows(el).length === 1);
    deep<HTMLButtonElement>(el, "#new-workspace")!.click();
    const form = await until(() => deep<HTMLFormElement>(el, "#new-workspace-form"));
    (form.elements.namedItem("name") as HTMLInputElement).value = "beta";
    const structured = form.elements.namedItem("structured_run_output_enabled") as HTMLInputElement;
    ok(structured.checked, "structured run output starts checked, as a new workspace's default");
    structured.checked = false;
    form.requestSubmit();
    await until(() => s.count("POST /v1/organizations/acme/workspaces") === 1);
    const sent = s.requests.find((r) => r.method === "POST")!.body as { data: { attributes: Record<string, unknown> } };
    equal(sent.data.attributes.structured_run_output_enabled, false);
    equal(sent.data.attributes.plan_requires_credential, false);
  });
});
