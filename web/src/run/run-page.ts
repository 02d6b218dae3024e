import { consume, provide } from "@lit/context";
import { Task, TaskStatus } from "@lit/task";
import { getRunReview, type Client } from "@stackship/client";
import { LitElement, html, nothing, type PropertyValues } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import { base } from "../ui/tokens.ts";
import { RequestFailed, asFailure, unwrap } from "./api-result.ts";
import type { RunActionDoneDetail } from "./events.ts";
import { liveContext, type LiveHandle } from "./live-context.ts";
import { RunLiveFeed, liveUrl, type LiveFeedOptions, type SocketLike } from "./live-feed.ts";
import { isTerminal, type Review } from "./review-model.ts";
import { runPageStyles } from "./run-page.styles.ts";
import "./attention-strip.ts";
import "./guidance-strip.ts";
import "./recovery-panel.ts";
import "./run-downloads.ts";
import "./run-header.ts";
import "./stage-timeline.ts";
import "./terminal-reason.ts";

const ANNOUNCEMENTS: Record<RunActionDoneDetail["action"], string> = {
  approve: "Plan approved. The apply starts shortly.",
  discard: "Run discarded.",
  cancel: "Cancel requested.",
  override: "Policy override recorded.",
  recover: "Recovery resolved.",
  resolve: "Recovery resolved.",
};

/** How often the review is polled while the live feed is down after repeated failures. */
export const REVIEW_POLL_MS = 5000;
/** How long the page may be hidden before its socket is closed (reopened when visible). */
export const HIDDEN_CLOSE_MS = 60_000;

/**
 * The run page, top to bottom as commit identity, then decision, then evidence: the header (with
 * the terminal reason), the approval bar or a guidance strip in its place, the recovery panel, the
 * stage timeline, and the downloads. Everything comes from `GET /v1/runs/{run_id}/review`, read
 * with @lit/task (pending, complete and error rendered explicitly), again at once after any
 * action the page took, and again (once per burst) when the live feed reports a change. A run
 * not terminal when its review is first read gets one live feed (live-feed.ts), given to the
 * consoles through `liveContext`; after repeated socket failures the header shows a quiet
 * "Reconnecting — data may be stale" note and the review is polled until the socket recovers.
 *
 * @summary The review surface of one run.
 */
@customElement("ss-run-page")
export class SsRunPage extends LitElement {
  static override styles = [base, runPageStyles];
  /** Feed options every page starts from (component tests put a fake WebSocket here). */
  static liveDefaults: Partial<LiveFeedOptions> = {};
  /** The review poll interval while the feed is stale (component tests shorten it). */
  static pollMs = REVIEW_POLL_MS;
  /** How long the page may be hidden before its socket closes (component tests shorten it). */
  static hiddenCloseMs = HIDDEN_CLOSE_MS;

  @consume({ context: apiContext, subscribe: true })
  @state()
  accessor client!: Client;

  /** The run to show. */
  @property({ attribute: "run-id" }) accessor runId = "";

  /** The last review read successfully (kept while the next read is under way or failed). */
  @state() accessor review: Review | null = null;
  @state() accessor now = Date.now();
  @state() private accessor generation = 0;
  /** What the last action did, announced politely (focus is not moved: the control that had it may be gone). */
  @state() accessor announcement = "";
  /** The live feed, for the consoles (null: none opened, e.g. the run was terminal at load). */
  @provide({ context: liveContext })
  @state()
  accessor live: LiveHandle | null = null;
  /** The live feed failed repeatedly; the review is polled meanwhile. */
  @state() accessor stale = false;
  /** Feed options for tests (a fake WebSocket, short delays). */
  @property({ attribute: false }) accessor liveOptions: Partial<LiveFeedOptions> & {
    createSocket?: (url: string) => SocketLike;
  } = {};

  private pollTimer: ReturnType<typeof setTimeout> | undefined;
  private tickTimer: ReturnType<typeof setInterval> | undefined;
  private hiddenTimer: ReturnType<typeof setTimeout> | undefined;
  /** The run whose first review decided whether a feed opens. */
  private decidedFor = "";

  readonly reviewTask = new Task(this, {
    args: () => [this.client, this.runId, this.generation] as const,
    task: async ([client, runId], { signal }) => {
      if (!client || !runId) return null;
      const document = unwrap(await getRunReview({ client, path: { run_id: runId }, signal }));
      // The review of another run than the one asked for is a broken answer, not this run's evidence.
      if (document.data.id !== runId)
        throw new RequestFailed(0, null, `the server answered with the review of ${document.data.id}, not ${runId}`);
      this.review = document.data;
      return document.data;
    },
  });

  protected override willUpdate(changed: PropertyValues<this>) {
    if (changed.has("runId") && changed.get("runId") !== undefined) {
      this.review = null;
      this.closeFeed();
      this.decidedFor = "";
    }
    const review = this.review;
    if (review && review.id === this.runId) {
      const terminal = isTerminal(review.attributes.header.status);
      if (this.decidedFor !== this.runId) {
        this.decidedFor = this.runId;
        if (!terminal) this.openFeed();
      } else if (terminal && this.live && !this.live.feed.state.stopped) {
        this.live.feed.stop();
      }
    }
  }

  private openFeed() {
    const feed = new RunLiveFeed({
      url: liveUrl(this.runId),
      onReviewChanged: () => {
        if (this.isConnected) this.refresh();
      },
      onState: (state) => {
        this.live = { feed, live: state.live };
        this.stale = state.stale;
      },
      ...SsRunPage.liveDefaults,
      ...this.liveOptions,
    });
    this.live = { feed, live: false };
    if (document.visibilityState !== "hidden") feed.start();
    else this.onVisibility();
  }

