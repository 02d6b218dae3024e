// /workspaces/{id}/cloud-access — the cloud credentials runs of this workspace receive. Today
// StackShip issues none: the page says so plainly, and what a run that needs them does.
import { consume } from "@lit/context";
import { Task } from "@lit/task";
import type { Client } from "@stackship/client";
import { LitElement, html, type TemplateResult } from "lit";
import { customElement, property } from "lit/decorators.js";
import { apiContext, sessionContext } from "../app/context.ts";
import type { Session } from "../app/session.ts";
import { loadWorkspace, renderFailure, workspaceNav, workspaceStyles } from "./workspace-common.ts";

@customElement("ss-workspace-cloud-access-page")
export class SsWorkspaceCloudAccessPage extends LitElement {
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
      complete: ({ workspace }) => html`${workspaceNav(workspace, "cloud-access")}
        <h1>Cloud access for ${workspace.attributes.name}</h1>
        <div class="notice info" id="cloud-access-not-configured">
          <p><strong>No cloud access is configured for this workspace.</strong></p>
          <p>StackShip does not issue cloud credentials (workload identity) to runs yet, and this workspace has no cloud credential profile. Runs get only the StackShip state backend and the providers of the offline mirror.</p>
        </div>
        <h2>What runs of this workspace receive today</h2>
        <dl class="facts">
          <dt>Plan phase</dt><dd>No cloud credentials</dd>
          <dt>Apply phase</dt><dd>No cloud credentials</dd>
          <dt>Execution region</dt><dd>${workspace.attributes.execution_region}</dd>
        </dl>
        <p>A run whose plan needs cloud credentials it cannot get ends as <em>Plan credentials required</em>; its run page links here.</p>`,
    });
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-cloud-access-page": SsWorkspaceCloudAccessPage;
  }
}
