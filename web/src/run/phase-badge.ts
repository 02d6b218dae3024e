import { LitElement, html } from "lit";
import { customElement, property } from "lit/decorators.js";
import { base } from "../ui/tokens.ts";
import { icon } from "./icons.ts";
import { phaseBadgeStyles } from "./phase-badge.styles.ts";
import { APPLY_PHASE_STATUSES, PHASE_TONES, PLAN_PHASE_STATUSES, known } from "./review-model.ts";

const WORDS: Record<(typeof APPLY_PHASE_STATUSES)[number], string> = {
  pending: "pending",
  running: "running",
  finished: "finished",
  errored: "errored",
  canceled: "canceled",
  interrupted: "interrupted",
};

/**
 * A plan or apply phase status: its text label ("Plan", "Apply"), an icon and the status word, so
 * neither colour nor a raw value carries the state alone. Pending and running are informational,
 * finished success, canceled attention, errored and interrupted danger. A status outside the
 * phase's closed set (plans have no `interrupted`) renders as an explicit error, never a guess.
 *
 * @summary The phase badge of the run page.
 */
@customElement("ss-phase-badge")
export class SsPhaseBadge extends LitElement {
  static override styles = [base, phaseBadgeStyles];

  /** Which phase: its label leads the badge. */
  @property() accessor phase: "plan" | "apply" = "plan";

  /** The phase status exactly as the server sent it. */
  @property() accessor status = "";

  override render() {
    const label = this.phase === "apply" ? "Apply" : "Plan";
    const status = known(this.phase === "apply" ? APPLY_PHASE_STATUSES : PLAN_PHASE_STATUSES, this.status);
    if (status === null) {
      return html`<span class="badge unknown" role="status" data-tone="error"
        >${icon("error")}<span class="label">${label}</span> <span>unknown status “${this.status}”</span></span
      >`;
    }
    const tone = PHASE_TONES[status];
    return html`<span class="badge ${tone}" data-tone=${tone}>${icon(tone)}<span class="label">${label}</span> <span>${WORDS[status]}</span></span>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-phase-badge": SsPhaseBadge;
  }
}
