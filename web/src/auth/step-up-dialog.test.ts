// The step-up dialog (used before guarded downloads): focus in the password field, a wrong
// password keeps it open with an error, Cancel resolves false, success resolves true and fires
// ss-stepped-up. Against the generated SDK over a fake fetch (the e2e scenarios use the real server).
import { equal, ok } from "../../test/support/assert.ts";
import { until } from "../../test/support/dom.ts";
import { errorAnswer, FakeServer, mount } from "../../test/support/fake-server.ts";
import "./step-up-dialog.ts";

const FRESH = "2026-12-03T12:15:00.000Z";

describe("ss-step-up-dialog", () => {
  it("should refuse a wrong password in place, then resolve true with the new freshness", async () => {
    let attempts = 0;
    const server = new FakeServer().on("POST /v1/auth/step-up", (request) => {
      attempts += 1;
      const password = (request.body as { data: { attributes: { password: string } } }).data.attributes.password;
      if (password !== "right password")
        return errorAnswer(403, "STEP_UP_PASSWORD_INVALID", "The password is not right.");
      return {
        status: 200,
        body: { data: { type: "sessions", id: "ses-0000000000000001", attributes: { step_up_fresh_until: FRESH } } },
      };
    });
    const dialog = await mount(server, document.createElement("ss-step-up-dialog"));
    let detail: unknown = null;
    dialog.addEventListener("ss-stepped-up", (e) => (detail = (e as CustomEvent<unknown>).detail));
    const outcome = dialog.request("Download the raw plan");
    await dialog.updateComplete;
    const root = dialog.shadowRoot!;
    const native = root.querySelector("dialog")!;
    ok(native.open, "the dialog is open");
    const input = root.querySelector<HTMLInputElement>("#step-up-password")!;
    equal(dialog.shadowRoot!.activeElement, input, "focus is in the password field");
    ok(root.textContent.includes("Download the raw plan"));

    input.value = "wrong";
    root.querySelector<HTMLButtonElement>("button[type=submit]")!.click();
    await until(() => root.querySelector("[role=alert]"), "the error");
    equal(root.querySelector("[role=alert]")!.textContent, "That password is not right.");
    ok(native.open, "still open after a wrong password");

    input.value = "right password";
    root.querySelector<HTMLButtonElement>("button[type=submit]")!.click();
    equal(await outcome, true);
    ok(!native.open, "closed after success");
    equal(detail, { freshUntil: FRESH });
    equal(attempts, 2);
    equal(
      server.requests.every((r) => r.path === "/v1/auth/step-up"),
      true,
    );
  });

  it("should resolve false when canceled, sending nothing", async () => {
    const server = new FakeServer();
    const dialog = await mount(server, document.createElement("ss-step-up-dialog"));
    const outcome = dialog.request();
    await dialog.updateComplete;
    [...dialog.shadowRoot!.querySelectorAll("button")].find((b) => b.textContent === "Cancel")!.click();
    equal(await outcome, false);
    equal(server.requests.length, 0);
  });
});
