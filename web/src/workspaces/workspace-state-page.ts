// /workspaces/{id}/state — the workspace's published state versions (serial, publication time,
// digest, the run that published it), which one is current, and the workspace lock.
import { getWorkspaceStateSummary, type WorkspaceStateSummaryDocument } from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, property } from "lit/decorators.js";
import { dataOf } from "../app/api.ts";
import { ContractError } from "../app/closed-sets.ts";
import { absoluteUtc, relativeTime } from "../app/format.ts";
import { unavailableReason, workspaceStyles } from "./workspace-common.ts";
import { workspaceFrame } from "./workspace-frame.ts";
import { WorkspaceLoader } from "./workspace-loader.ts";

type Summary = WorkspaceStateSummaryDocument["data"]["attributes"];

const LOCK_HOLDERS = ["run", "user"] as const;

/** Checks the closed sets the page renders. */
export function checkSummary(summary: Summary): Summary {
  if (summary.lock && !(LOCK_HOLDERS as readonly string[]).includes(summary.lock.holder_kind)) {
    throw new ContractError(
      `The workspace lock names a holder kind “${String(summary.lock.holder_kind)}” that StackShip does not define.`,
    );
  }
  return summary;
}

export function renderLock(lock: Summary["lock"]): TemplateResult {
  if (!lock) return html`<p id="lock-state">The workspace is not locked.</p>`;
  return html`<p id="lock-state">
    Locked by ${lock.holder_kind === "run" ? html`run <a class="mono" href="/runs/${lock.holder_id}">${lock.holder_id}</a>` : html`<span class="mono">${lock.holder_id}</span>`}
    since <time datetime=${lock.locked_at} title=${absoluteUtc(lock.locked_at)}>${relativeTime(lock.locked_at)}</time>${lock.reason ? html` (${lock.reason})` : nothing}.
  </p>`;
}

@customElement("ss-workspace-state-page")
export class SsWorkspaceStatePage extends LitElement {
  static override styles = workspaceStyles;

  @property({ attribute: "workspace-id" }) accessor workspaceId = "";

  private readonly page = new WorkspaceLoader(this, (api, id, signal) =>
    dataOf(getWorkspaceStateSummary({ client: api, path: { workspace_id: id }, signal })).then(
      (document) => ({ summary: checkSummary(document.data.attributes) }),
      // The workspace is shown without its state versions: their failure is said in its place.
      (error: unknown) => {
        if ((error as Error).name === "AbortError") throw error;
        return { summary: error as Error };
      },
    ),
  );

  override render(): TemplateResult {
    return workspaceFrame(this.page, {
      tab: "state",
      loading: "Loading state…",
      heading: (workspace) => `State of ${workspace.attributes.name}`,
      body: ({ summary }) => (summary instanceof Error ? this.renderUnavailable(summary) : this.renderSummary(summary)),
    });
  }

  private renderUnavailable(error: Error): TemplateResult {
    return html`<div class="notice danger" role="alert" id="state-unavailable">
      <p>The state versions of this workspace are unavailable${unavailableReason(error)}. This does not mean it has no state.</p>
    </div>`;
  }

  private renderSummary(summary: Summary): TemplateResult {
    const current = summary.state_versions.find((v) => v.id === summary.current_state_version_id);
    return html`<section aria-labelledby="lock-heading">
        <h2 id="lock-heading">Lock</h2>
        ${renderLock(summary.lock)}
      </section>
      <section aria-labelledby="versions-heading">
        <h2 id="versions-heading">Published state versions</h2>
        ${
          summary.state_versions.length === 0
            ? html`<p id="no-state">No state has been published yet: the first applied run publishes serial 1.</p>`
            : html`<p>Current: ${current ? html`serial <strong>${current.serial}</strong>, published ${relativeTime(current.published_at)}` : html`<span class="muted">not recorded</span>`}.</p>
              <table>
                <caption class="visually-hidden">Published state versions, newest first</caption>
                <thead><tr><th scope="col">Serial</th><th scope="col">Published</th><th scope="col">Digest (SHA-256)</th><th scope="col">Size</th><th scope="col">Run</th></tr></thead>
                <tbody>
                  ${summary.state_versions.map(
                    (v) => html`<tr data-state-version-id=${v.id}>
                      <td>${v.serial}${v.id === summary.current_state_version_id ? html` <span class="muted">(current)</span>` : nothing}</td>
                      <td><time datetime=${v.published_at} title=${absoluteUtc(v.published_at)}>${absoluteUtc(v.published_at)}</time></td>
                      <td class="mono digest">${v.digest}</td>
                      <td>${v.size_bytes.toLocaleString("en")} bytes</td>
                      <td>${v.run_id ? html`<a class="mono" href="/runs/${v.run_id}">${v.run_id}</a>` : html`<span class="muted">outside a run</span>`}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
              ${summary.truncated ? html`<p class="muted" id="state-truncated">Only the newest 100 published versions are listed.</p>` : nothing}`
        }
      </section>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-state-page": SsWorkspaceStatePage;
  }
}
