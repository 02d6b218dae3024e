import { equal, ok } from "../../test/support/components.ts";
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
    const seen = new Set<string>([span.textContent]);
    const deadline = Date.now() + 2500;
    while (Date.now() < deadline && seen.size < 2) {
      await new Promise((r) => setTimeout(r, 100));
      seen.add(span.textContent);
    }
    ok(seen.size >= 2, `the duration moved: ${[...seen].join(", ")}`);
    ok(/^1m 0[6-9]s$/.test(span.textContent), span.textContent);
    ok(textNode !== null, "painted");
    equal([...host.querySelectorAll("span")], spans, "the surrounding elements were not re-rendered");
    a.setAttribute("since", "not a date");
    equal(a.textContent, "");
    host.remove();
  });
});