  private closeFeed() {
    this.live?.feed.stop();
    this.live = null;
    this.stale = false;
  }

  private readonly onVisibility = () => {
    const feed = this.live?.feed;
    if (!feed) return;
    if (document.visibilityState === "hidden") {
      if (this.hiddenTimer === undefined) this.hiddenTimer = setTimeout(() => feed.suspend(), SsRunPage.hiddenCloseMs);
    } else {
      clearTimeout(this.hiddenTimer);
      this.hiddenTimer = undefined;
      if (!feed.state.stopped && !feed.state.live) {
        feed.start();
        this.refresh();
      }
    }
  };

  protected override updated() {
    this.schedule();
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    document.removeEventListener("visibilitychange", this.onVisibility);
    clearTimeout(this.hiddenTimer);
    this.hiddenTimer = undefined;
    this.live?.feed.suspend(false);
    clearTimeout(this.pollTimer);
    clearInterval(this.tickTimer);
    this.pollTimer = undefined;
    this.tickTimer = undefined;
  }

  override connectedCallback() {
    super.connectedCallback();
    document.addEventListener("visibilitychange", this.onVisibility);
    if (this.hasUpdated) {
      this.live?.feed.start();
      this.schedule();
    }
  }

  /** Ticks while the run is not terminal; polls the review only while the live feed is stale. */
  private schedule() {
    const moving = this.review !== null && !isTerminal(this.review.attributes.header.status);
    if (moving && this.tickTimer === undefined) this.tickTimer = setInterval(() => (this.now = Date.now()), 1000);
    if (!moving && this.tickTimer !== undefined) {
      clearInterval(this.tickTimer);
      this.tickTimer = undefined;
      this.now = Date.now();
    }
    const settled = this.reviewTask.status === TaskStatus.COMPLETE || this.reviewTask.status === TaskStatus.ERROR;
    if (moving && this.stale && settled && this.pollTimer === undefined) {
      this.pollTimer = setTimeout(() => {
        this.pollTimer = undefined;
        if (this.isConnected) this.refresh();
      }, SsRunPage.pollMs);
    }
  }

  /** Reads the review again now. */
  refresh() {
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    this.generation++;
  }

  override render() {
    const review = this.review;
    const status = this.reviewTask.status;
    if (review === null || review.id !== this.runId) {
      if (status === TaskStatus.ERROR)
        return html`<div class="page">${this.renderUnavailable(asFailure(this.reviewTask.error))}</div>`;
      return html`<div class="page"><p class="muted" role="status" data-testid="run-loading">Loading the run…</p></div>`;
    }
    return html`<div class="page" @ss-run-action-done=${this.onActionDone} @ss-run-refresh=${() => this.refresh()}>
      <p class="visually-hidden" role="status" data-testid="run-announcement">${this.announcement}</p>
      ${
        status === TaskStatus.ERROR
          ? html`<p class="notice attention stale" role="status" data-testid="review-stale">
            The latest read of this run failed (${asFailure(this.reviewTask.error).detail}); what you see may be stale.
            <button type="button" @click=${() => this.refresh()}>Try again</button>
          </p>`
          : nothing
      }
      ${this.renderReview(review)}
    </div>`;
  }

  private onActionDone(event: CustomEvent<RunActionDoneDetail>) {
    this.announcement = ANNOUNCEMENTS[event.detail.action];
    this.refresh();
  }

  private renderUnavailable(error: RequestFailed) {
    const missing = error.status === 404;
    return html`<section class="notice ${missing ? "" : "danger"} unavailable" data-testid="run-unavailable" role="alert">
      <h1>${missing ? "Run not found" : "This run is unavailable"}</h1>
      <p>
        ${
          missing
            ? html`No run <code>${this.runId}</code> exists that you may see.`
            : html`The run could not be read right now: ${error.detail}. This is not an empty run; try again.`
        }
      </p>
      ${error.summary ? html`<p class="muted"><code>${error.summary}</code></p>` : nothing}
      ${missing ? html`<p><a href="/runs">All runs</a></p>` : html`<p><button type="button" @click=${() => this.refresh()}>Try again</button></p>`}
    </section>`;
  }

  private renderReview(review: Review) {
    const a = review.attributes;
    const reason = a.terminal_reason;
    const guidance = reason?.state === "recorded" ? reason.guidance : null;
    return html`<ss-run-header .header=${a.header} .actions=${a.available_actions} now=${this.now} ?stale=${this.stale}></ss-run-header>
      <ss-terminal-reason .reason=${reason} .approval=${a.stages.approval}></ss-terminal-reason>
      ${
        guidance
          ? html`<ss-guidance-strip .guidance=${guidance}></ss-guidance-strip>`
          : html`<ss-attention-strip
            run-id=${review.id}
            .actions=${a.available_actions}
            .approval=${a.stages.approval}
            .plan=${a.stages.plan}
            .policy=${a.stages.policy}
          ></ss-attention-strip>`
      }
      ${a.recovery ? html`<ss-recovery-panel run-id=${review.id} .recovery=${a.recovery} .actions=${a.available_actions}></ss-recovery-panel>` : nothing}
      <ss-stage-timeline run-id=${review.id} .stages=${a.stages} .header=${a.header} .actions=${a.available_actions} now=${this.now}></ss-stage-timeline>
      <ss-run-downloads run-id=${review.id} .downloads=${a.downloads}></ss-run-downloads>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-run-page": SsRunPage;
  }
}
