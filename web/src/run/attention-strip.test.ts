import { equal, ok } from "../../test/support/assert.ts";
import { deep, text, until } from "../../test/support/dom.ts";
import { FakeServer, mount } from "../../test/support/fake-server.ts";
import { DIGEST, reviewFixture, RUN_ID } from "../../test/support/fixtures.ts";
import "./attention-strip.ts";

function strip(server: FakeServer, destroy: number, actions = ["approve", "discard", "cancel"] as const) {
  const review = reviewFixture((r) => {
    if (r.attributes.stages.plan.summary.state === "recorded")
      r.attributes.stages.plan.summary.counts = { create: 2, change: 3, destroy };
    r.attributes.stages.approval.destroy_confirmation_required = destroy > 0;
  });
  const el = document.createElement("ss-attention-strip");
  el.runId = RUN_ID;
  el.actions = [...actions];
  el.approval = review.attributes.stages.approval;
  el.plan = review.attributes.stages.plan;
  el.policy = review.attributes.stages.policy;
  return mount(server, el);
}

const button = (el: HTMLElement, label: string) =>
  [...el.shadowRoot!.querySelectorAll("button")].find((b) => b.textContent.trim() === label);

describe("ss-attention-strip", () => {
  it("should approve in one click with the bound plan digest when the plan destroys nothing", async () => {
    const server = new FakeServer().on(`POST /v1/runs/${RUN_ID}/actions/approve`, { status: 202, body: {} });
    const el = await strip(server, 0);
    let done = 0;
    document.addEventListener("ss-run-action-done", () => done++, { once: true });
    button(el, "Approve plan")!.click();
    await until(() => done > 0, "ss-run-action-done bubbled out of the shadow root");
    equal(server.count(`POST /v1/runs/${RUN_ID}/actions/approve`), 1);
    equal(server.requests[0].body, { data: { type: "approvals", attributes: { plan_digest: DIGEST } } });
    equal(el.shadowRoot!.querySelector('[data-testid="approve-confirmation"]'), null);
    equal(done, 1, "ss-run-action-done bubbled out of the shadow root");
  });

  it("should arm an inline confirmation restating every count when the plan destroys one, sending nothing until confirmed", async () => {
    const server = new FakeServer().on(`POST /v1/runs/${RUN_ID}/actions/approve`, { status: 202, body: {} });
    const el = await strip(server, 1);
    button(el, "Approve plan")!.click();
    await el.updateComplete;
    const confirmation = el.shadowRoot!.querySelector('[data-testid="approve-confirmation"]')!;
    ok(confirmation, "the confirmation is armed");
    const words = text(confirmation);
    ok(words.includes("2 to create") && words.includes("3 to change") && words.includes("1 to destroy"), words);
    equal(server.requests.length, 0, "arming sent nothing");
    equal(el.shadowRoot!.activeElement?.id, "confirm-approve", "focus is on the confirming button");
    button(el, "Keep reviewing")!.click();
    await el.updateComplete;
    equal(el.shadowRoot!.querySelector('[data-testid="approve-confirmation"]'), null);
    equal(server.requests.length, 0);
    button(el, "Approve plan")!.click();
    await el.updateComplete;
    (el.shadowRoot!.querySelector("#confirm-approve") as HTMLButtonElement).click();
    await until(() => server.count(`POST /v1/runs/${RUN_ID}/actions/approve`) > 0);
    equal(server.count(`POST /v1/runs/${RUN_ID}/actions/approve`), 1);
  });

  it("should hold the discard reason input only inside the armed confirmation, and send the typed reason", async () => {
    const server = new FakeServer().on(`POST /v1/runs/${RUN_ID}/actions/discard`, { status: 202, body: {} });
    const el = await strip(server, 0);
    equal(el.shadowRoot!.querySelector("textarea"), null, "no reason input before Discard run");
    button(el, "Discard run")!.click();
    await el.updateComplete;
    const reason = el.shadowRoot!.querySelector<HTMLTextAreaElement>("#discard-reason")!;
    ok(reason);
    equal(el.shadowRoot!.activeElement, reason);
    reason.value = "  wrong branch ";
    (
      el.shadowRoot!.querySelector('[data-testid="discard-confirmation"] button[type="submit"]') as HTMLButtonElement
    ).click();
    await until(() => server.requests.length > 0);
    equal(server.requests.at(-1)?.body, { data: { type: "decisions", attributes: { reason: "wrong branch" } } });
  });

  it("should render nothing once no decision is outstanding, and show a refused action's code", async () => {
    const server = new FakeServer().on(`POST /v1/runs/${RUN_ID}/actions/approve`, {
      status: 409,
      body: {
        errors: [
          {
            status: "409",
            code: "RUN_PLAN_DIGEST_MISMATCH",
            title: "x",
            detail: "The plan changed since you reviewed it.",
          },
        ],
      },
    });
    const gone = await strip(server, 0, [] as never);
    equal(gone.shadowRoot!.children.length, 0);
    const el = await strip(server, 0);
    button(el, "Approve plan")!.click();
    const alert = await until(() => {
      const found = deep(el.shadowRoot!, '[role="alert"]');
      return found && text(found).includes("409") ? found : null;
    }, "the refusal's alert");
    ok(
      text(alert).includes("The plan changed since you reviewed it.") &&
        text(alert).includes("HTTP 409 · RUN_PLAN_DIGEST_MISMATCH"),
      text(alert),
    );
  });
});
