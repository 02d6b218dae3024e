import { LitElement, html, nothing } from "lit";
import { customElement, property } from "lit/decorators.js";
import { base } from "../ui/tokens.ts";
import { emit, type StageToggleDetail } from "./events.ts";
import { icon } from "./icons.ts";
import { STAGE_STATUSES, STAGE_STATUS_LABELS, STAGE_TONES, known } from "./review-model.ts";
import { runStageStyles } from "./run-stage.styles.ts";

const NAMES = { plan: "Plan", policy: "Policy", approval: "Approval", apply: "Apply" } as const;

/**
 * One stage of the timeline: its name, its stage status (pending, running, succeeded, failed,
 * skipped or waiting; anything else is an explicit error), its duration and a one-line summary
 * (slot `summary`). A non-skipped stage is a toggle (a button with aria-expanded) revealing its
 * body (the default slot); a skipped stage is dimmed and neutral, and not a toggle.
 *
 * @summary A stage of the run timeline.
 * @slot summary - The stage's one-line summary beside its status.
 * @slot - The stage's console and evidence, shown while expanded.
 * @event ss-stage-toggle - The person expanded or collapsed the stage.
 */
@customElement("ss-run-stage")
export class SsRunStage extends LitElement {
  static override styles = [base, runStageStyles];

  @property() accessor stage: StageToggleDetail["stage"] = "plan";
  /** The stage status exactly as the review sent it. */
  @property() accessor status = "";
  /**
   * A more honest word for a "failed" stage that nobody got wrong (a discarded, expired or
   * canceled approval, a canceled plan): shown instead of "Failed", in a neutral tone.
   */
  @property() accessor outcome = "";
  /** The formatted duration, or empty when there is none to show. */
  @property() accessor duration = "";
  @property({ type: Boolean, reflect: true }) accessor expanded = false;
  @property({ type: Boolean, reflect: true }) accessor skipped = false;

  protected override willUpdate() {
    this.skipped = this.status === "skipped";
  }

  override render() {
    const status = known(STAGE_STATUSES, this.status);
    const tone = status === null ? "error" : this.outcome ? "neutral" : STAGE_TONES[status];
    const statusText =
      status === null ? `unknown status “${this.status}”` : this.outcome || STAGE_STATUS_LABELS[status];
    // Waiting is not a prohibition: the clock, in the attention colour.
    const glyph = status === "waiting" ? icon("info") : icon(tone);
    const bodyId = `stage-body-${this.stage}`;
    const inner = html`<span class="name">${this.skipped ? nothing : html`<span class="chevron" aria-hidden="true">▸</span>`}${NAMES[this.stage]}</span>
      <span class="status tone-${tone}" data-testid="stage-status">${glyph}${statusText}</span>
      <span class="summary"><slot name="summary"></slot></span>
      <span class="duration">${this.duration}</span>`;
    return html`<div class="stage" data-stage=${this.stage}>
      ${
        this.skipped
          ? html`<div class="head" data-testid="stage-head">${inner}</div>`
          : html`<button type="button" class="head" aria-expanded=${this.expanded ? "true" : "false"} aria-controls=${bodyId} @click=${this.toggle} data-testid="stage-head">
            ${inner}
          </button>`
      }
      <div class="body" id=${bodyId} ?hidden=${!this.expanded || this.skipped} role="region" aria-label="${NAMES[this.stage]} stage"><slot></slot></div>
    </div>`;
  }

  private toggle() {
    this.expanded = !this.expanded;
    emit(this, "ss-stage-toggle", { stage: this.stage, expanded: this.expanded });
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-run-stage": SsRunStage;
  }
}
