import { equal, ok } from "../../test/support/assert.ts";
import { text, until } from "../../test/support/dom.ts";
import { errorAnswer, FakeServer, mount } from "../../test/support/fake-server.ts";
import { WS_ID } from "../../test/support/fixtures.ts";
import "./workspace-delete.ts";

const DELETE = `POST /v1/workspaces/${WS_ID}/actions/delete`;

async function control(server: FakeServer) {
  const el = Object.assign(document.createElement("ss-workspace-delete"), {
    workspaceId: WS_ID,
    workspaceName: "net-prod",
  });
  return mount(server, el);
}

function type(el: HTMLElement, value: string) {
  const input = el.shadowRoot!.querySelector<HTMLInputElement>("#delete-name")!;
  input.value = value;
  input.dispatchEvent(new Event("input"));
}

const button = (el: HTMLElement) => el.shadowRoot!.querySelector<HTMLButtonElement>('button[type="submit"]')!;

describe("ss-workspace-delete", () => {
  const original = location.pathname + location.search;
  afterEach(() => {
    history.replaceState(null, "", original);
  });

  it("should enable Delete only for the exact name, and send it with the force choice", async () => {
    const server = new FakeServer().on(DELETE, { status: 204 });
    const el = await control(server);
    ok(button(el).disabled, "nothing typed");
    for (const almost of ["net-pro", "Net-prod", "net-prod "]) {
      type(el, almost);
      await (el as unknown as { updateComplete: Promise<unknown> }).updateComplete;
      ok(button(el).disabled, `"${almost}" is not the name`);
    }
    type(el, "net-prod");
    await (el as unknown as { updateComplete: Promise<unknown> }).updateComplete;
    ok(!button(el).disabled);
    el.shadowRoot!.querySelector<HTMLInputElement>("#delete-force")!.checked = true;
    button(el).click();
    await until(() => server.count(DELETE) === 1);
    equal(server.requests[0].body, {
      data: { type: "workspace-deletions", attributes: { name: "net-prod", force: true } },
    });
    await until(() => location.pathname === "/workspaces", "the workspaces list");
  });

  it("should say the server's refusal and stay", async () => {
    const server = new FakeServer().on(
      DELETE,
      errorAnswer(409, "CONSTRAINT_VIOLATION", "Workspace net-prod has run run-1 in progress (applying)."),
    );
    const el = await control(server);
    type(el, "net-prod");
    await (el as unknown as { updateComplete: Promise<unknown> }).updateComplete;
    button(el).click();
    const error = await until(() => el.shadowRoot!.querySelector("#delete-error"), "the refusal");
    ok(text(error).includes("has run run-1 in progress") && text(error).includes("CONSTRAINT_VIOLATION"), text(error));
    ok(location.pathname !== "/workspaces");
  });
});
