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
import { takeSubmit } from "../ui/form-data.ts";

type Kind = DownloadItem["kind"];
const TITLES: Record<Kind, string> = {
  redacted_plan: "Redacted plan",
  raw_plan: "Raw plan (sensitive)",
  emergency_state: "Emergency state (sensitive)",
};
const BUTTONS: Record<Kind, string> = {
  redacted_plan: "Download redacted plan",
  raw_plan: "Download raw plan",
  emergency_state: "Download emergency state",
};
const MISSING: Record<Kind, string> = {
  redacted_plan: "the redacted plan (this run produced none)",
  raw_plan: "the raw plan (this run recorded no plan)",
  emergency_state: "the emergency state (this run's apply uploaded no state)",
};
const FILES: Record<Kind, (runId: string) => string> = {
  redacted_plan: (id) => `${id}-plan-changes.json`,
  raw_plan: (id) => `${id}-plan.json`,
  emergency_state: (id) => `${id}-state.tfstate`,
};

/**
 * The downloads section: the redacted plan for anyone with artifact read access in one compact
 * row, and guarded POST forms for the raw plan and the emergency state (a typed reason, then a
 * step-up when the session needs one) only where the review offers them, behind a disclosure.
 * What this run does not have collapses into one quiet line. A caller with some download
 * permission but none here sees one quiet note; a caller who could never download sees no section.
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
    const available = d.items.filter((item) => item.available);
    const plain = available.filter((item) => !item.requires_reason);
    const sensitive = available.filter((item) => item.requires_reason);
    const missing = d.items.filter((item) => !item.available);
    // Kept open while a sensitive download is under way or said something, so its message stays in view.
    const sensitiveOpen = sensitive.some(
      (item) => this.busy === item.kind || this.failures[item.kind] !== undefined || this.done[item.kind],
    );
    return html`<section aria-labelledby="downloads-heading" data-testid="downloads">
      <h2 id="downloads-heading">Downloads</h2>
      ${plain.length > 0 ? html`<div class="items compact">${plain.map((item) => this.renderItem(item))}</div>` : nothing}
      ${
        sensitive.length > 0
          ? html`<details data-testid="sensitive-downloads" ?open=${sensitiveOpen}>
            <summary>Sensitive downloads: ${sensitive.map((item) => TITLES[item.kind].replace(" (sensitive)", "").toLowerCase()).join(", ")} (a reason is audited first)</summary>
            <div class="items">${sensitive.map((item) => this.renderItem(item))}</div>
          </details>`
          : nothing
      }
      ${missing.length > 0 ? html`<p class="muted" data-testid="downloads-missing">Not available for this run: ${missing.map((item) => MISSING[item.kind]).join("; ")}.</p>` : nothing}
      <ss-step-up-dialog></ss-step-up-dialog>
    </section>`;
  }

  private renderItem(item: DownloadItem) {
    const problem = this.failures[item.kind];
    const id = `reason-${item.kind}`;
    return html`<form novalidate class=${item.requires_reason ? "guarded" : "plain"} data-testid="download-${item.kind}" @submit=${(e: SubmitEvent) => this.submit(e, item)}>
      ${item.requires_reason ? html`<h3>${TITLES[item.kind]}</h3>` : nothing}
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
    const { trimmed } = takeSubmit(event);
    if (!this.client || !item.available) return;
    this.setFailure(item.kind, undefined);
    this.done = { ...this.done, [item.kind]: false };
    let reason = "";
    if (item.requires_reason) {
      reason = trimmed("reason");
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
    const client = this.client;
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
