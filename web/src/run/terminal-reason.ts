import { LitElement, html, nothing } from "lit";
import { customElement, property } from "lit/decorators.js";
import { base } from "../ui/tokens.ts";
import { approvalHeadline, formatUtc, type ApprovalStage, type TerminalReason } from "./review-model.ts";
import { terminalReasonStyles } from "./terminal-reason.styles.ts";

const DANGER = new Set([
  "plan_failed",
  "policy_hard_failed",
  "policy_errored",
  "apply_failed",
  "apply_interrupted",
  "apply_uncertain",
]);
const SUCCESS = new Set(["applied", "no_changes", "speculative"]);

/**
 * Why the run ended: one human sentence, the raw reason code as secondary monospace detail and,
 * for a failed plan or apply, the last (at most eight) sanitized lines of that phase's log on an
 * ink surface, captioned with the log they came from. Without log lines the panel keeps its
 * sentence-and-code form. A run ended by a person's decision (canceled or discarded) names who,
 * when and why here too: a cancel before the approval stage leaves that stage skipped and closed.
 *
 * @summary The terminal reason panel.
 */
@customElement("ss-terminal-reason")
export class SsTerminalReason extends LitElement {
  static override styles = [base, terminalReasonStyles];

  /** The review's terminal reason (null while the run is still moving). */
  @property({ attribute: false }) accessor reason: TerminalReason | null = null;

  /** The review's approval stage, for the decision that ended the run. */
  @property({ attribute: false }) accessor approval: ApprovalStage | null = null;

  override render() {
    const reason = this.reason;
    if (!reason) return nothing;
    if (reason.state === "not_recorded") {
      return html`<section class="notice" data-testid="terminal-reason"><p class="sentence">Why this run ended was not recorded.</p></section>`;
    }
    const tone = DANGER.has(reason.code) ? "danger" : SUCCESS.has(reason.code) ? "info" : "attention";
    const tail = reason.log_tail && reason.log_tail.lines.length > 0 ? reason.log_tail : null;
    return html`<section class="notice ${tone}" data-testid="terminal-reason" aria-label="Why the run ended">
      <p class="sentence">${reason.sentence}</p>
      ${this.renderDecision()}
      <p class="code muted">Reason code <code data-testid="terminal-reason-code">${reason.code}</code></p>
      ${
        tail
          ? html`<figure data-testid="log-tail">
            <figcaption>${tail.caption}</figcaption>
            <pre class="ink" tabindex="0" aria-label=${tail.caption}>${tail.lines.slice(-8).join("\n")}</pre>
          </figure>`
          : nothing
      }
    </section>`;
  }

  private renderDecision() {
    const a = this.approval;
    if (!a || (a.state !== "canceled" && a.state !== "discarded")) return nothing;
    const headline = approvalHeadline(a);
    if (!headline) return nothing;
    return html`<p data-testid="terminal-decision">
      ${headline.verb}${headline.who ? html` ${headline.who.name ?? html`<code>${headline.who.id}</code>`}` : nothing}${
        a.decided_at ? html` at <time datetime=${a.decided_at}>${formatUtc(a.decided_at)}</time>` : nothing
      }.
      ${a.reason ? html`Reason: ${a.reason}` : html`<span class="muted">No reason was given.</span>`}
    </p>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-terminal-reason": SsTerminalReason;
  }
}
