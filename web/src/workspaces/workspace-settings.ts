// The workspace's settings switches on its overview (issue 29): structured run output. Changed
// through client/ (PATCH /v1/workspaces/{id}, workspace:write); a reader sees the sentence only.
// Each run records the value its workspace had when it was created, which the sentence says.
import { consume } from "@lit/context";
import { updateWorkspace, type Client, type Workspace } from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { live } from "lit/directives/live.js";
import { dataOf } from "../app/api.ts";
import { apiContext } from "../app/context.ts";
import { perform } from "./workspace-action.ts";
import { controlStyles, failureText } from "./workspace-common.ts";

/** What the switch's state means, in one sentence. */
export function structuredOutputSentence(enabled: boolean): string {
  return enabled
    ? "Structured run output is on: every plan of a run created from now on also stores the redacted plan the OpenTofu CLI renders itself (json-output-redacted). Runs keep the setting they were created with."
    : "Structured run output is off: a plan stores the redacted plan for the CLI only when it imports resources. Runs keep the setting they were created with.";
}

/** The PATCH body that sets it. */
export function structuredOutputPatch(enabled: boolean): {
  data: { type: "workspaces"; attributes: { structured_run_output_enabled: boolean } };
} {
  return { data: { type: "workspaces", attributes: { structured_run_output_enabled: enabled } } };
}

@customElement("ss-workspace-settings")
export class SsWorkspaceSettings extends LitElement {
  static override styles = controlStyles;

  @consume({ context: apiContext }) accessor api!: Client;
  @property({ attribute: false }) accessor workspace: Workspace | null = null;
  /** workspace:write on this workspace. */
  @property({ type: Boolean, attribute: "can-write" }) accessor canWrite = false;

  @state() accessor busy = false;
  @state() accessor error: unknown = null;
  /** The value last confirmed by the API (null: the property's). */
  @state() accessor confirmed: boolean | null = null;

  override render(): TemplateResult | typeof nothing {
    if (!this.workspace) return nothing;
    const enabled = this.confirmed ?? this.workspace.attributes.structured_run_output_enabled;
    return html`${
      this.canWrite
        ? html`<label class="actions">
            <input type="checkbox" role="switch" id="structured-run-output" .checked=${live(enabled)} ?disabled=${this.busy} @change=${(e: Event) => void this.set((e.target as HTMLInputElement).checked)} />
            Structured run output
          </label>`
        : nothing
    }
      <p id="structured-run-output-sentence">${structuredOutputSentence(enabled)}</p>
      ${this.error ? html`<p class="error" role="alert" id="structured-run-output-error">${failureText(this.error)}</p>` : nothing}`;
  }

  private async set(enabled: boolean): Promise<void> {
    const workspace = this.workspace;
    if (!workspace) return;
    const done = await perform(
      this,
      () =>
        dataOf(
          updateWorkspace({
            client: this.api,
            path: { workspace_id: workspace.id },
            body: structuredOutputPatch(enabled),
          }),
        ),
      (updated) => (this.confirmed = updated.data.attributes.structured_run_output_enabled),
    );
    // The switch shows what the API last confirmed, not the refused click.
    if (!done) this.requestUpdate();
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-settings": SsWorkspaceSettings;
  }
}
