import { consume } from "@lit/context";
import { LitElement, html, nothing } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { listRunAttestations, type Client } from "@stackship/client";
import { apiContext } from "../app/context.ts";
import { base } from "../ui/tokens.ts";
import { asFailure, unwrap } from "./api-result.ts";
import { evidenceStyles } from "./evidence.styles.ts";
import { approvalHeadline, formatUtc, type ApprovalStage } from "./review-model.ts";

/**
 * The approval stage's evidence, human facts first: awaiting, approved, discarded, canceled or
 * expired, with the relevant time and any approval expiry; "Approved by / Discarded by /
 * Canceled by" names the display name, or the monospace actor id when no name is recorded. The
 * bound plan digest is a secondary monospace line. Each signed attestation of the decision (and
 * of the apply's outcome) is offered as "Download attestation": the DSSE envelope exactly as
 * issued, read from `GET /v1/runs/{id}/attestations`, named by its SHA-256.
 *
 * @summary Who decided, and when.
 */
@customElement("ss-approval-evidence")
export class SsApprovalEvidence extends LitElement {
  static override styles = [base, evidenceStyles];

  @property({ attribute: false }) accessor approval: ApprovalStage | undefined;
  @property({ attribute: "run-id" }) accessor runId = "";

  @consume({ context: apiContext, subscribe: true })
  @property({ attribute: false })
  accessor client!: Client;

  @state() accessor attestationFailure: string | null = null;

  /** Saves the envelope of attestation `id` as `<run>-<stage>.intoto.json` (the bytes as issued). */
  private async download(id: string, stage: string) {
    this.attestationFailure = null;
    try {
      const list = unwrap(await listRunAttestations({ client: this.client, path: { run_id: this.runId } }));
      const found = list.data.find((a) => a.id === id);
      if (!found) throw new Error("That attestation is no longer listed; reload the run.");
      const url = URL.createObjectURL(
        new Blob([JSON.stringify(found.attributes.envelope)], { type: "application/json" }),
      );
      const a = document.createElement("a");
      a.href = url;
      a.download = `${this.runId}-${stage}.intoto.json`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 0);
    } catch (error) {
      this.attestationFailure = asFailure(error).message;
    }
  }

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
              headline.who
                ? html` ${headline.who.name ? headline.who.name : html`<code data-testid="actor-id">${headline.who.id}</code>`}`
                : nothing
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
      ${(a.attestations ?? []).map(
        (t) =>
          html`<p class="secondary">
            <button type="button" data-testid="download-attestation-${t.stage}" @click=${() => this.download(t.id, t.stage)}>
              Download attestation${t.stage === "outcome" ? " (apply outcome)" : ""}
            </button>
            SHA-256 <code data-testid="attestation-digest-${t.stage}">${t.envelope_sha256}</code>
          </p>`,
      )}
      ${this.attestationFailure ? html`<p class="error" role="alert" data-testid="attestation-failure">${this.attestationFailure}</p>` : nothing}
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-approval-evidence": SsApprovalEvidence;
  }
}
