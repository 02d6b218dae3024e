import { consume } from "@lit/context";
import { resolveRunRecovery, type Client } from "@stackship/client";
import { LitElement, html, nothing } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import { base } from "../ui/tokens.ts";
import type { RequestFailed } from "./api-result.ts";
import { recoveryPanelStyles } from "./recovery-panel.styles.ts";
import { formatUtc, type Action, type Recovery } from "./review-model.ts";
import { performRunAction } from "./run-action.ts";
import { takeSubmit } from "../ui/form-data.ts";

/** The API's bound on the resolution reason. */
const REASON_MIN = 10;

/**
 * The recovery panel of a run whose apply was interrupted or ended uncertainly: the recorded
 * evidence (the apply attempt, the last apply log lines, the pending state version the apply
 * uploaded, the lock the run still holds, the predecessor state digest), nothing guessed; and,
 * for a caller allowed to `recover`, the resolve form: keep the current state (listed first: it
 * changes nothing recorded) or commit the pending one, nothing preselected, with a typed reason for
 * the audit trail.
 *
 * @summary Unresolved recovery evidence and its resolution.
 * @event ss-run-action-done - The resolution was accepted.
 */
@customElement("ss-recovery-panel")
export class SsRecoveryPanel extends LitElement {
  static override styles = [base, recoveryPanelStyles];

  @consume({ context: apiContext, subscribe: true })
  @state()
  accessor client!: Client;

  @property({ attribute: "run-id" }) accessor runId = "";
  @property({ attribute: false }) accessor recovery: Recovery | null = null;
  @property({ attribute: false }) accessor actions: readonly Action[] = [];

  @state() accessor busy = false;
  @state() accessor failure: RequestFailed | null = null;
  @state() accessor reasonTooShort = false;
  @state() accessor choiceMissing = false;

  override render() {
    const r = this.recovery;
    if (!r) return nothing;
    const a = r.attempt;
    const notRecorded = html`<span class="muted">not recorded</span>`;
    return html`<section class="notice danger" aria-labelledby="recovery-heading" data-testid="recovery-panel">
      <h2 id="recovery-heading">Recovery needed</h2>
      <p>The apply did not end cleanly. StackShip does not guess whether the infrastructure changed; this is what was recorded.</p>
      <dl>
        <dt>Apply attempt</dt>
        <dd>
          ${a ? html`#${a.attempt_number}, <code>${a.status}</code>${a.terminal_classification ? html` (<code>${a.terminal_classification}</code>)` : nothing}` : notRecorded}
        </dd>
        ${
          a
            ? html`<dt>Sandbox</dt>
              <dd>${a.sandbox_id ? html`<code>${a.sandbox_id}</code>` : notRecorded}</dd>
              <dt>Runner</dt>
              <dd><code>${a.runner_id}</code></dd>
              <dt>Started</dt>
              <dd>${formatUtc(a.started_at)}</dd>
              <dt>Ended</dt>
              <dd>${a.finished_at ? formatUtc(a.finished_at) : notRecorded}</dd>`
            : nothing
        }
        <dt>Pending state version</dt>
        <dd data-testid="pending-state">
          ${
            r.pending_state_version
              ? html`<code>${r.pending_state_version.id}</code>, serial ${r.pending_state_version.serial}${
                  r.pending_state_version.sha256 ? html`, <code>${r.pending_state_version.sha256}</code>` : nothing
                }`
              : html`none was uploaded`
          }
        </dd>
        <dt>Workspace lock</dt>
        <dd>${r.lock ? html`held by ${r.lock.holder_kind} <code>${r.lock.holder_id}</code> (fence ${r.lock.fence})` : html`not held`}</dd>
        <dt>Predecessor state</dt>
        <dd>${r.predecessor_state_digest ? html`<code>${r.predecessor_state_digest}</code>` : html`none (the workspace had no state)`}</dd>
      </dl>
      ${
        r.last_log_lines.length > 0
          ? html`<figure style="margin:0">
            <figcaption class="muted">The last lines of the apply log</figcaption>
            <pre class="ink" tabindex="0" aria-label="The last lines of the apply log">${r.last_log_lines.join("\n")}</pre>
          </figure>`
          : html`<p class="muted">The apply log recorded no lines.</p>`
      }
      ${this.actions.includes("recover") ? this.renderForm(r) : nothing}
    </section>`;
  }

  private renderForm(r: Recovery) {
    const canCommit = r.pending_state_version !== null;
    return html`<form novalidate @submit=${this.resolve} data-testid="recovery-form">
      <fieldset aria-describedby="resolution-help">
        <legend>Resolve</legend>
        <p class="muted" id="resolution-help">Nothing is chosen for you: read the evidence above, then pick one.</p>
        <label
          ><input type="radio" name="resolution" value="keep_current_state" /> Keep the current state (changes no recorded state; the run ends errored, and a
          new plan shows any drift the apply left)</label
        >
        <label
          ><input type="radio" name="resolution" value="commit_pending_state" ?disabled=${!canCommit} /> Commit the pending state version (the run ends
          applied)${canCommit ? nothing : html` <span class="muted">— none was uploaded</span>`}</label
        >
      </fieldset>
      ${this.choiceMissing ? html`<p class="error" role="alert">Choose how to resolve the recovery.</p>` : nothing}
      <label for="recovery-reason">Reason (at least ${REASON_MIN} characters, kept in the audit trail)</label>
      <textarea id="recovery-reason" name="reason" required minlength=${REASON_MIN} maxlength="2000" aria-invalid=${this.reasonTooShort ? "true" : "false"}></textarea>
      ${this.reasonTooShort ? html`<p class="error" role="alert">Write at least ${REASON_MIN} characters.</p>` : nothing}
      <div><button type="submit" class="danger" ?disabled=${this.busy}>Resolve recovery</button></div>
      ${this.failure ? html`<p class="error" role="alert">${this.failure.detail} <code>${this.failure.summary}</code></p>` : nothing}
    </form>`;
  }

  private async resolve(event: SubmitEvent) {
    const { data, trimmed } = takeSubmit(event);
    const reason = trimmed("reason");
    const chosen = data.get("resolution");
    this.choiceMissing = chosen !== "commit_pending_state" && chosen !== "keep_current_state";
    this.reasonTooShort = reason.length < REASON_MIN;
    if (this.choiceMissing || this.reasonTooShort || !this.client) return;
    const resolution = chosen === "commit_pending_state" ? "commit_pending_state" : "keep_current_state";
    const client = this.client;
    await performRunAction(this, { action: "resolve", runId: this.runId }, () =>
      resolveRunRecovery({
        client,
        path: { run_id: this.runId },
        body: { data: { type: "recovery-resolutions", attributes: { resolution, reason } } },
      }),
    );
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-recovery-panel": SsRecoveryPanel;
  }
}
