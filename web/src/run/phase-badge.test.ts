import { equal, ok } from "../../test/support/assert.ts";
import { text } from "../../test/support/dom.ts";
import { FakeServer, mount } from "../../test/support/fake-server.ts";
import "./phase-badge.ts";

describe("ss-phase-badge", () => {
  it("should pair the Plan/Apply label and an icon with the status, in the description's tones", async () => {
    const cases: Array<["plan" | "apply", string, string]> = [
      ["plan", "pending", "info"],
      ["plan", "running", "info"],
      ["plan", "finished", "success"],
      ["plan", "canceled", "attention"],
      ["plan", "errored", "danger"],
      ["apply", "interrupted", "danger"],
      ["apply", "finished", "success"],
    ];
    for (const [phase, status, tone] of cases) {
      const badge = await mount(
        new FakeServer(),
        Object.assign(document.createElement("ss-phase-badge"), { phase, status }),
      );
      const span = badge.shadowRoot!.querySelector(".badge")!;
      equal(span.getAttribute("data-tone"), tone, `${phase} ${status}`);
      equal(text(badge), `${phase === "plan" ? "Plan" : "Apply"} ${status}`);
      ok(span.querySelector("svg[aria-hidden='true']"), "an icon beside the text");
    }
  });

  it("should render a status outside the closed set as an explicit error, never a guess", async () => {
    // Plans have no `interrupted`; `paused` exists nowhere.
    for (const [phase, status] of [
      ["plan", "interrupted"],
      ["apply", "paused"],
      ["plan", ""],
    ] as const) {
      const badge = await mount(
        new FakeServer(),
        Object.assign(document.createElement("ss-phase-badge"), { phase, status }),
      );
      equal(badge.shadowRoot!.querySelector(".badge")!.getAttribute("data-tone"), "error");
      ok(text(badge).includes(`unknown status “${status}”`), text(badge));
    }
  });
});
