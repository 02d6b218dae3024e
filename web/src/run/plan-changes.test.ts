import {
  afterEach,
  cleanup,
  deep,
  describe,
  equal,
  FakeServer,
  it,
  match,
  mount,
  ok,
  planDiffFixture,
  RUN_ID,
  text,
  until,
  errorAnswer,
} from "../../test/support/components.ts";
import { sendKeys, setViewport } from "@web/test-runner-commands";
import type { PlanDiff, PlanDiffResource } from "@stackship/client";
import type { SsPlanChanges } from "./plan-changes.ts";
import "./plan-changes.ts";

async function changes(server: FakeServer) {
  const el = document.createElement("ss-plan-changes");
  el.runId = RUN_ID;
  await mount(server, el);
  await el.changes.taskComplete.catch(() => undefined);
  await el.updateComplete;
  return el;
}

const rows = (el: HTMLElement) => [...el.shadowRoot!.querySelectorAll('[role="listitem"]')];
const resourceRows = (el: HTMLElement) => [...el.shadowRoot!.querySelectorAll<HTMLElement>(".row.resource")];
const rowOf = (el: HTMLElement, address: string) =>
  resourceRows(el).find((r) => text(r.querySelector(".address")) === address)!;
const serve = (diff: PlanDiff) =>
  new FakeServer().on(`GET /v1/runs/${RUN_ID}/plan-changes`, {
    status: 200,
    body: diff,
    contentType: "application/json",
  });
const detailRows = (el: HTMLElement) =>
  [...el.shadowRoot!.querySelectorAll('[data-testid="changes-detail"] tbody tr')].map((tr) =>
    [...tr.querySelectorAll("td")].map((td) => text(td)),
  );
async function open(el: SsPlanChanges, address: string) {
  rowOf(el, address).querySelector<HTMLButtonElement>("button.open")!.click();
  await el.updateComplete;
}
const visibleBox = (el: Element) => {
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
};

