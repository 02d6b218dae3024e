// /workspaces/{id}/source — where runs of this workspace come from: the tracked branch and
// working directory it records, and plainly that no repository is connected (runs come from the
// API and the tofu CLI).
import { consume } from "@lit/context";
import { Task } from "@lit/task";
import type { Client } from "@stackship/client";
import { LitElement, html, type TemplateResult } from "lit";
import { customElement, property } from "lit/decorators.js";
import { apiContext, sessionContext } from "../app/context.ts";
import type { Session } from "../app/session.ts";
import { loadWorkspace, renderFailure, workspaceNav, workspaceStyles } from "./workspace-common.ts";

@customElement("ss-workspace-source-page")
export class SsWorkspaceSourcePage extends LitElement {
  static override styles = workspaceStyles;

  @consume({ context: apiContext }) accessor api!: Client;
  @consume({ context: sessionContext, subscribe: true }) accessor session: Session | null = null;
  @property({ attribute: "workspace-id" }) accessor workspaceId = "";

  private readonly workspace = new Task(this, {
    args: () => [this.workspaceId] as const,
    task: ([id], { signal }) => loadWorkspace(this.api, this.session, id, signal),
  });

  override render(): TemplateResult {
    return this.workspace.render({
      initial: () => html`<p role="status">Loading the workspace…</p>`,
      pending: () => html`<p role="status">Loading the workspace…</p>`,
      error: (error) => renderFailure("The workspace is unavailable", error),
      complete: ({ workspace }) => {
        const a = workspace.attributes;
        return html`${workspaceNav(workspace, "source")}
          <h1>Source settings for ${a.name}</h1>
          <dl class="facts">
            <dt>Tracked branch</dt><dd class="mono" id="tracked-branch">${a.tracked_branch}</dd>
            <dt>Working directory</dt><dd class="mono" id="working-directory">${a.working_directory || "/"}</dd>
            <dt>OpenTofu version</dt><dd class="mono">${a.opentofu_version}</dd>
          </dl>
          <div class="notice info" id="source-not-connected">
            <p><strong>No Git repository is connected to this workspace.</strong></p>
            <p>Pushes to the tracked branch do not start runs yet. New runs start from the CLI (<code>tofu plan</code> / <code>tofu apply</code> with a <code>cloud</code> block naming this workspace) or from the API (upload a configuration version, then create a run).</p>
          </div>`;
      },
    });
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-source-page": SsWorkspaceSourcePage;
  }
}
