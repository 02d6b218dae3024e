import { consume } from "@lit/context";
import { createPolicyOverride, type Client } from "@stackship/client";
import { LitElement, html, nothing } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import { base } from "../ui/tokens.ts";
import type { RequestFailed } from "./api-result.ts";
import { evidenceStyles } from "./evidence.styles.ts";
import { formatDuration, formatUtc, type Action, type PolicyStage } from "./review-model.ts";
import { performRunAction } from "./run-action.ts";
import { takeSubmit } from "../ui/form-data.ts";

/** "15 minutes", "1 hour", "4 hours"; other spans fall back to the duration format. */
const LEVEL_ORDER: Record<string, number> = { hard_mandatory: 0, soft_mandatory: 1, advisory: 2 };

/** Findings that block first (hard-, then soft-mandatory), advisory last; the evaluation's order within a level. */
function blockingFirst(findings: PolicyStage["findings"]): PolicyStage["findings"] {
  return findings
    .map((finding, index) => ({ finding, index }))
    .sort(
      (a, b) =>
        (LEVEL_ORDER[a.finding.enforcement_level] ?? 3) - (LEVEL_ORDER[b.finding.enforcement_level] ?? 3) ||
        a.index - b.index,
    )
    .map(({ finding }) => finding);
}

/**
 * The override in force, if any: the control's active expiry (what the server decided), else the
 * newest listed override that has not expired; with who recorded it when the list names them.
 */
function activeOverride(p: PolicyStage, now = Date.now()): { expires_at: string; by: string | null } | null {
  const expiresAt =
    p.override_control?.active_override_expires_at ??
    p.overrides.filter((o) => Date.parse(o.expires_at) > now).sort((a, b) => (a.created_at < b.created_at ? 1 : -1))[0]
      ?.expires_at ??
    null;
  if (!expiresAt) return null;
  const record = p.overrides.find((o) => o.expires_at === expiresAt);
  return { expires_at: expiresAt, by: record ? (record.actor_display_name ?? record.actor_id) : null };
}

function overrideSpan(seconds: number): string {
  if (seconds % 3600 === 0) return seconds === 3600 ? "1 hour" : `${seconds / 3600} hours`;
  if (seconds % 60 === 0 && seconds < 3600) return seconds === 60 ? "1 minute" : `${seconds / 60} minutes`;
  return formatDuration(seconds * 1000);
}

const OUTCOMES: Record<string, string> = {
  skipped: "No policy set applies to this workspace.",
  passed: "Every policy passed.",
  soft_failed: "A soft-mandatory policy failed: an authorized person may override it for a limited time.",
  hard_failed: "A hard-mandatory policy failed. Hard-mandatory findings cannot be overridden.",
  errored: "The policy check could not be completed.",
};

/**
 * The policy stage's evidence: the outcome, the sanitized findings as text (title, message,
 * address, enforcement level), the override records (at most 256, with the truncation flag), and
 * the time-limited override control only where the review carries one and `override` is an
 * available action. The control submits exactly the persisted result digest with a reason and a
 * duration within the allowed maximum.
 *
 * @summary Policy findings and the soft-mandatory override.
 * @event ss-run-action-done - An override was recorded.
 */
@customElement("ss-policy-evidence")
export class SsPolicyEvidence extends LitElement {
  static override styles = [base, evidenceStyles];

  @consume({ context: apiContext, subscribe: true })
  @state()
  accessor client!: Client;

  @property({ attribute: "run-id" }) accessor runId = "";
  @property({ attribute: false }) accessor policy: PolicyStage | undefined;
  @property({ attribute: false }) accessor actions: readonly Action[] = [];

  @state() accessor busy = false;
  @state() accessor failure: RequestFailed | null = null;
  @state() accessor reasonMissing = false;

