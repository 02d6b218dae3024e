import type { Workspace } from "@stackship/client";
import { equal, ok } from "../../test/support/assert.ts";
import { text, until } from "../../test/support/dom.ts";
import { cleanup, errorAnswer, FakeServer, mount } from "../../test/support/fake-server.ts";
import { WS_ID } from "../../test/support/fixtures.ts";
import { generalChanges, type SsWorkspaceGeneral } from "./workspace-general.ts";
import "./workspace-general.ts";

const PATCH = `PATCH /v1/workspaces/${WS_ID}`;
const workspace = {
  type: "workspaces",
  id: WS_ID,
  attributes: { name: "app", description: null, working_directory: "infra" },
  relationships: { project: { data: { type: "projects", id: "prj-1" } } },
} as unknown as Workspace;

async function form(server: FakeServer) {
  const el = Object.assign(document.createElement("ss-workspace-general"), { workspace }) as SsWorkspaceGeneral;
  return mount(server, el);
}

function fill(el: HTMLElement, id: string, value: string) {
  el.shadowRoot!.querySelector<HTMLInputElement>(`#${id}`)!.value = value;
}

describe("ss-workspace-general", () => {
  it("should send only what changed, and announce it", async () => {
    const server = new FakeServer().on(PATCH, {
      status: 200,
      body: { data: workspace, meta: { permissions: { write: true, verify_federation_profiles: false } } },
    });
    const el = await form(server);
    let changed = 0;
    el.addEventListener("ss-workspace-changed", () => changed++);
    el.shadowRoot!.querySelector<HTMLFormElement>("#general-form")!.requestSubmit();
    await (el as unknown as { updateComplete: Promise<unknown> }).updateComplete;
    equal(server.requests.length, 0, "nothing changed, nothing sent");
    equal(text(el.shadowRoot!.querySelector("#general-notice")), "Nothing changed.");
    fill(el, "general-name", "app-prod");
    fill(el, "general-description", "the app");
    el.shadowRoot!.querySelector<HTMLFormElement>("#general-form")!.requestSubmit();
    await until(() => changed === 1, "the change announced");
    equal(server.requests[0].body, {
      data: { type: "workspaces", attributes: { name: "app-prod", description: "the app" } },
    });
  });

  it("should show the server's refusal of a taken name", async () => {
    const server = new FakeServer().on(
      PATCH,
      errorAnswer(409, "WORKSPACE_NAME_TAKEN", "A workspace with this name already exists in the organization."),
    );
    const el = await form(server);
    fill(el, "general-name", "taken");
    el.shadowRoot!.querySelector<HTMLFormElement>("#general-form")!.requestSubmit();
    const error = await until(() => el.shadowRoot!.querySelector("#general-error"), "the refusal");
    ok(text(error).includes("already exists") && text(error).includes("WORKSPACE_NAME_TAKEN"), text(error));
  });

  it("should treat an empty description as none and a leading ./ as the root-relative directory", () => {
    equal(
      generalChanges(
        { ...workspace, attributes: { ...workspace.attributes, description: "old" } },
        { name: "app", description: "  ", workingDirectory: "./infra" },
      ),
      {
        description: null,
      },
    );
    equal(generalChanges(workspace, { name: "app", description: "", workingDirectory: "" }), { working_directory: "" });
  });
  it("should offer the project only to an organization administrator, and send a move", async () => {
    const server = new FakeServer()
      .on(PATCH, {
        status: 200,
        body: { data: workspace, meta: { permissions: { write: true, verify_federation_profiles: true } } },
      })
      .on("GET /v1/organizations/acme/projects", {
        status: 200,
        body: {
          data: [
            { type: "projects", id: "prj-1", attributes: { name: "Default Project" } },
            { type: "projects", id: "prj-2", attributes: { name: "payments" } },
          ],
        },
      });
    const writer = await form(server);
    equal(writer.shadowRoot!.querySelector("#general-project"), null, "not an administrator: no project select");
    cleanup();
    const el = Object.assign(document.createElement("ss-workspace-general"), {
      workspace,
      organization: "acme",
      canMove: true,
    }) as SsWorkspaceGeneral;
    await mount(server, el);
    const select = await until(
      () => el.shadowRoot!.querySelector<HTMLSelectElement>("#general-project"),
      "the project select",
    );
    equal(select.value, "prj-1");
    select.value = "prj-2";
    el.shadowRoot!.querySelector<HTMLFormElement>("#general-form")!.requestSubmit();
    await until(() => server.count(PATCH) === 1);
    equal(server.requests.find((r) => r.method === "PATCH")!.body, {
      data: { type: "workspaces", attributes: { project_id: "prj-2" } },
    });
  });
});
