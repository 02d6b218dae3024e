import { equal, ok } from "../../test/support/assert.ts";
import { text, until } from "../../test/support/dom.ts";
import { cleanup, errorAnswer, FakeServer, mount } from "../../test/support/fake-server.ts";
import { WS_ID } from "../../test/support/fixtures.ts";
import { LOCK_REASON_MAX, type SsWorkspaceLock } from "./workspace-lock.ts";
import "./workspace-lock.ts";

const LOCK = `POST /v1/workspaces/${WS_ID}/actions/lock`;
const UNLOCK = `POST /v1/workspaces/${WS_ID}/actions/unlock`;
const FORCE = `POST /v1/workspaces/${WS_ID}/actions/force-unlock`;
const lockDoc = {
  data: {
    type: "workspace-locks",
    id: WS_ID,
    attributes: {
      holder_kind: "user",
      holder_id: "usr-1",
      reason: "r",
      locked_at: "2026-12-05T10:00:00.000Z",
      fence: 3,
    },
  },
};
const held = (holder_kind: "user" | "run", holder_id: string) => ({
  holder_kind,
  holder_id,
  reason: "maintenance",
  locked_at: "2026-12-05T10:00:00.000Z",
});

async function control(server: FakeServer, inputs: Partial<SsWorkspaceLock>) {
  const el = Object.assign(
    document.createElement("ss-workspace-lock"),
    { workspaceId: WS_ID, userId: "usr-1" },
    inputs,
  );
  return mount(server, el);
}

const button = (el: HTMLElement, id: string) => el.shadowRoot!.querySelector<HTMLButtonElement>(`#${id}`);

describe("ss-workspace-lock", () => {
  it("should lock with a typed reason (a blank one sends nothing) and announce the change", async () => {
    const server = new FakeServer().on(LOCK, { status: 200, body: lockDoc });
    const el = await control(server, { lock: null, canWrite: true });
    let changed = 0;
    el.addEventListener("ss-workspace-lock-changed", () => changed++);
    const reason = el.shadowRoot!.querySelector<HTMLInputElement>("#lock-reason")!;
    equal(reason.maxLength, LOCK_REASON_MAX);
    reason.value = "   ";
    el.shadowRoot!.querySelector<HTMLFormElement>("#lock-form")!.requestSubmit();
    await el.updateComplete;
    equal(server.requests.length, 0);
    ok(text(el.shadowRoot!.querySelector('[role="alert"]')).startsWith("Say why the workspace is locked"));
    reason.value = " rotating keys ";
    el.shadowRoot!.querySelector<HTMLFormElement>("#lock-form")!.requestSubmit();
    await until(() => changed === 1, "the change announced");
    equal(server.requests[0].body, { data: { type: "workspace-locks", attributes: { reason: "rotating keys" } } });
  });

  it("should show no control to a reader, and an Unlock button to the holder", async () => {
    const reader = await control(new FakeServer(), { lock: null, canWrite: false });
    equal(reader.shadowRoot!.querySelector("form, button"), null);
    cleanup();
    const server = new FakeServer().on(UNLOCK, { status: 200, body: lockDoc });
    const el = await control(server, { lock: held("user", "usr-1"), canWrite: true });
    button(el, "unlock")!.click();
    await until(() => server.count(UNLOCK) === 1);
  });

  it("should let only an administrator force-unlock another's lock, after a confirmation naming a run's consequence", async () => {
    const operator = await control(new FakeServer(), {
      lock: held("run", "run-0000000000000009"),
      canWrite: true,
      canForce: false,
    });
    equal(operator.shadowRoot!.querySelector("button"), null, "someone else's lock: nothing to press");
    cleanup();
    const server = new FakeServer().on(
      FORCE,
      errorAnswer(409, "WORKSPACE_NOT_LOCKED", "Workspace ws-1 is not locked."),
    );
    const el = await control(server, { lock: held("run", "run-0000000000000009"), canWrite: true, canForce: true });
    button(el, "force-unlock")!.click();
    await el.updateComplete;
    equal(server.requests.length, 0, "arming sends nothing");
    ok(text(el.shadowRoot!.querySelector('[role="group"]')).includes("That run can then no longer publish state."));
    button(el, "confirm-force-unlock")!.click();
    const error = await until(() => el.shadowRoot!.querySelector("#lock-error"), "the refusal");
    ok(text(error).includes("WORKSPACE_NOT_LOCKED"), text(error));
  });
});
