import { equal, ok } from "../../test/support/assert.ts";
import { formText, takeSubmit, type SubmittedForm } from "./form-data.ts";

describe("takeSubmit", () => {
  it("should stop the browser's own submission and read the submitted fields, trimmed by name", () => {
    const form = document.createElement("form");
    form.innerHTML = `<input name="reason" value="  rotate keys  " /><input name="secret" value=" x " /><button>Go</button>`;
    document.body.append(form);
    let read: SubmittedForm | undefined;
    let prevented = false;
    form.addEventListener("submit", (event) => {
      read = takeSubmit(event);
      prevented = event.defaultPrevented;
    });
    try {
      form.querySelector("button")!.click();
      ok(read, "the submit handler ran");
      ok(prevented, "the page does not navigate");
      equal(read.form, form);
      equal(read.trimmed("reason"), "rotate keys");
      equal(formText(read.data, "secret"), " x ");
      equal(read.trimmed("missing"), "");
    } finally {
      form.remove();
    }
  });
});
