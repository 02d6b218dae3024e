import { consume } from "@lit/context";
import { downloadEmergencyState, downloadRawPlan, downloadRedactedPlan, type Client } from "@stackship/client";
import { LitElement, html, nothing } from "lit";
import { customElement, property, query, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import type { SsStepUpDialog } from "../auth/step-up-dialog.ts";
import "../auth/step-up-dialog.ts";
import { base } from "../ui/tokens.ts";
import { asFailure, failure, type RequestFailed } from "./api-result.ts";
import type { DownloadItem, Downloads } from "./review-model.ts";
import { runDownloadsStyles } from "./run-downloads.styles.ts";

type Kind = DownloadItem["kind"];
const TITLES: Record<Kind, string> = { redacted_plan: "Redacted plan", raw_plan: "Raw plan (sensitive)", emergency_state: "Emergency state (sensitive)" };
const BUTTONS: Record<Kind, string> = { redacted_plan: "Download redacted plan", raw_plan: "Download raw plan", emergency_state: "Download emergency state" };
const MISSING: Record<Kind, string> = {
  redacted_plan: "This run produced no redacted plan.",
  raw_plan: "This run recorded no plan.",
  emergency_state: "This run's apply uploaded no state.",
};
const FILES: Record<Kind, (runId: string) => string> = {
  redacted_plan: (id) => `${id}-plan-changes.json`,
  raw_plan: (id) => `${id}-plan.json`,
  emergency_state: (id) => `${id}-state.tfstate`,
};

/**
 * The downloads section: the redacted plan for anyone with artifact read access, and guarded
 * POST forms for the raw plan and the emergency state (a typed reason, then a step-up when the
 * session needs one) only where the review offers them. A caller with some download permission
 * but none here sees one quiet note; a caller who could never download sees no section at all.
 *
 * @summary What this caller may download.
 */
@customElement("ss-run-downloads")
export class SsRunDownloads extends LitElement {
  static override styles = [base, runDownloadsStyles];

  @consume({ context: apiContext, subscribe: true })
  @state()
  accessor client!: Client;

  @property({ attribute: "run-id" }) accessor runId = "";
  @property({ attribute: false }) accessor downloads: Downloads = null;

  @state() accessor busy: Kind | null = null;
  @state() accessor failures: Partial<Record<Kind, RequestFailed | string>> = {};
  @state() accessor done: Partial<Record<Kind, boolean>> = {};

  @query("ss-step-up-dialog") accessor stepUpDialog!: SsStepUpDialog;

  override render() {
    const d = this.downloads;
    if (d === null || d === undefined) return nothing;
    if (d.state === "not_permitted") {
      return html`<section aria-labelledby="downloads-heading" data-testid="downloads">
        <h2 id="downloads-heading">Downloads</h2>
        <p class="muted" data-testid="downloads-note">${d.note}</p>
      </section>`;
    }
    return html`<section aria-labelledby="downloads-heading" data-testid="downloads">
      <h2 id="downloads-heading">Downloads</h2>
      <div class="items">${d.items.map((item) => this.renderItem(item))}</div>
      <ss-step-up-dialog></ss-step-up-dialog>
    </section>`;
  }

  private renderItem(item: DownloadItem) {
    const problem = this.failures[item.kind];
    const id = `reason-${item.kind}`;
    return html`<form novalidate data-testid="download-${item.kind}" @submit=${(e: SubmitEvent) => this.submit(e, item)}>
      <h3>${TITLES[item.kind]}</h3>
      ${item.available ? nothing : html`<p class="muted">${MISSING[item.kind]}</p>`}
      ${
        item.requires_reason && item.available
          ? html`<label for=${id}>Reason (kept in the audit trail before any bytes are sent)</label>
            <input type="text" id=${id} name="reason" maxlength="1000" autocomplete="off" required />`
          : nothing
      }
      ${item.requires_step_up && item.available ? html`<p class="muted">You will confirm your password first.</p>` : nothing}
      <div class="row">
        <button type="submit" class=${item.method === "POST" ? "danger" : ""} ?disabled=${!item.available || this.busy !== null}>${BUTTONS[item.kind]}</button>
        ${this.done[item.kind] ? html`<span role="status">Downloaded.</span>` : nothing}
      </div>
      ${problem ? html`<p class="error" role="alert">${typeof problem === "string" ? problem : html`${problem.detail} <code>${problem.summary}</code>`}</p>` : nothing}
    </form>`;
  }

  private setFailure(kind: Kind, value: RequestFailed | string | undefined) {
    this.failures = { ...this.failures, [kind]: value };
  }

  private async submit(event: SubmitEvent, item: DownloadItem) {
    event.preventDefault();
    if (!this.client || !item.available) return;
    this.setFailure(item.kind, undefined);
    this.done = { ...this.done, [item.kind]: false };
    let reason = "";
    if (item.requires_reason) {
      reason = String(new FormData(event.target as HTMLFormElement).get("reason") ?? "").trim();
      if (!reason) {
        this.setFailure(item.kind, "Type why you need these sensitive bytes.");
        return;
      }
    }
    if (item.requires_step_up && !(await this.stepUpDialog.request(BUTTONS[item.kind]))) return;
    this.busy = item.kind;
    try {
      let blob = await this.fetchBlob(item.kind, reason);
      if (blob === "step_up_required") {
        // The step-up aged out between the review and the request: ask once more.
        if (!(await this.stepUpDialog.request(BUTTONS[item.kind]))) return;
        blob = await this.fetchBlob(item.kind, reason);
      }
      if (blob instanceof Blob) {
        save(blob, FILES[item.kind](this.runId));
        this.done = { ...this.done, [item.kind]: true };
      } else if (blob !== "step_up_required") {
        this.setFailure(item.kind, blob);
      }
    } catch (error) {
      this.setFailure(item.kind, asFailure(error));
    } finally {
      this.busy = null;
    }
  }

  private async fetchBlob(kind: Kind, reason: string): Promise<Blob | RequestFailed | "step_up_required"> {
    const client = this.client!;
    const path = { run_id: this.runId };
    const body = { data: { type: "download-requests" as const, attributes: { reason } } };
    const result =
      kind === "redacted_plan"
        ? await downloadRedactedPlan({ client, path, parseAs: "blob" })
        : kind === "raw_plan"
          ? await downloadRawPlan({ client, path, body, parseAs: "blob" })
          : await downloadEmergencyState({ client, path, body, parseAs: "blob" });
    const status = result.response?.status ?? 0;
    if (result.response?.ok && result.data instanceof Blob) return result.data;
    const problem = failure(status, await errorBody(result.error));
    return problem.code === "STEP_UP_REQUIRED" ? "step_up_required" : problem;
  }
}

/** The error document of a blob-parsed response (it arrives as a Blob or text). */
async function errorBody(error: unknown): Promise<unknown> {
  try {
    if (error instanceof Blob) return JSON.parse(await error.text());
    if (typeof error === "string") return JSON.parse(error);
  } catch {
    return undefined;
  }
  return error;
}

function save(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.style.display = "none";
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-run-downloads": SsRunDownloads;
  }
}
