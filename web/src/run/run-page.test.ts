import { equal, match, ok } from "../../test/support/assert.ts";
import { deep, deepAll, text, until } from "../../test/support/dom.ts";
import { cleanup, errorAnswer, FakeServer } from "../../test/support/fake-server.ts";
import { NEEDS_TAGS_FINDING, reviewFixture, RUN_ID, WS_ID } from "../../test/support/fixtures.ts";
import {
  fakeLiveFeed,
  logAnswer,
  planning,
  REVIEW,
  reviewedPage,
  stage,
  withReview,
} from "../../test/support/run-page.ts";
import type { Review, TerminalReason } from "./review-model.ts";

fakeLiveFeed();

/** The review of a run that ended in `status`, with no actions left and the recorded terminal reason (no log tail). */
const endedWith = (
  status: Review["attributes"]["header"]["status"],
  reason: Pick<Extract<TerminalReason, { state: "recorded" }>, "code" | "sentence" | "guidance">,
) =>
  withReview(
    reviewFixture((r) => {
      r.attributes.header.status = status;
      r.attributes.available_actions = [];
      r.attributes.terminal_reason = { state: "recorded", ...reason, log_tail: null };
    }),
  );
const head = (stageEl: HTMLElement) => stageEl.shadowRoot!.querySelector<HTMLElement>('[data-testid="stage-head"]')!;