  override render() {
    const p = this.policy;
    if (!p) return nothing;
    return html`<div class="stack">
      <p class="lead" data-testid="policy-outcome">
        ${p.outcome === null ? "No policy result was recorded yet." : (OUTCOMES[p.outcome] ?? html`<span class="error">Unknown policy outcome “${p.outcome}”</span>`)}
      </p>
      ${p.finished_at ? html`<p class="secondary">Evaluated at <time datetime=${p.finished_at}>${formatUtc(p.finished_at)}</time></p>` : nothing}
      ${
        p.findings.length > 0
          ? html`<ul class="findings" aria-label="Policy findings" data-testid="policy-findings">
            ${blockingFirst(p.findings).map(
              (f) => html`<li class=${f.enforcement_level}>
                <div class="level">${f.enforcement_level.replace("_", "-")}</div>
                <div><strong>${f.title}</strong></div>
                <div>${f.message}</div>
                ${f.address ? html`<div class="secondary"><code>${f.address}</code></div>` : nothing}
              </li>`,
            )}
          </ul>`
          : nothing
      }
      ${this.renderOverrides(p)} ${p.override_control && this.actions.includes("override") && !activeOverride(p) ? this.renderControl(p.override_control) : nothing}
    </div>`;
  }

  private renderOverrides(p: PolicyStage) {
    const active = activeOverride(p);
    return html`${
      active
        ? html`<p data-testid="active-override">
          Override active until <time datetime=${active.expires_at}>${formatUtc(active.expires_at)}</time>${active.by ? html`, by ${active.by}` : nothing}.
        </p>`
        : nothing
    }
    ${
      p.overrides.length > 0
        ? html`<table data-testid="policy-overrides">
          <caption class="visually-hidden">Policy overrides</caption>
          <thead>
            <tr><th scope="col">Overridden by</th><th scope="col">Reason</th><th scope="col">At</th><th scope="col">Until</th></tr>
          </thead>
          <tbody>
            ${p.overrides.map(
              (o) => html`<tr>
                <td>${o.actor_display_name ?? (o.actor_id ? html`<code>${o.actor_id}</code>` : html`<span class="muted">not recorded</span>`)}</td>
                <td>${o.reason}</td>
                <td>${formatUtc(o.created_at)}</td>
                <td>${formatUtc(o.expires_at)}</td>
              </tr>`,
            )}
          </tbody>
        </table>`
        : nothing
    }
    ${p.overrides_truncated ? html`<p class="secondary">Only the newest 256 overrides are listed; the organization audit history keeps every one.</p>` : nothing}`;
  }

  private renderControl(control: NonNullable<PolicyStage["override_control"]>) {
    const choices = [900, 3600, 4 * 3600, 24 * 3600].filter((s) => s <= control.max_duration_seconds);
    if (!choices.includes(control.default_duration_seconds)) choices.push(control.default_duration_seconds);
    choices.sort((a, b) => a - b);
    return html`<form novalidate @submit=${this.submit} data-testid="override-form">
      <label for="override-reason">Override reason (kept in the audit trail)</label>
      <textarea id="override-reason" name="reason" maxlength="2000" required aria-invalid=${this.reasonMissing ? "true" : "false"}></textarea>
      ${this.reasonMissing ? html`<p class="error" role="alert">Say why the failure may be overridden.</p>` : nothing}
      <div class="row">
        <label for="override-duration">Override lasts</label>
        <select id="override-duration" name="duration">
          ${choices.map((s) => html`<option value=${s} ?selected=${s === control.default_duration_seconds}>${overrideSpan(s)}</option>`)}
        </select>
        <button type="submit" class="primary" ?disabled=${this.busy}>Override policy failure</button>
      </div>
      ${control.expires_at ? html`<p class="secondary">The override control is usable until ${formatUtc(control.expires_at)}.</p>` : nothing}
      <p class="secondary">Bound to policy result <code data-testid="override-digest">${control.result_digest}</code></p>
      ${this.failure ? html`<p class="error" role="alert">${this.failure.detail} <code>${this.failure.summary}</code></p>` : nothing}
    </form>`;
  }

  private async submit(event: SubmitEvent) {
    const { data, trimmed } = takeSubmit(event);
    const control = this.policy?.override_control;
    if (!control || !this.client) return;
    const reason = trimmed("reason");
    const duration = Number(data.get("duration"));
    this.reasonMissing = reason.length === 0;
    if (this.reasonMissing) return;
    const client = this.client;
    await performRunAction(this, { action: "override", runId: this.runId }, () =>
      createPolicyOverride({
        client,
        path: { run_id: this.runId },
        body: {
          data: {
            type: "policy-overrides",
            attributes: { result_digest: control.result_digest, reason, duration_seconds: duration },
          },
        },
      }),
    );
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-policy-evidence": SsPolicyEvidence;
  }
}
