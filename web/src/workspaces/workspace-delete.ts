// Deleting a workspace from its page (organization administrators): type its name to confirm,
// optionally force (even while locked or with state that may still manage resources: StackShip
// runs no destroy plans), then POST through client/; refusals read as the server says them
// (a run in progress, a lock, state). On success the workspaces list opens.
import { consume } from "@lit/context";
import { deleteWorkspace, type Client } from "@stackship/client";
import { LitElement, css, html, nothing, type TemplateResult } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { dataOf } from "../app/api.ts";
import { apiContext } from "../app/context.ts";
import { navigate } from "../app/router.ts";
import { formControls, settingsForm } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";
import { perform } from "./workspace-action.ts";
import { failureText } from "./workspace-common.ts";

@customElement("ss-workspace-delete")
export class SsWorkspaceDelete extends LitElement {
  static override styles = [
    base,
    formControls,
    settingsForm,
    css`
      label.check {
        display: flex;
        gap: var(--ss-space-2);
        align-items: baseline;
        font-weight: 400;
      }
    `,
  ];

  @consume({ context: apiContext }) accessor api!: Client;
  @property({ attribute: "workspace-id" }) accessor workspaceId = "";
  @property({ attribute: "workspace-name" }) accessor workspaceName = "";

  @state() accessor typed = "";
  @state() accessor busy = false;
  @state() accessor error: unknown = null;

  override render(): TemplateResult {
    const matches = this.typed === this.workspaceName && this.workspaceName !== "";
    return html`<form id="delete-form" @submit=${(e: SubmitEvent) => void this.submitDeletion(e)}>
      <p>
        Deleting removes the workspace from every list; its runs, state versions, variables and audit history stay as records. StackShip runs no destroy
        plans: destroy what its state manages first, or force the deletion.
      </p>
      <label
        >Type <strong class="mono">${this.workspaceName}</strong> to confirm
        <input id="delete-name" name="name" autocomplete="off" .value=${this.typed} @input=${(e: Event) => (this.typed = (e.target as HTMLInputElement).value)}
      /></label>
      <label class="check"><input type="checkbox" name="force" id="delete-force" /> Delete even while locked or with state that may still manage resources</label>
      <div><button type="submit" class="danger" ?disabled=${!matches || this.busy}>Delete workspace</button></div>
      ${this.error ? html`<p class="error" role="alert" id="delete-error">${failureText(this.error)}</p>` : nothing}
    </form>`;
  }

  private async submitDeletion(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    if (this.typed !== this.workspaceName) return;
    const force = (event.target as HTMLFormElement).querySelector<HTMLInputElement>("#delete-force")!.checked;
    await perform(
      this,
      () =>
        // 204 has no body: a null stands for it so dataOf only has to judge the status.
        dataOf(
          deleteWorkspace({
            client: this.api,
            path: { workspace_id: this.workspaceId },
            body: { data: { type: "workspace-deletions", attributes: { name: this.typed, force } } },
          }).then((r) => ({ ...r, data: r.data ?? null })),
        ),
      () => navigate("/workspaces"),
    );
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-delete": SsWorkspaceDelete;
  }
}
