import { equal, match, ok } from "../../test/support/assert.ts";
import { deep, text, until } from "../../test/support/dom.ts";
import { cleanup, FakeServer, errorAnswer } from "../../test/support/fake-server.ts";
import { planDiffFixture, RUN_ID } from "../../test/support/fixtures.ts";
import { changes, detailRows, open, resourceRows, rowOf, rows, serve } from "../../test/support/plan-changes.ts";

describe("ss-plan-changes", () => {
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
    await until(() => rows(el).some((r) => text(r).includes("terraform_data.item[4999]")), "the last row");
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
    const focusedAddress = () => text((el.shadowRoot!.activeElement as HTMLElement).querySelector(".address"));
    const key = async (k: string, address: string) => {
      (el.shadowRoot!.activeElement as HTMLElement).dispatchEvent(
        new KeyboardEvent("keydown", { key: k, bubbles: true, composed: true }),
      );
      await until(() => focusedAddress() === address, `${k} to focus ${address}`);
    };
    await key("ArrowDown", "terraform_data.item[1]");
    await key("End", "terraform_data.item[4999]");
    ok(rows(el).length < 60, "still virtualized");
    await key("ArrowUp", "terraform_data.item[4998]");
    await key("Home", "terraform_data.item[0]");
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
});
