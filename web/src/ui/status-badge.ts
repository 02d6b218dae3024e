// A run status as a badge: the human label in text (colour only repeats it). An unknown value is
// shown as such, in the danger colour, never mapped to a known one.
import { LitElement, css, html } from "lit";
import { customElement, property } from "lit/decorators.js";
import { isRunStatus, RUN_STATUS_LABELS } from "../app/closed-sets.ts";
import { base } from "./tokens.ts";

@customElement("ss-status-badge")
export class SsStatusBadge extends LitElement {
  static override styles = [
    base,
    css`
      span {
        display: inline-block;
        padding: 1px var(--ss-space-2);
        border-radius: 999px;
        border: 1px solid currentColor;
        font-size: 0.85em;
        white-space: nowrap;
        font-weight: 600;
      }
      .info { color: var(--ss-info); background: var(--ss-info-bg); }
      .attention { color: var(--ss-attention); background: var(--ss-attention-bg); }
      .success { color: var(--ss-success); background: var(--ss-success-bg); }
      .danger { color: var(--ss-danger); background: var(--ss-danger-bg); }
      .neutral { color: var(--ss-neutral); background: var(--ss-neutral-bg); }
    `,
  ];

  @property() accessor status = "";

  override render() {
    if (!isRunStatus(this.status)) return html`<span class="danger">Unknown status “${this.status}”</span>`;
    const { label, intent } = RUN_STATUS_LABELS[this.status];
    return html`<span class=${intent}>${label}</span>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-status-badge": SsStatusBadge;
  }
}
