import { equal, ok } from "../../test/support/assert.ts";
import { deep, deepAll, text, until } from "../../test/support/dom.ts";
import { reviewFixture, RUN_ID } from "../../test/support/fixtures.ts";
import { fakeLiveFeed, reviewedPage, withReview } from "../../test/support/run-page.ts";

fakeLiveFeed();
// The run page's header and terminal reason, as the page shows them.

describe("ss-run-header", () => {
  it("should title the run with its message's first line, the rest below, and say when everything is recorded", async () => {
    const el = await reviewedPage(
      withReview(
        reviewFixture((r) => {
          r.attributes.header.title = "Rotate the DNS keys\n\nThe old keys expire on Friday.\nSee the runbook.";
          r.attributes.header.commit_sha = { state: "recorded", value: "0123456789abcdef0123456789abcdef01234567" };
          r.attributes.header.source_ref = { state: "recorded", value: "refs/heads/main" };
          r.attributes.header.working_directory = { state: "recorded", value: "" };
          r.attributes.header.commit_author = { state: "recorded", value: "Ada" };
        }),
      ),
    );
    const header = deep(el, "ss-run-header")!;
    equal(text(deep(header.shadowRoot!, "#run-title")), "Rotate the DNS keys");
    equal(
      deep(header.shadowRoot!, '[data-testid="message-body"]')!.textContent,
      "The old keys expire on Friday.\nSee the runbook.",
    );
    equal(deep(header.shadowRoot!, '[data-testid="not-recorded"]'), null, "nothing to say when every fact is recorded");
    ok(text(header).includes("Source refrefs/heads/main"), text(header));
  });

  it("should offer Cancel run as a secondary control that confirms before it sends", async () => {
    const server = withReview(
      reviewFixture((r) => {
        r.attributes.header.status = "planning";
        r.attributes.available_actions = ["cancel"];
      }),
    ).on(`POST /v1/runs/${RUN_ID}/actions/cancel`, { status: 202, body: {} });
    const el = await reviewedPage(server);
    const header = deep(el, "ss-run-header")!;
    const cancel = deepAll<HTMLButtonElement>(header.shadowRoot!, "button").find(
      (b) => b.textContent === "Cancel run",
    )!;
    ok(cancel.classList.contains("secondary") && !cancel.classList.contains("danger"), cancel.className);
    cancel.click();
    await (header as unknown as { updateComplete: Promise<unknown> }).updateComplete;
    equal(server.count(`POST /v1/runs/${RUN_ID}/actions/cancel`), 0, "arming sends nothing");
    deepAll<HTMLButtonElement>(header.shadowRoot!, "button")
      .find((b) => b.textContent === "Yes, cancel run")!
      .click();
    await until(() => server.count(`POST /v1/runs/${RUN_ID}/actions/cancel`) === 1);
  });
});

describe("ss-terminal-reason", () => {
  it("should name who canceled, when and why, for a run canceled before its approval stage", async () => {
    const el = await reviewedPage(
      withReview(
        reviewFixture((r) => {
          r.attributes.header.status = "canceled";
          r.attributes.available_actions = [];
          r.attributes.terminal_reason = {
            state: "recorded",
            code: "canceled",
            sentence: "The run was canceled.",
            guidance: null,
            log_tail: null,
          } as never;
          Object.assign(r.attributes.stages.approval, {
            status: "skipped",
            state: "canceled",
            decided_by: { actor_id: "usr-0000000000000001", display_name: "Dana Reviewer" },
            decided_at: "2026-12-03T10:05:00.000Z",
            reason: "wrong branch",
          });
        }),
      ),
    );
    const reason = deep(el, "ss-terminal-reason")!;
    equal(
      text(deep(reason.shadowRoot!, '[data-testid="terminal-decision"]')),
      "Canceled by Dana Reviewer at 2026-12-03 10:05:00 UTC. Reason: wrong branch",
    );
  });
});