describe("ss-plan-changes", () => {
  afterEach(cleanup);

  it("should keep a 5,000-resource list virtualized: only the rows in view exist, and scrolling brings the others", async () => {
    const server = new FakeServer().on(`GET /v1/runs/${RUN_ID}/plan-changes`, {
      status: 200,
      body: planDiffFixture(5000),
      contentType: "application/json",
    });
    const el = await changes(server);
    equal(text(el.shadowRoot!.querySelector('[data-testid="changes-count"]')), "5000 of 5000 resources shown");
    const before = rows(el);
    ok(before.length > 5 && before.length < 60, `${before.length} rows in the DOM`);
    equal(before[0].getAttribute("aria-setsize"), "5000");
    const viewport = el.shadowRoot!.querySelector<HTMLElement>(".viewport")!;
    viewport.scrollTop = 4990 * 32;
    viewport.dispatchEvent(new Event("scroll"));
    await until(() => rows(el).some((r) => text(r).includes("terraform_data.item[4999]")), 2000, "the last row");
    ok(rows(el).length < 60);
  });

  it("should move through all 5,000 rows with the keyboard: one tab stop, arrows, End and Home", async () => {
    const server = new FakeServer().on(`GET /v1/runs/${RUN_ID}/plan-changes`, {
      status: 200,
      body: planDiffFixture(5000),
      contentType: "application/json",
    });
    const el = await changes(server);
    const stops = [...el.shadowRoot!.querySelectorAll<HTMLButtonElement>('[role="listitem"] button')].filter(
      (b) => b.tabIndex === 0,
    );
    equal(stops.length, 1, "the list is one tab stop");
    stops[0].focus();
    const key = async (k: string) => {
      (el.shadowRoot!.activeElement as HTMLElement).dispatchEvent(
        new KeyboardEvent("keydown", { key: k, bubbles: true, composed: true }),
      );
      await new Promise((r) => setTimeout(r, 30));
      await el.updateComplete;
    };
    const focusedAddress = () => text((el.shadowRoot!.activeElement as HTMLElement).querySelector(".address"));
    await key("ArrowDown");
    equal(focusedAddress(), "terraform_data.item[1]");
    await key("End");
    equal(focusedAddress(), "terraform_data.item[4999]");
    ok(rows(el).length < 60, "still virtualized");
    await key("ArrowUp");
    equal(focusedAddress(), "terraform_data.item[4998]");
    await key("Home");
    equal(focusedAddress(), "terraform_data.item[0]");
  });

  it("should filter by action and by address", async () => {
    const server = new FakeServer().on(`GET /v1/runs/${RUN_ID}/plan-changes`, {
      status: 200,
      body: planDiffFixture(5000),
      contentType: "application/json",
    });
    const el = await changes(server);
    const select = el.shadowRoot!.querySelector("select")!;
    ok(
      [...select.options].some((o) => o.textContent === "replace (1250)"),
      "replace is its own class with its count",
    );
    select.value = "replace";
    select.dispatchEvent(new Event("change"));
    await el.updateComplete;
    equal(text(el.shadowRoot!.querySelector('[data-testid="changes-count"]')), "1250 of 5000 resources shown");
    ok(
      rows(el).every((r) => text(r).startsWith("∓ replace terraform_data.item[")),
      text(rows(el)[0]),
    );
    const input = el.shadowRoot!.querySelector<HTMLInputElement>('input[type="search"]')!;
    input.value = "item[4999]";
    input.dispatchEvent(new Event("input"));
    await el.updateComplete;
    equal(text(el.shadowRoot!.querySelector('[data-testid="changes-count"]')), "1 of 5000 resources shown");
    input.value = "nothing-like-this";
    input.dispatchEvent(new Event("input"));
    await el.updateComplete;
    equal(text(el.shadowRoot!.querySelector('[data-testid="changes-empty"]')), "No resource matches these filters.");
  });

  it("should show attribute-level before/after with sensitive values redacted, unknown values marked and replacement causes", async () => {
    const server = new FakeServer().on(`GET /v1/runs/${RUN_ID}/plan-changes`, {
      status: 200,
      body: planDiffFixture(4),
      contentType: "application/json",
    });
    const el = await changes(server);
    (rows(el)[3].querySelector("button") as HTMLButtonElement).click();
    await el.updateComplete;
    const detail = el.shadowRoot!.querySelector('[data-testid="changes-detail"]')!;
    const t = text(detail);
    ok(t.includes("terraform_data.item[3]") && t.includes("delete, create"), t);
    const table = [...detail.querySelectorAll("tbody tr")].map((tr) =>
      [...tr.querySelectorAll("td")].map((td) => text(td)),
    );
    equal(table, [
      ["+id added", "—", "(known after apply)"],
      ["~input changed forces replacement", '"old-3"', '"new-3"'],
      ["password", "(sensitive value)", "(sensitive value)"],
    ]);
    ok(!t.includes("old-3-secret"));
  });

  it("should state truncation and withheld detail", async () => {
    const diff = planDiffFixture(2, (d) => {
      d.truncated = true;
      d.truncation = { ...d.truncation, changed_resources: 6200, cut: 1200, withheld: 1, dropped: 0 };
      Object.assign(d.resources[0], { detail_withheld: true, withheld_reason: "size_limit" });
      delete (d.resources[0] as { before?: unknown }).before;
      delete (d.resources[0] as { after?: unknown }).after;
    });
    const server = new FakeServer().on(`GET /v1/runs/${RUN_ID}/plan-changes`, {
      status: 200,
      body: diff,
      contentType: "application/json",
    });
    const el = await changes(server);
    match(
      text(el.shadowRoot!.querySelector('[data-testid="changes-truncated"]')),
      /truncated: the plan changes 6,200 resources; 1200 cut beyond the 5,000-resource limit, 1 with their before\/after detail withheld to fit 4 MiB/,
    );
    (rows(el)[0].querySelector("button") as HTMLButtonElement).click();
    await el.updateComplete;
    match(text(deep(el.shadowRoot!, '[data-testid="detail-withheld"]')), /withheld: the change list had to fit 4 MiB/);
  });

  it("should say the plan has not finished, or produced nothing, instead of an empty list", async () => {
    const notReady = await changes(
      new FakeServer().on(`GET /v1/runs/${RUN_ID}/plan-changes`, errorAnswer(409, "RUN_PLAN_CHANGES_NOT_READY")),
    );
    ok(notReady.shadowRoot!.querySelector('[data-testid="changes-not-ready"]'));
    cleanup();
    const none = await changes(
      new FakeServer().on(`GET /v1/runs/${RUN_ID}/plan-changes`, errorAnswer(404, "RUN_PLAN_CHANGES_UNAVAILABLE")),
    );
    ok(none.shadowRoot!.querySelector('[data-testid="changes-unavailable"]'));
    cleanup();
    const broken = await changes(
      new FakeServer().on(`GET /v1/runs/${RUN_ID}/plan-changes`, errorAnswer(500, "INTERNAL", "boom")),
    );
    match(
      text(broken.shadowRoot!.querySelector('[data-testid="changes-error"]')),
      /could not be read: boom HTTP 500 · INTERNAL/,
    );
  });

  it("should show a nested value that becomes unknown once, as {…} or […] → (known after apply), never its children removed", async () => {
    const diff = planDiffFixture(4, (d) => {
      Object.assign(d.resources[1], {
        before: { input: "same", tags: { env: "prod", team: "core" }, ports: [80, 443] },
        after: { input: "same", tags: { $stackship: "unknown" }, ports: { $stackship: "unknown" } },
      });
    });
    const el = await changes(serve(diff));
    await open(el, "terraform_data.item[1]");
    equal(detailRows(el), [
      ["~ports changed", "[…]", "(known after apply)"],
      ["~tags changed", "{…}", "(known after apply)"],
    ]);
    const t = text(el.shadowRoot!.querySelector('[data-testid="changes-detail"]'));
    ok(!t.includes("removed") && !t.includes("tags.env") && !t.includes('"prod"'), t);
  });

  it("should fold unchanged attributes behind 'n unchanged attributes' and unfold them on request", async () => {
    const diff = planDiffFixture(4, (d) => {
      Object.assign(d.resources[1], {
        before: { input: "old", keep: "same", nested: { a: 1, b: [true] }, password: { $stackship: "sensitive" } },
        after: { input: "new", keep: "same", nested: { a: 1, b: [true] }, password: { $stackship: "sensitive" } },
      });
    });
    const el = await changes(serve(diff));
    await open(el, "terraform_data.item[1]");
    // The sensitive value cannot be compared, so it stays in view; the three equal values fold.
    equal(detailRows(el), [
      ["~input changed", '"old"', '"new"'],
      ["password", "(sensitive value)", "(sensitive value)"],
    ]);
    const fold = el.shadowRoot!.querySelector<HTMLButtonElement>('[data-testid="changes-unchanged"]')!;
    equal(text(fold), "Show 3 unchanged attributes");
    equal(fold.getAttribute("aria-expanded"), "false");
    fold.click();
    await el.updateComplete;
    equal(detailRows(el), [
      ["~input changed", '"old"', '"new"'],
      ["keep", '"same"', '"same"'],
      ["nested.a", "1", "1"],
      ["nested.b[0]", "true", "true"],
      ["password", "(sensitive value)", "(sensitive value)"],
    ]);
    equal(text(fold), "Hide 3 unchanged attributes");
    equal(fold.getAttribute("aria-expanded"), "true");
  });

  it("should mark each resource with the CLI's symbol and its word, and not call every attribute of a create 'changed'", async () => {
    const el = await changes(serve(planDiffFixture(4)));
    equal(
      resourceRows(el).map((r) => text(r.querySelector(".action"))),
      ["+ create", "~ update", "− delete", "∓ replace"],
    );
    // The symbol is decoration: the row's accessible name starts with the word.
    equal(rowOf(el, "terraform_data.item[1]").querySelector(".sym")!.getAttribute("aria-hidden"), "true");
    await open(el, "terraform_data.item[0]");
    equal(detailRows(el), [
      ["+id", "—", "(known after apply)"],
      ["+input", "—", '"new-0"'],
      ["+password", "—", "(sensitive value)"],
    ]);
    await open(el, "terraform_data.item[2]");
    equal(detailRows(el), [
      ["−input", '"old-2"', "—"],
      ["−password", "(sensitive value)", "—"],
    ]);
    await open(el, "terraform_data.item[1]");
    equal(detailRows(el), [
      ["+id added", "—", "(known after apply)"],
      ["~input changed", '"old-1"', '"new-1"'],
      ["password", "(sensitive value)", "(sensitive value)"],
    ]);
  });

  it("should filter by attribute names and shown values as well as by address, never by a redacted value", async () => {
    const diff = planDiffFixture(20, (d) => {
      Object.assign(d.resources[5], {
        after: { input: "new-5", password: { $stackship: "sensitive" }, tags: { owner: "team-zebra" } },
      });
    });
    const el = await changes(serve(diff));
    const input = el.shadowRoot!.querySelector<HTMLInputElement>('input[type="search"]')!;
    const search = async (value: string) => {
      input.value = value;
      input.dispatchEvent(new Event("input"));
      await el.updateComplete;
      return text(el.shadowRoot!.querySelector('[data-testid="changes-count"]'));
    };
    equal(await search("team-zebra"), "1 of 20 resources shown");
    equal(text(resourceRows(el)[0].querySelector(".address")), "terraform_data.item[5]");
    equal(await search("tags.owner"), "1 of 20 resources shown");
    equal(await search("OLD-17"), "1 of 20 resources shown");
    equal(text(resourceRows(el)[0].querySelector(".address")), "terraform_data.item[17]");
    equal(await search("password"), "20 of 20 resources shown");
    equal(await search("sensitive"), "0 of 20 resources shown");
    equal(await search("item[12]"), "1 of 20 resources shown");
  });

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
      await until(() => text(copy) === "Copied", 2000, "Copied");
      equal(copied, ["terraform_data.item[2]"]);
      equal(text(el.shadowRoot!.querySelector('[data-testid="changes-copy-status"]')), "Copied terraform_data.item[2]");
      equal(el.selected, null, "copying does not open the detail");
      await open(el, "terraform_data.item[3]");
      const detailCopy = el.shadowRoot!.querySelector<HTMLButtonElement>('[data-testid="changes-detail"] button.copy')!;
      equal(detailCopy.tabIndex, 0, "the detail's copy button is reachable with Tab");
      detailCopy.click();
      await until(() => text(detailCopy) === "Copied", 2000, "Copied in the detail");
      equal(copied, ["terraform_data.item[2]", "terraform_data.item[3]"]);
      fail = true;
      detailCopy.click();
      await until(
        () =>
          text(el.shadowRoot!.querySelector('[data-testid="changes-copy-status"]')) ===
          "Could not copy terraform_data.item[3]",
        2000,
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
    await until(
      () => !el.shadowRoot!.querySelector('[data-testid="changes-detail"]'),
      2000,
      "Escape closes the detail",
    );
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
