import { equal, ok } from "../../test/support/assert.ts";
import { until } from "../../test/support/dom.ts";
import "./elapsed.ts";

describe("ss-elapsed", () => {
  it("should tick once a second on its own text only, from one shared clock", async () => {
    const host = document.createElement("div");
    const started = new Date(Date.now() - 65_000).toISOString();
    host.innerHTML = `<span id="a"><ss-elapsed since="${started}"></ss-elapsed></span><span id="b"><ss-elapsed since="${new Date(Date.now() - 5_000).toISOString()}"></ss-elapsed></span>`;
    document.body.append(host);
    const a = host.querySelector("ss-elapsed")!;
    const span = host.querySelector("#a")!;
    equal(span.textContent, "1m 05s");
    const textNode = a.firstChild;
    const spans = [...host.querySelectorAll("span")];
    // The shared clock ticks once a second; a loaded machine may delay a tick, never skip the change.
    await until(() => span.textContent !== "1m 05s", "the duration to move");
    const shown = /^1m (\d\d)s$/.exec(span.textContent ?? "");
    ok(shown, `a duration in minutes and seconds: ${span.textContent}`);
    const elapsed = (Date.now() - Date.parse(started)) / 1000;
    ok(Number(shown[1]) >= 6 && 60 + Number(shown[1]) <= elapsed, `${span.textContent} after ${elapsed} s`);
    ok(textNode !== null, "painted");
    equal([...host.querySelectorAll("span")], spans, "the surrounding elements were not re-rendered");
    a.setAttribute("since", "not a date");
    equal(a.textContent, "");
    host.remove();
  });
});
