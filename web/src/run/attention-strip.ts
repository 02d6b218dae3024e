import { consume } from "@lit/context";
import { approveRun, discardRun, type Client } from "@stackship/client";
import { LitElement, html, nothing } from "lit";
import { customElement, property, query, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import { base } from "../ui/tokens.ts";
import type { RequestFailed, SdkResult } from "./api-result.ts";
import { attentionStripStyles } from "./attention-strip.styles.ts";
import type { Action, ApprovalStage, PlanStage, PolicyStage } from "./review-model.ts";
import { performRunAction } from "./run-action.ts";

type Armed = "none" | "approve" | "discard";

/**
 * The approval bar: Approve plan and Discard run while a decision is outstanding (gated by
 * `available_actions`), gone once the run moves past it. When the reviewed plan destroys at
 * least one resource, Approve plan arms an inline confirmation restating the plan counts,
 * destroy count included, before anything is sent; with zero destroys approval is one click.
 * Discard run arms its own confirmation, which alone holds the discard-reason input. The
 * approval carries exactly the plan digest the review bound.
 *
 * @summary Approve or discard the plan under review.
 * @event ss-run-action-done - An approve or discard was accepted.
 */
@customElement("ss-attention-strip")
export class SsAttentionStrip extends LitElement {
  static override styles = [base, attentionStripStyles];

  @consume({ context: apiContext, subscribe: true })
  @state()
  accessor client!: Client;

  @property({ attribute: "run-id" }) accessor runId = "";
  @property({ attribute: false }) accessor actions: readonly Action[] = [];
  @property({ attribute: false }) accessor approval: ApprovalStage | undefined;
  @property({ attribute: false }) accessor plan: PlanStage | undefined;
  @property({ attribute: false }) accessor policy: PolicyStage | undefined;

  @state() accessor armed: Armed = "none";
  @state() accessor busy = false;
  @state() accessor failure: RequestFailed | null = null;

  @query("#discard-reason") accessor reasonInput!: HTMLTextAreaElement | null;
  @query("#confirm-approve") accessor confirmApproveButton!: HTMLButtonElement | null;
  @query("#approve") accessor approveButton!: HTMLButtonElement | null;
  @query("#discard") accessor discardButton!: HTMLButtonElement | null;

  override render() {
    const canApprove = this.actions.includes("approve");
    const canDiscard = this.actions.includes("discard");
    if (!canApprove && !canDiscard) return nothing;
    const counts = this.plan?.summary.state === "recorded" ? this.plan.summary.counts : null;
    return html`<section aria-labelledby="decision-heading" data-testid="attention-strip">
      <h2 id="decision-heading">This plan is waiting for a decision</h2>
      ${counts ? html`<p>The plan will create ${counts.create}, change ${counts.change} and destroy ${counts.destroy} resources.</p>` : nothing}
      ${
        !canApprove && this.policy?.outcome === "soft_failed"
          ? html`<p data-testid="approval-waits">Approval becomes possible once the soft-mandatory policy failure is overridden.</p>`
          : nothing
      }
      <div class="row">
        ${
          canApprove
            ? html`<button id="approve" type="button" class="primary" ?disabled=${this.busy || this.armed !== "none"} @click=${this.onApprove}>Approve plan</button>`
            : nothing
        }
        ${canDiscard ? html`<button id="discard" type="button" ?disabled=${this.busy || this.armed !== "none"} @click=${this.onDiscard}>Discard run</button>` : nothing}
      </div>
      ${this.armed === "approve" ? this.renderApproveConfirm(counts) : nothing} ${this.armed === "discard" ? this.renderDiscardConfirm() : nothing}
      ${this.failure ? html`<p class="error" role="alert">${this.failure.detail} <code>${this.failure.summary}</code></p>` : nothing}
    </section>`;
  }

  private renderApproveConfirm(counts: { create: number; change: number; destroy: number } | null) {
    return html`<div class="confirm" role="group" aria-labelledby="approve-confirm-text" data-testid="approve-confirmation">
      <p id="approve-confirm-text">
        ${
          counts
            ? html`Approving applies this plan: <strong>${counts.create} to create</strong>, <strong>${counts.change} to change</strong> and
              <span class="destroy">${counts.destroy} to destroy</span>.`
            : html`Approving applies this plan, which destroys at least one resource.`
        }
      </p>
      <div class="row">
        <button id="confirm-approve" type="button" class="danger" ?disabled=${this.busy} @click=${this.approve}>
          Approve and destroy ${counts ? counts.destroy : ""} ${counts?.destroy === 1 ? "resource" : "resources"}
        </button>
        <button type="button" ?disabled=${this.busy} @click=${this.disarm}>Keep reviewing</button>
      </div>
    </div>`;
  }

  private renderDiscardConfirm() {
    return html`<form class="confirm" data-testid="discard-confirmation" @submit=${this.discard}>
      <label for="discard-reason">Why discard this run? (optional, kept with the decision)</label>
      <textarea id="discard-reason" name="reason" maxlength="2000"></textarea>
      <div class="row">
        <button type="submit" class="danger" ?disabled=${this.busy}>Discard run</button>
        <button type="button" ?disabled=${this.busy} @click=${this.disarm}>Keep the run</button>
      </div>
    </form>`;
  }

  private async onApprove() {
    this.failure = null;
    if (this.approval?.destroy_confirmation_required) {
      this.armed = "approve";
      await this.updateComplete;
      this.confirmApproveButton?.focus();
      return;
    }
    await this.approve();
  }

  private async onDiscard() {
    this.failure = null;
    this.armed = "discard";
    await this.updateComplete;
    this.reasonInput?.focus();
  }

  private async disarm() {
    const was = this.armed;
    this.armed = "none";
    await this.updateComplete;
    (was === "approve" ? this.approveButton : this.discardButton)?.focus();
  }

  private async approve() {
    const digest = this.approval?.plan_digest;
    if (!this.client || !digest) return;
    await this.send("approve", () =>
      approveRun({
        client: this.client,
        path: { run_id: this.runId },
        body: { data: { type: "approvals", attributes: { plan_digest: digest } } },
      }),
    );
  }

  private async discard(event: SubmitEvent) {
    event.preventDefault();
    if (!this.client) return;
    const reason = this.reasonInput?.value.trim() ?? "";
    await this.send("discard", () =>
      discardRun({
        client: this.client,
        path: { run_id: this.runId },
        body: { data: { type: "decisions", attributes: reason ? { reason } : {} } },
      }),
    );
  }

  private async send(action: "approve" | "discard", call: () => Promise<SdkResult<unknown>>) {
    await performRunAction(this, { action, runId: this.runId }, call, () => (this.armed = "none"));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-attention-strip": SsAttentionStrip;
  }
}
