import { LitElement, html, nothing } from "lit";
import { customElement, property } from "lit/decorators.js";
import { base } from "../ui/tokens.ts";
import { evidenceStyles } from "./evidence.styles.ts";
import { formatUtc, type ApplyStage } from "./review-model.ts";
import "./phase-badge.ts";

/**
 * The apply stage's evidence: the apply status and, when a successor state was committed, the
 * exact published state version, serial and publication time (the digest belongs to the
 * workspace state page); otherwise a not-recorded or unavailable notice.
 *
 * @summary What the apply published.
 */
@customElement("ss-apply-evidence")
export class SsApplyEvidence extends LitElement {
  static override styles = [base, evidenceStyles];

  @property({ attribute: false }) accessor apply: ApplyStage | undefined;

  override render() {
    const a = this.apply;
    if (!a) return nothing;
    const v = a.state_version;
    return html`<div class="stack">
      <p class="row">Apply status <ss-phase-badge phase="apply" status=${a.phase_status}></ss-phase-badge></p>
      ${
        v.state === "committed"
          ? html`<p class="lead" data-testid="state-version">
            Published state version <code>${v.id}</code>, serial ${v.serial}, at <time datetime=${v.published_at}>${formatUtc(v.published_at)}</time>
          </p>`
          : v.state === "unavailable"
            ? html`<p class="notice attention" data-testid="state-version">The apply committed a state version, but its record is unavailable.</p>`
            : v.state === "not_recorded"
              ? html`<p class="muted" data-testid="state-version">
                ${a.phase_status === "pending" ? "Nothing applied yet: no state version." : "No state version was committed by this apply."}
              </p>`
              : html`<p class="error" data-testid="state-version">Unknown state version state “${(v as { state: string }).state}”</p>`
      }
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-apply-evidence": SsApplyEvidence;
  }
}
