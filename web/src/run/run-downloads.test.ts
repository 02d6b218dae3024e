import { equal, ok } from "../../test/support/assert.ts";
import { text } from "../../test/support/dom.ts";
import { FakeServer, mount } from "../../test/support/fake-server.ts";
import { RUN_ID } from "../../test/support/fixtures.ts";
import type { Downloads } from "./review-model.ts";
import "./run-downloads.ts";

function downloads(value: Downloads) {
  const el = document.createElement("ss-run-downloads");
  el.runId = RUN_ID;
  el.downloads = value;
  return mount(new FakeServer(), el);
}

describe("ss-run-downloads", () => {
  it("should render no section at all for a caller who could never download", async () => {
    const el = await downloads(null);
    equal(el.shadowRoot!.querySelector("section"), null);
  });

  it("should collapse a missing permission to one quiet note", async () => {
    const el = await downloads({ state: "not_permitted", note: "You may not download this run's artifacts." });
    const section = el.shadowRoot!.querySelector("section")!;
    equal(text(section.querySelector('[data-testid="downloads-note"]')), "You may not download this run's artifacts.");
    equal(section.querySelectorAll("form, button").length, 0);
  });

  it("should put the redacted plan in one row, the guarded POST forms behind a disclosure, and what is missing in one line", async () => {
    const el = await downloads({
      state: "permitted",
      items: [
        {
          kind: "redacted_plan",
          method: "GET",
          href: "/x",
          requires_reason: false,
          requires_step_up: false,
          available: true,
        },
        {
          kind: "raw_plan",
          method: "POST",
          href: "/y",
          requires_reason: true,
          requires_step_up: true,
          available: true,
        },
        {
          kind: "emergency_state",
          method: "POST",
          href: "/z",
          requires_reason: true,
          requires_step_up: true,
          available: false,
        },
      ],
    });
    const forms = [...el.shadowRoot!.querySelectorAll("form")];
    equal(
      forms.map((f) => f.dataset.testid),
      ["download-redacted_plan", "download-raw_plan"],
      "what this run does not have gets no form",
    );
    equal(forms[0].querySelector("input"), null, "the redacted plan needs no reason");
    equal(forms[0].closest("details"), null, "the redacted plan is in the compact row, not behind the disclosure");
    const disclosure = el.shadowRoot!.querySelector<HTMLDetailsElement>('[data-testid="sensitive-downloads"]')!;
    ok(!disclosure.open, "the sensitive downloads start closed");
    equal(forms[1].closest("details"), disclosure);
    equal(text(disclosure.querySelector("summary")), "Sensitive downloads: raw plan (a reason is audited first)");
    ok(forms[1].querySelector('input[name="reason"]'), "the raw plan asks for a reason");
    ok(text(forms[1]).includes("You will confirm your password first."));
    equal(
      text(el.shadowRoot!.querySelector('[data-testid="downloads-missing"]')),
      "Not available for this run: the emergency state (this run's apply uploaded no state).",
    );
    // A reasonless submit keeps the disclosure open with its message.
    disclosure.open = true;
    forms[1].requestSubmit();
    await el.updateComplete;
    ok(disclosure.open && text(forms[1]).includes("Type why you need these sensitive bytes."));
    ok(el.shadowRoot!.querySelector("ss-step-up-dialog"), "the step-up dialog is at hand");
  });
});
