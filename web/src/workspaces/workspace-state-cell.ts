// One workspace's lock and current state serial, read on its own (its row of /workspaces shows it
// when the summary arrives; a failed read says so in the cell, never as "not locked").
import { consume } from "@lit/context";
import { Task } from "@lit/task";
import { getWorkspaceStateSummary, type Client } from "@stackship/client";
import { LitElement, css, html } from "lit";
import { customElement, property } from "lit/decorators.js";
import { dataOf } from "../app/api.ts";
import { apiContext } from "../app/context.ts";
import { base } from "../ui/tokens.ts";
import { checkSummary } from "./workspace-state-page.ts";

@customElement("ss-workspace-state-cell")
export class SsWorkspaceStateCell extends LitElement {
  static override styles = [
    base,
    css`
      :host {
        display: block;
      }
    `,
  ];

  @consume({ context: apiContext }) accessor api!: Client;
  @property({ attribute: "workspace-id" }) accessor workspaceId = "";
  /** "lock" shows who holds the lock; "serial" the current state version's serial. */
  @property() accessor show: "lock" | "serial" = "lock";

  private readonly summary = new Task(this, {
    args: () => [this.workspaceId] as const,
    task: async ([id], { signal }) =>
      checkSummary(
        (await dataOf(getWorkspaceStateSummary({ client: this.api, path: { workspace_id: id }, signal }))).data
          .attributes,
      ),
  });

  override render() {
    return this.summary.render({
      pending: () => html`<span class="muted">…</span>`,
      error: () => html`<span class="muted">unavailable</span>`,
      complete: (summary) => {
        if (this.show === "serial") {
          const current = summary.state_versions.find((version) => version.id === summary.current_state_version_id);
          return current ? html`serial ${current.serial}` : html`<span class="muted">no state yet</span>`;
        }
        const lock = summary.lock;
        if (!lock) return html`<span class="muted">unlocked</span>`;
        return lock.holder_kind === "run"
          ? html`locked by <a class="mono" href="/runs/${lock.holder_id}">${lock.holder_id}</a>`
          : html`locked by <span class="mono">${lock.holder_id}</span>`;
      },
    });
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-state-cell": SsWorkspaceStateCell;
  }
}
