import { LitElement, html, nothing } from "lit";
import { customElement, property } from "lit/decorators.js";
import { base } from "../ui/tokens.ts";
import type { TerminalReason } from "./review-model.ts";
import { terminalReasonStyles } from "./terminal-reason.styles.ts";

const DANGER = new Set(["plan_failed", "policy_hard_failed", "policy_errored", "apply_failed", "apply_interrupted", "apply_uncertain"]);
const SUCCESS = new Set(["applied", "no_changes", "speculative"]);

/**
 * Why the run ended: one human sentence, the raw reason code as secondary monospace detail and,
 * for a failed plan or apply, the last (at most eight) sanitized lines of that phase's log on an
 * ink surface, captioned with the log they came from. Without log lines the panel keeps its
 * sentence-and-code form.
 *
 * @summary The terminal reason panel.
 */
@customElement("ss-terminal-reason")
export class SsTerminalReason extends LitElement {
  static override styles = [base, terminalReasonStyles];

  /** The review's terminal reason (null while the run is still moving). */
  @property({ attribute: false }) accessor reason: TerminalReason | null = null;

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
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-terminal-reason": SsTerminalReason;
  }
}
