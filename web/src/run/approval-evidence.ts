import { LitElement, html, nothing } from "lit";
import { customElement, property } from "lit/decorators.js";
import { base } from "../ui/tokens.ts";
import { evidenceStyles } from "./evidence.styles.ts";
import { approvalHeadline, formatUtc, type ApprovalStage } from "./review-model.ts";

/**
 * The approval stage's evidence, human facts first: awaiting, approved, discarded, canceled or
 * expired, with the relevant time and any approval expiry; "Approved by / Discarded by /
 * Canceled by" names the display name, or the monospace actor id when no name is recorded. The
 * bound plan digest is a secondary monospace line.
 *
 * @summary Who decided, and when.
 */
@customElement("ss-approval-evidence")
export class SsApprovalEvidence extends LitElement {
  static override styles = [base, evidenceStyles];

  @property({ attribute: false }) accessor approval: ApprovalStage | undefined;

  override render() {
    const a = this.approval;
    if (!a) return nothing;
    const headline = approvalHeadline(a);
    return html`<div class="stack">
      ${
        headline === null
          ? html`<p class="lead error" data-testid="approval-lead">Unknown approval state “${a.state}”</p>`
          : html`<p class="lead" data-testid="approval-lead">
            ${headline.verb}${
              headline.who ? html` ${headline.who.name ? headline.who.name : html`<code data-testid="actor-id">${headline.who.id}</code>`}` : nothing
            }${a.decided_at ? html` at <time datetime=${a.decided_at}>${formatUtc(a.decided_at)}</time>` : nothing}
          </p>`
      }
      ${a.reason ? html`<p data-testid="approval-reason">Reason: ${a.reason}</p>` : nothing}
      ${
        a.state === "awaiting" && a.approval_expires_at
          ? html`<p>The approval window closes at <time datetime=${a.approval_expires_at}>${formatUtc(a.approval_expires_at)}</time>.</p>`
          : nothing
      }
      ${
        a.state === "expired" && a.approval_expires_at
          ? html`<p>The approval window closed at <time datetime=${a.approval_expires_at}>${formatUtc(a.approval_expires_at)}</time>.</p>`
          : nothing
      }
      ${a.state === "awaiting" && a.destroy_confirmation_required ? html`<p>This plan destroys at least one resource.</p>` : nothing}
      ${a.plan_digest ? html`<p class="secondary">Plan digest <code data-testid="plan-digest">${a.plan_digest}</code></p>` : nothing}
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-approval-evidence": SsApprovalEvidence;
  }
}
