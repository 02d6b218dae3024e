import { equal, ok } from "../../test/support/assert.ts";
import { text, until } from "../../test/support/dom.ts";
import { planDiffFixture } from "../../test/support/fixtures.ts";
import { sendKeys, setViewport } from "@web/test-runner-commands";
import type { PlanDiffResource } from "@stackship/client";
import { changes, open, resourceRows, rowOf, rows, serve, visibleBox } from "../../test/support/plan-changes.ts";

// ss-plan-changes, continued from plan-changes.test.ts: copying addresses, the keyboard, grouping
// and the layout at two screen widths.

describe("ss-plan-changes", () => {
  it("should copy a resource's address from its row and from its detail, and say Copied", async () => {
    const copied: string[] = [];
    let fail = false;
    const clipboard = navigator.clipboard;
    Object.defineProperty(clipboard, "writeText", {
      configurable: true,
      value: async (value: string) => {
        if (fail) throw new DOMException("denied", "NotAllowedError");
        copied.push(value);
      },
    });
    try {
      const el = await changes(serve(planDiffFixture(4)));
      const copy = rowOf(el, "terraform_data.item[2]").querySelector<HTMLButtonElement>("button.copy")!;
      equal(text(copy), "Copy");
      equal(copy.getAttribute("aria-label"), "Copy address");
      copy.click();
      await until(() => text(copy) === "Copied", "Copied");
      equal(copied, ["terraform_data.item[2]"]);
      equal(text(el.shadowRoot!.querySelector('[data-testid="changes-copy-status"]')), "Copied terraform_data.item[2]");
      equal(el.selected, null, "copying does not open the detail");
      await open(el, "terraform_data.item[3]");
      const detailCopy = el.shadowRoot!.querySelector<HTMLButtonElement>('[data-testid="changes-detail"] button.copy')!;
      equal(detailCopy.tabIndex, 0, "the detail's copy button is reachable with Tab");
      detailCopy.click();
      await until(() => text(detailCopy) === "Copied", "Copied in the detail");
      equal(copied, ["terraform_data.item[2]", "terraform_data.item[3]"]);
      fail = true;
      detailCopy.click();
      await until(
        () =>
          text(el.shadowRoot!.querySelector('[data-testid="changes-copy-status"]')) ===
          "Could not copy terraform_data.item[3]",
        "failure",
      );
      equal(text(detailCopy), "Copy");
    } finally {
      delete (clipboard as { writeText?: unknown }).writeText;
    }
  });

  it("should reach the list with Tab, move with the arrow keys, open with Enter and Space, close with Escape, with a visible focus ring", async () => {
    const el = await changes(serve(planDiffFixture(40)));
    el.shadowRoot!.querySelector<HTMLSelectElement>('[data-testid="changes-grouping"]')!.focus();
    await sendKeys({ press: "Tab" });
    const focused = () => el.shadowRoot!.activeElement as HTMLButtonElement;
    const address = () => text(focused().querySelector(".address"));
    equal(address(), "terraform_data.item[0]");
    ok(focused().matches(":focus-visible"), "focus is visible");
    equal(getComputedStyle(focused()).outlineStyle, "solid", "a focus ring");
    equal(getComputedStyle(focused()).outlineWidth, "2px");
    await sendKeys({ press: "ArrowDown" });
    await sendKeys({ press: "ArrowDown" });
    await el.updateComplete;
    equal(address(), "terraform_data.item[2]");
    equal(
      resourceRows(el).filter((r) => r.querySelector<HTMLButtonElement>("button.open")!.tabIndex === 0).length,
      1,
      "one tab stop",
    );
    await sendKeys({ press: "Enter" });
    await el.updateComplete;
    equal(text(el.shadowRoot!.querySelector('[data-testid="changes-detail"] h4')), "terraform_data.item[2]");
    await sendKeys({ press: "ArrowUp" });
    await el.updateComplete;
    equal(address(), "terraform_data.item[1]");
    await sendKeys({ press: " " });
    await el.updateComplete;
    equal(text(el.shadowRoot!.querySelector('[data-testid="changes-detail"] h4')), "terraform_data.item[1]");
    equal(focused().getAttribute("aria-pressed"), "true");
    await sendKeys({ press: "ArrowUp" });
    await sendKeys({ press: "ArrowUp" });
    await el.updateComplete;
    equal(address(), "terraform_data.item[0]", "stops at the first row");
    el.shadowRoot!.querySelector<HTMLButtonElement>('[data-testid="changes-detail"] button.close')!.focus();
    await sendKeys({ press: "Escape" });
    await until(() => !el.shadowRoot!.querySelector('[data-testid="changes-detail"]'), "Escape closes the detail");
    await el.updateComplete;
    equal(address(), "terraform_data.item[0]", "focus returns to the list");
  });

  it("should group by module and by resource type with headings and counts, the keyboard skipping the headings", async () => {
    const diff = planDiffFixture(6, (d) => {
      const set = (i: number, patch: Partial<PlanDiffResource>) => Object.assign(d.resources[i], patch);
      set(0, { address: "module.net.aws_vpc.main", module_address: "module.net", type: "aws_vpc" });
      set(1, { address: "module.net.aws_subnet.a", module_address: "module.net", type: "aws_subnet" });
      set(2, { address: "aws_subnet.b", type: "aws_subnet" });
      set(3, { address: "module.app.aws_subnet.c", module_address: "module.app", type: "aws_subnet" });
    });
    const el = await changes(serve(diff));
    equal(el.shadowRoot!.querySelectorAll('[data-testid="changes-group"]').length, 0, "no headings by default");
    const grouping = el.shadowRoot!.querySelector<HTMLSelectElement>('[data-testid="changes-grouping"]')!;
    equal(
      [...grouping.options].map((o) => o.textContent),
      ["None", "Module", "Resource type"],
    );
    const choose = async (value: string) => {
      grouping.value = value;
      grouping.dispatchEvent(new Event("change"));
      await el.updateComplete;
    };
    const listed = () =>
      rows(el).map((r) => (r.matches(".group") ? `# ${text(r)}` : text(r.querySelector(".address"))));
    await choose("module");
    equal(listed(), [
      "# module.app 1 resource",
      "module.app.aws_subnet.c",
      "# module.net 2 resources",
      "module.net.aws_vpc.main",
      "module.net.aws_subnet.a",
      "# root module 3 resources",
      "aws_subnet.b",
      "terraform_data.item[4]",
      "terraform_data.item[5]",
    ]);
    equal(text(el.shadowRoot!.querySelector('[data-testid="changes-count"]')), "6 of 6 resources shown");
    equal(
      el.shadowRoot!.querySelector('[data-testid="changes-group"] [role="heading"]')!.getAttribute("aria-level"),
      "4",
    );
    const first = rowOf(el, "module.app.aws_subnet.c").querySelector<HTMLButtonElement>("button.open")!;
    equal(first.tabIndex, 0, "the tab stop is the first resource, not a heading");
    first.focus();
    await sendKeys({ press: "ArrowDown" });
    await el.updateComplete;
    equal(
      text((el.shadowRoot!.activeElement as HTMLElement).querySelector(".address")),
      "module.net.aws_vpc.main",
      "the heading is skipped",
    );
    await sendKeys({ press: "ArrowUp" });
    await el.updateComplete;
    equal(text((el.shadowRoot!.activeElement as HTMLElement).querySelector(".address")), "module.app.aws_subnet.c");
    equal(rowOf(el, "module.net.aws_subnet.a").getAttribute("aria-posinset"), "3");
    equal(rowOf(el, "module.net.aws_subnet.a").getAttribute("aria-setsize"), "6");
    await choose("type");
    equal(listed(), [
      "# aws_subnet 3 resources",
      "module.net.aws_subnet.a",
      "aws_subnet.b",
      "module.app.aws_subnet.c",
      "# aws_vpc 1 resource",
      "module.net.aws_vpc.main",
      "# terraform_data 2 resources",
      "terraform_data.item[4]",
      "terraform_data.item[5]",
    ]);
    const input = el.shadowRoot!.querySelector<HTMLInputElement>('input[type="search"]')!;
    input.value = "module.";
    input.dispatchEvent(new Event("input"));
    await el.updateComplete;
    equal(listed(), [
      "# aws_subnet 2 resources",
      "module.net.aws_subnet.a",
      "module.app.aws_subnet.c",
      "# aws_vpc 1 resource",
      "module.net.aws_vpc.main",
    ]);
  });

  it("should keep a grouped 5,000-resource list virtualized", async () => {
    const diff = planDiffFixture(5000, (d) =>
      d.resources.forEach((r, i) => i % 2 && Object.assign(r, { module_address: `module.m${i % 7}` })),
    );
    const el = await changes(serve(diff));
    const grouping = el.shadowRoot!.querySelector<HTMLSelectElement>('[data-testid="changes-grouping"]')!;
    grouping.value = "module";
    grouping.dispatchEvent(new Event("change"));
    await el.updateComplete;
    ok(rows(el).length > 5 && rows(el).length < 60, `${rows(el).length} rows in the DOM`);
    equal(text(rows(el)[0]), "module.m0 357 resources");
  });

  describe("at two screen widths", () => {
    const long = planDiffFixture(3, (d) => {
      Object.assign(d.resources[1], {
        address: `module.a_very_long_module_name_for_phones.module.nested.aws_iam_role_policy_attachment.attachment_with_a_long_name["key"]`,
        after: { input: "x".repeat(300), password: { $stackship: "sensitive" }, id: { $stackship: "unknown" } },
      });
    });
    afterEach(() => setViewport({ width: 800, height: 600 }));

    for (const width of [1280, 1100]) {
      it(`should put the detail beside the list at ${width} px`, async () => {
        await setViewport({ width, height: 800 });
        const el = await changes(serve(long));
        ok(visibleBox(resourceRows(el)[0].querySelector(".provider")!), "the provider shows while no detail is open");
        await open(el, "terraform_data.item[2]");
        ok(
          !visibleBox(resourceRows(el)[0].querySelector(".provider")!),
          "beside the detail the row keeps its width for the address",
        );
        const list = el.shadowRoot!.querySelector('[data-testid="changes-viewport"]')!.getBoundingClientRect();
        const detail = el.shadowRoot!.querySelector('[data-testid="changes-detail"]')!.getBoundingClientRect();
        ok(detail.left >= list.right, `detail at ${detail.left}, list ends at ${list.right}`);
        ok(Math.abs(detail.top - list.top) < 2, "side by side");
        ok(document.documentElement.scrollWidth <= innerWidth);
      });
    }

    it("should put the detail under the list below 1100 px", async () => {
      await setViewport({ width: 1099, height: 800 });
      const el = await changes(serve(long));
      await open(el, "terraform_data.item[2]");
      const list = el.shadowRoot!.querySelector('[data-testid="changes-viewport"]')!.getBoundingClientRect();
      const detail = el.shadowRoot!.querySelector('[data-testid="changes-detail"]')!.getBoundingClientRect();
      ok(detail.top >= list.bottom, "under the list");
    });

    it("should lead each row with the address at 390 px, and nothing overflows", async () => {
      await setViewport({ width: 390, height: 800 });
      const el = await changes(serve(long));
      for (const row of resourceRows(el)) {
        const address = row.querySelector(".address")!;
        const action = row.querySelector(".action")!;
        ok(visibleBox(address) && visibleBox(action), "address and action both visible");
        const a = address.getBoundingClientRect();
        ok(
          a.left <= action.getBoundingClientRect().left && a.left - row.getBoundingClientRect().left < 16,
          `${text(address)} first`,
        );
        ok(row.getBoundingClientRect().right <= innerWidth);
      }
      await open(el, resourceRows(el)[1].querySelector(".address")!.textContent);
      const detail = el.shadowRoot!.querySelector('[data-testid="changes-detail"]')!;
      ok(
        detail.getBoundingClientRect().top >=
          el.shadowRoot!.querySelector('[data-testid="changes-viewport"]')!.getBoundingClientRect().bottom,
      );
      ok(
        document.documentElement.scrollWidth <= innerWidth,
        `scrollWidth ${document.documentElement.scrollWidth} > ${innerWidth}`,
      );
    });
  });
});