describe("ss-run-page", () => {
  it("should render an unavailable review as unavailable (with a retry), never as an empty run", async () => {
    const server = new FakeServer().on(REVIEW, errorAnswer(503, "STORE_UNAVAILABLE", "The database is not answering."));
    const el = await reviewedPage(server);
    const box = deep(el, '[data-testid="run-unavailable"]')!;
    match(text(box), /This run is unavailable.*The database is not answering.*HTTP 503 · STORE_UNAVAILABLE/);
    ok([...box.querySelectorAll("button")].some((b) => b.textContent === "Try again"));
    equal(deep(el, "ss-stage-timeline"), null);
    cleanup();
    const missing = await reviewedPage(new FakeServer().on(REVIEW, errorAnswer(404, "NOT_FOUND")));
    match(text(deep(missing, '[data-testid="run-unavailable"]')), /Run not found/);
  });

  it("should show the review of another run as unavailable, not load forever or show it", async () => {
    const el = await reviewedPage(withReview(reviewFixture((r) => void (r.id = "run-someoneelse000000"))));
    match(
      text(deep(el, '[data-testid="run-unavailable"]')),
      /This run is unavailable.*review of run-someoneelse000000/,
    );
    equal(deep(el, "ss-stage-timeline"), null);
  });

  it("should read top to bottom: header, attention strip, stages, downloads; with the header facts", async () => {
    const el = await reviewedPage(
      withReview(
        reviewFixture((r) => {
          r.attributes.header.commit_message = { state: "recorded", value: "Add the greeting resource" };
          r.attributes.header.commit_sha = { state: "recorded", value: "0123456789abcdef0123456789abcdef01234567" };
          r.attributes.header.commit_url = {
            state: "recorded",
            value: "https://github.com/acme/infra/commit/0123456789abcdef0123456789abcdef01234567",
          };
        }),
      ),
    );
    const order = [...el.shadowRoot!.querySelector(".page")!.children]
      .filter((c) => c.tagName !== "P")
      .map((c) => c.tagName.toLowerCase());
    equal(order, [
      "ss-run-header",
      "ss-terminal-reason",
      "ss-attention-strip",
      "ss-stage-timeline",
      "ss-run-downloads",
    ]);
    const header = deep(el, "ss-run-header")!;
    const h = text(header);
    equal(text(deep(header.shadowRoot!, "#run-title")), "Add the greeting");
    ok(text(deep(header.shadowRoot!, '[data-testid="commit-message"]')) === "Add the greeting resource");
    ok(
      h.includes("Awaiting approval") &&
        h.includes("Plan and apply") &&
        h.includes("0123456789ab") &&
        h.includes(RUN_ID),
      h,
    );
    ok(!h.includes("Source ref"), "an unrecorded fact is not a row of its own");
    equal(
      text(deep(header.shadowRoot!, '[data-testid="not-recorded"]')),
      "Not recorded for this run: source ref, author.",
    );
    equal(
      text(deep(header.shadowRoot!, "nav.breadcrumb")),
      `Runs › ${text(deep(header.shadowRoot!, '[data-testid="breadcrumb-workspace"]'))} › ${RUN_ID}`,
    );
    equal(
      deep<HTMLAnchorElement>(header.shadowRoot!, '[data-testid="commit-link"]')!.getAttribute("href"),
      "https://github.com/acme/infra/commit/0123456789abcdef0123456789abcdef01234567",
    );
    equal(
      deep<HTMLAnchorElement>(header.shadowRoot!, '[data-testid="workspace-link"]')!.getAttribute("href"),
      `/workspaces/${WS_ID}`,
    );
    ok(deepAll(header.shadowRoot!, "button").some((b) => b.textContent === "Cancel run"));
  });

  it("should say “Plan not finished yet” while planning, and keep the attention badge for an unrecorded change result", async () => {
    const running = await reviewedPage(withReview(reviewFixture(planning)));
    const plan = stage(running, "plan");
    equal(text(deep(plan, '[data-testid="plan-summary"]')), "Plan not finished yet");
    equal(deep(plan, ".attention-badge"), null);
    equal(deep(running, '[data-testid="attention-strip"]'), null);
    cleanup();
    const unrecorded = await reviewedPage(
      withReview(reviewFixture((r) => (r.attributes.stages.plan.summary = { state: "change_result_not_recorded" }))),
    );
    equal(text(deep(stage(unrecorded, "plan"), ".attention-badge")), "Change result not recorded");
  });

  it("should dim a skipped stage and make it no toggle; load a console only on first expansion", async () => {
    const server = withReview(reviewFixture()).on(
      `GET /v1/runs/${RUN_ID}/logs/plan`,
      logAnswer("plan", { offset: 0, text: "Plan: 1 to add\n", next_offset: 15, complete: true }),
    );
    const el = await reviewedPage(server);
    const policy = stage(el, "policy");
    ok(policy.hasAttribute("skipped"));
    const look = getComputedStyle(policy.shadowRoot!.querySelector(".stage")!);
    equal(
      [look.borderStyle, look.opacity],
      ["dashed", "1"],
      "dimmed by a dashed, muted look, not by opacity (contrast stays readable)",
    );
    equal(policy.shadowRoot!.querySelector("button"), null, "not a toggle");
    equal(server.count(`GET /v1/runs/${RUN_ID}/logs/plan`), 0, "nothing read before expansion");
    const plan = stage(el, "plan");
    equal(head(plan).getAttribute("aria-expanded"), "false");
    head(plan).click();
    await until(() => deep(plan, '[data-testid="console-plan"]'), "the plan console");
    equal(text(deep(plan, '[data-testid="console-plan"]')), "Plan: 1 to add");
    head(plan).click();
    head(plan).click();
    await new Promise((r) => setTimeout(r, 50));
    equal(server.count(`GET /v1/runs/${RUN_ID}/logs/plan`), 1, "read once, on first expansion");
  });

  it("should keep a skipped stage neutral: no informational phase badge, a plain summary", async () => {
    const el = await reviewedPage(
      withReview(
        reviewFixture((r) => {
          r.attributes.header.status = "errored";
          r.attributes.available_actions = [];
          Object.assign(r.attributes.stages.plan, {
            status: "failed",
            phase_status: "errored",
            summary: { state: "not_produced" },
          });
          Object.assign(r.attributes.stages.policy, { status: "skipped", outcome: null, finished_at: null });
          Object.assign(r.attributes.stages.approval, { status: "skipped", state: "not_reached", plan_digest: null });
          Object.assign(r.attributes.stages.apply, { status: "skipped", phase_status: "pending" });
        }),
      ),
    );
    const apply = stage(el, "apply");
    ok(apply.hasAttribute("skipped"));
    equal(apply.querySelector("ss-phase-badge"), null, "no blue 'Apply pending' on a skipped stage");
    equal(text(apply.querySelector('[slot="summary"]')), "Not applied");
    equal(text(deep(stage(el, "policy"), '[data-testid="policy-summary"]')), "Not reached");
    equal(text(deep(stage(el, "plan"), '[data-testid="plan-summary"]')), "No plan was produced");
    equal(deep(stage(el, "plan"), "ss-phase-badge")!.getAttribute("status"), "errored");
  });

  it("should expand the policy stage when its outcome is not pass, and a terminal applied run's last succeeded stage", async () => {
    const soft = await reviewedPage(
      withReview(
        reviewFixture((r) => {
          r.attributes.header.status = "policy_soft_failed";
          Object.assign(r.attributes.stages.policy, {
            status: "waiting",
            outcome: "soft_failed",
            findings: [NEEDS_TAGS_FINDING],
          });
        }),
      ).on(`GET /v1/runs/${RUN_ID}/logs/policy`, {
        status: 200,
        body: {
          data: {
            type: "run-logs",
            id: "x",
            attributes: { phase: "policy", offset: 0, text: "", next_offset: 0, complete: true },
          },
        },
      }),
    );
    equal(head(stage(soft, "policy")).getAttribute("aria-expanded"), "true");
    match(
      text(deep(stage(soft, "policy"), '[data-testid="policy-findings"]')),
      /Needs tags.*terraform_data\.greeting is flagged/,
    );
    equal(deep(stage(soft, "policy"), '[data-testid="override-form"]'), null, "no control without override_control");
    cleanup();
    const applied = await reviewedPage(
      withReview(
        reviewFixture((r) => {
          r.attributes.header.status = "applied";
          r.attributes.header.finished_at = "2026-12-03T10:01:00.000Z";
          r.attributes.available_actions = [];
          Object.assign(r.attributes.stages.approval, {
            status: "succeeded",
            state: "approved",
            decided_by: { actor_id: "pr-0123456789abcdef", display_name: null },
            decided_at: "2026-12-03T10:00:30.000Z",
          });
          Object.assign(r.attributes.stages.apply, {
            status: "succeeded",
            phase_status: "finished",
            started_at: "2026-12-03T10:00:31.000Z",
            finished_at: "2026-12-03T10:00:50.000Z",
            state_version: {
              state: "committed",
              id: "sv-0123456789abcdef",
              serial: 3,
              published_at: "2026-12-03T10:00:49.000Z",
              digest: "b".repeat(64),
            },
          });
          r.attributes.terminal_reason = {
            state: "recorded",
            code: "applied",
            sentence: "The plan was applied and its state was published.",
            guidance: null,
            log_tail: null,
          };
        }),
      ).on(`GET /v1/runs/${RUN_ID}/logs/apply`, {
        status: 200,
        body: {
          data: {
            type: "run-logs",
            id: "x",
            attributes: { phase: "apply", offset: 0, text: "Apply complete!\n", next_offset: 16, complete: true },
          },
        },
      }),
    );
    const apply = stage(applied, "apply");
    equal(head(apply).getAttribute("aria-expanded"), "true");
    equal(
      text(deep(apply, '[data-testid="state-version"]')),
      "Published state version sv-0123456789abcdef, serial 3, at 2026-12-03 10:00:49 UTC",
    );
    ok(!text(apply).includes("b".repeat(64)), "the state digest belongs to the workspace state page");
    equal(deep(applied, '[data-testid="attention-strip"]'), null);
    const approval = stage(applied, "approval");
    head(approval).click();
    await until(() => deep(approval, '[data-testid="approval-lead"]'));
    const lead = deep(approval, '[data-testid="approval-lead"]')!;
    equal(text(lead), "Approved by pr-0123456789abcdef at 2026-12-03 10:00:30 UTC");
    ok(lead.querySelector("code"), "the actor id is monospace when no name is recorded");
  });

  it("should word a discarded, expired or canceled approval and a canceled plan plainly, not as a red failure, and open none of them by itself", async () => {
    const statusOf = (el: HTMLElement, name: string) =>
      stage(el, name).shadowRoot!.querySelector<HTMLElement>('[data-testid="stage-status"]')!;
    for (const [state, word] of [
      ["discarded", "Discarded"],
      ["expired", "Expired"],
      ["canceled", "Canceled"],
    ] as const) {
      const el = await reviewedPage(
        withReview(
          reviewFixture((r) => {
            r.attributes.header.status =
              state === "expired" ? "expired" : state === "canceled" ? "canceled" : "discarded";
            r.attributes.available_actions = [];
            Object.assign(r.attributes.stages.approval, { status: "failed", state });
          }),
        ),
      );
      equal(text(statusOf(el, "approval")), word);
      ok(statusOf(el, "approval").classList.contains("tone-neutral"), `${word} is neutral`);
      equal(
        head(stage(el, "approval")).getAttribute("aria-expanded"),
        "false",
        `${word}: not opened as if it were an error`,
      );
      cleanup();
    }
    // A run whose plan ended `status` (the run took the same status).
    const planEnded = (status: "canceled" | "errored") =>
      reviewedPage(
        withReview(
          reviewFixture((r) => {
            r.attributes.header.status = status;
            r.attributes.available_actions = [];
            Object.assign(r.attributes.stages.plan, { status: "failed", phase_status: status });
          }),
        ),
      );
    const canceled = await planEnded("canceled");
    equal(text(statusOf(canceled, "plan")), "Canceled");
    ok(statusOf(canceled, "plan").classList.contains("tone-neutral"));
    cleanup();
    // A real failure stays a failure, and opens at its error.
    const errored = await planEnded("errored");
    equal(text(statusOf(errored, "plan")), "Failed");
    ok(statusOf(errored, "plan").classList.contains("tone-danger"));
    equal(head(stage(errored, "plan")).getAttribute("aria-expanded"), "true");
  });

  it("should render an unknown run status or phase status as an explicit error", async () => {
    const el = await reviewedPage(
      withReview(
        reviewFixture((r) => {
          (r.attributes.header as { status: string }).status = "teleporting";
          (r.attributes.stages.apply as { phase_status: string }).phase_status = "paused";
        }),
      ),
    );
    match(text(deep(el, '[data-testid="run-status"]')), /Unknown run status “teleporting”/);
    const badge = deep(stage(el, "apply"), "ss-phase-badge")!;
    match(text(badge), /unknown status “paused”/);
  });

  it("should show the guidance strip in the approval bar's place, and the terminal reason with at most eight log lines", async () => {
    const el = await reviewedPage(
      endedWith("expired", {
        code: "approval_expired",
        sentence: "No decision was made before the approval window closed, so the run expired without applying.",
        guidance: {
          code: "expired",
          sentence: "A new run starts from a push to the tracked branch or from the CLI.",
          target: "workspace_source_settings",
          workspace_id: WS_ID,
        },
      }),
    );
    const order = [...el.shadowRoot!.querySelector(".page")!.children]
      .filter((c) => c.tagName !== "P")
      .map((c) => c.tagName.toLowerCase());
    equal(order.slice(0, 3), ["ss-run-header", "ss-terminal-reason", "ss-guidance-strip"]);
    const strip = deep(el, '[data-testid="guidance-strip"]')!;
    match(text(strip), /A new run starts from a push to the tracked branch or from the CLI\./);
    equal(strip.querySelector("a")!.getAttribute("href"), `/workspaces/${WS_ID}/source`);
    equal(text(deep(el, '[data-testid="terminal-reason-code"]')), "approval_expired");
    cleanup();
    const credentials = await reviewedPage(
      endedWith("plan_credentials_required", {
        code: "plan_credentials_required",
        sentence: "The plan could not start.",
        guidance: {
          code: "plan_credentials_required",
          sentence: "Set up the workspace's cloud access, then start a new run.",
          target: "workspace_cloud_access",
          workspace_id: WS_ID,
        },
      }),
    );
    equal(
      deep(credentials, '[data-testid="guidance-strip"] a')!.getAttribute("href"),
      `/workspaces/${WS_ID}/cloud-access`,
    );
    cleanup();
    const failed = await reviewedPage(
      withReview(
        reviewFixture((r) => {
          r.attributes.header.status = "errored";
          r.attributes.terminal_reason = {
            state: "recorded",
            code: "plan_failed",
            sentence: "The plan failed, so there is nothing to review or apply.",
            guidance: null,
            log_tail: {
              phase: "plan",
              caption: "The last lines of the plan log",
              lines: ["1", "2", "3", "4", "5", "6", "7", "Error: boom"],
            },
          };
        }),
      ),
    );
    const tail = deep(failed, '[data-testid="log-tail"]')!;
    equal(text(tail.querySelector("figcaption")), "The last lines of the plan log");
    equal(tail.querySelector("pre")!.textContent.split("\n").length, 8);
    ok(tail.querySelector("pre")!.classList.contains("ink"));
  });
});
