// Start a run from the workspace page (workspace:write): plan and apply, or a speculative plan, on
// the configuration the newest run used or on a `.tar.gz` uploaded from the browser, with a
// message; it lands on the new run's page. Nothing is applied without an approval there.
import { consume } from "@lit/context";
import { createConfigurationVersion, createRun, uploadConfiguration, type Client } from "@stackship/client";
import { LitElement, css, html, nothing, type TemplateResult } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { dataOf } from "../app/api.ts";
import { apiContext } from "../app/context.ts";
import { navigate } from "../app/router.ts";
import { perform } from "./workspace-action.ts";
import { controlStyles, failureText } from "./workspace-common.ts";

@customElement("ss-start-run")
export class SsStartRun extends LitElement {
  static override styles = [
    controlStyles,
    css`
      form {
        display: grid;
        gap: var(--ss-space-3);
        max-width: 560px;
      }
      fieldset {
        display: grid;
        gap: var(--ss-space-1);
        border: 1px solid var(--ss-border);
        padding: var(--ss-space-2) var(--ss-space-3);
      }
      label.field {
        display: grid;
        gap: var(--ss-space-1);
      }
    `,
  ];

  @consume({ context: apiContext }) accessor api!: Client;
  @property({ attribute: "workspace-id" }) accessor workspaceId = "";
  /** The configuration version the newest run used (null: there is none to reuse). */
  @property({ attribute: false }) accessor latest: { configurationVersionId: string; runId: string } | null = null;

  @state() accessor open = false;
  @state() accessor source: "latest" | "upload" = "latest";
  @state() accessor busy = false;
  @state() accessor progress = "";
  @state() accessor error: unknown = null;

  private async start(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const kind = (form.elements.namedItem("kind") as RadioNodeList).value as "plan_and_apply" | "speculative";
    const message = (form.elements.namedItem("message") as HTMLInputElement).value.trim();
    const file = (form.elements.namedItem("archive") as HTMLInputElement | null)?.files?.[0] ?? null;
    const source = this.latest ? this.source : "upload";
    if (source === "upload" && !file) {
      this.error = new Error("Choose the configuration's .tar.gz first.");
      return;
    }
    await perform(
      this,
      () => this.send(kind, message, source === "upload" ? file : null),
      (run) => navigate(`/runs/${run.data.id}`),
    );
    this.progress = "";
  }

  /** Uploads `file` as a new configuration version when there is one (else reuses the newest run's), then creates the run. */
  private async send(kind: "plan_and_apply" | "speculative", message: string, file: File | null) {
    let configurationVersionId = this.latest?.configurationVersionId ?? "";
    if (file) {
      this.progress = "Creating the configuration version…";
      const created = await dataOf(
        createConfigurationVersion({
          client: this.api,
          path: { workspace_id: this.workspaceId },
          body: { data: { type: "configuration-versions", attributes: { speculative: kind === "speculative" } } },
        }),
      );
      const uploadUrl = created.data.attributes.upload_url;
      if (!uploadUrl) throw new Error("The server gave no upload URL for the configuration.");
      this.progress = `Uploading ${file.name} (${Math.ceil(file.size / 1024)} KiB)…`;
      const token = new URL(uploadUrl, location.origin).pathname.split("/").pop()!;
      await dataOf(uploadConfiguration({ client: this.api, path: { upload_token: token }, body: file }));
      configurationVersionId = created.data.id;
    }
    this.progress = "Starting the run…";
    return dataOf(
      createRun({
        client: this.api,
        path: { workspace_id: this.workspaceId },
        body: {
          data: {
            type: "runs",
            attributes: { kind, ...(message ? { message } : {}) },
            relationships: {
              configuration_version: { data: { type: "configuration-versions", id: configurationVersionId } },
            },
          },
        },
      }),
    );
  }

  override render(): TemplateResult {
    if (!this.open)
      return html`<button class="primary" id="start-run" @click=${() => (this.open = true)}>Start a run</button>`;
    const upload = !this.latest || this.source === "upload";
    return html`<form id="start-run-form" @submit=${(e: SubmitEvent) => void this.start(e)}>
      <fieldset>
        <legend>Kind</legend>
        <label><input type="radio" name="kind" value="plan_and_apply" checked /> Plan and apply (applies only after an approval)</label>
        <label><input type="radio" name="kind" value="speculative" /> Speculative plan (never applies)</label>
      </fieldset>
      <fieldset>
        <legend>Configuration</legend>
        ${
          this.latest
            ? html`<label
                ><input type="radio" name="source" value="latest" ?checked=${this.source === "latest"} @change=${() => (this.source = "latest")} /> The configuration of the newest run
                (<span class="mono">${this.latest.runId}</span>)</label
              >`
            : nothing
        }
        <label><input type="radio" name="source" value="upload" ?checked=${upload} @change=${() => (this.source = "upload")} /> Upload a <code>.tar.gz</code></label>
        ${upload ? html`<label class="field">Configuration archive <input type="file" name="archive" accept=".tar.gz,.tgz,application/gzip" /></label>` : nothing}
      </fieldset>
      <label class="field">Message (optional) <input name="message" maxlength="2000" autocomplete="off" /></label>
      ${this.progress ? html`<p role="status" id="start-run-progress">${this.progress}</p>` : nothing}
      ${this.error ? html`<p class="notice danger" role="alert" id="start-run-error">${failureText(this.error)}</p>` : nothing}
      <div class="row">
        <button class="primary" type="submit" ?disabled=${this.busy}>Start run</button>
        <button type="button" @click=${() => ((this.open = false), (this.error = null))}>Cancel</button>
      </div>
    </form>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-start-run": SsStartRun;
  }
}
