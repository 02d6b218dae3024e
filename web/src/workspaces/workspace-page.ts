// /workspaces/{id} — the workspace overview: its settings, its recent runs (from the organization
// run inventory), and links to its state, cloud access and source settings pages.
import { Task } from "@lit/task";
import { getWorkspaceStateSummary, listOrganizationRuns, type Run } from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, property } from "lit/decorators.js";
import { dataOf } from "../app/api.ts";
import { checkRun, commitLine, isTerminal } from "../app/closed-sets.ts";
import { absoluteUtc, duration, relativeTime } from "../app/format.ts";
import "../ui/status-badge.ts";
import { unavailableReason, workspaceStyles } from "./workspace-common.ts";
import { workspaceFrame } from "./workspace-frame.ts";
import { WorkspaceLoader } from "./workspace-loader.ts";
import { checkSummary, renderLock } from "./workspace-state-page.ts";
import "./start-run.ts";
import "./workspace-lock.ts";
import "./workspace-delete.ts";
import "./workspace-general.ts";
import "./workspace-settings.ts";

/** How many of the organization's newest runs the overview looks through for this workspace's. */
const SCAN_PAGES = 5;
const SCAN_PAGE_SIZE = 100;

@customElement("ss-workspace-page")
export class SsWorkspacePage extends LitElement {
  static override styles = workspaceStyles;

  @property({ attribute: "workspace-id" }) accessor workspaceId = "";

  private readonly page = new WorkspaceLoader(this);

  private readonly state = new Task(this, {
    args: () => [this.workspaceId] as const,
    task: async ([id], { signal }) =>
      checkSummary(
        (await dataOf(getWorkspaceStateSummary({ client: this.page.api, path: { workspace_id: id }, signal }))).data
          .attributes,
      ),
  });

  private readonly runs = new Task(this, {
    args: () => [this.page.value?.organization ?? null, this.workspaceId] as const,
    task: async ([organization, workspaceId], { signal }) => {
      if (!organization) return null;
      const found: Run[] = [];
      let cursor: string | undefined;
      let scanned = 0;
      for (let page = 0; page < SCAN_PAGES; page += 1) {
        const document = await dataOf(
          listOrganizationRuns({
            client: this.page.api,
            path: { organization_name: organization },
            query: { limit: SCAN_PAGE_SIZE, cursor },
            signal,
          }),
        );
        document.data.forEach(checkRun);
        scanned += document.data.length;
        found.push(...document.data.filter((run) => run.relationships.workspace.data.id === workspaceId));
        cursor = document.meta.page.next_cursor ?? undefined;
        if (!cursor) break;
      }
      return { runs: found, scanned, complete: cursor === undefined };
    },
  });

  override render(): TemplateResult {
    return workspaceFrame(this.page, {
      tab: "overview",
      loading: "Loading the workspace…",
      heading: (workspace) => workspace.attributes.name,
      body: ({ workspace, organization, permissions }) => {
        const a = workspace.attributes;
        return html`${a.description ? html`<p>${a.description}</p>` : nothing}
          <dl class="facts">
            <dt>Organization</dt><dd>${organization ?? html`<span class="muted">not recorded</span>`}</dd>
            <dt>Tracked branch</dt><dd class="mono">${a.tracked_branch}</dd>
            <dt>Working directory</dt><dd class="mono">${a.working_directory || "/"}</dd>
            <dt>OpenTofu version</dt><dd class="mono">${a.opentofu_version}</dd>
            <dt>Execution region</dt><dd>${a.execution_region}</dd>
            <dt>Approval window</dt><dd>${duration(a.approval_ttl_seconds * 1000)}</dd>
            <dt>Created</dt><dd><time datetime=${a.created_at} title=${absoluteUtc(a.created_at)}>${relativeTime(a.created_at)}</time></dd>
            <dt>Workspace id</dt><dd class="mono">${workspace.id}</dd>
          </dl>
          <section aria-labelledby="state-heading">
            <h2 id="state-heading">State and lock</h2>
            ${this.renderState(permissions.write)}
            <p>Every published version is on the <a href="/workspaces/${workspace.id}/state">state page</a>.</p>
          </section>
          ${
            permissions.write
              ? html`<details data-testid="general-settings">
                  <summary>General settings</summary>
                  <ss-workspace-general
                    .workspace=${workspace}
                    .organization=${organization}
                    ?can-move=${this.page.session?.organizationAdmin ?? false}
                    @ss-workspace-changed=${() => this.page.reload()}
                  ></ss-workspace-general>
                </details>`
              : nothing
          }
          <section aria-labelledby="run-output-heading">
            <h2 id="run-output-heading">Run output</h2>
            <ss-workspace-settings .workspace=${workspace} ?can-write=${permissions.write}></ss-workspace-settings>
          </section>
          <section aria-labelledby="runs-heading">
            <h2 id="runs-heading">Runs</h2>
            ${permissions.write ? html`<ss-start-run workspace-id=${workspace.id} .latest=${this.latestConfiguration()}></ss-start-run>` : nothing}
            ${this.renderRuns()}
          </section>
          ${
            permissions.verify_federation_profiles
              ? html`<details class="danger-zone" data-testid="delete-workspace">
                  <summary>Delete workspace</summary>
                  <ss-workspace-delete workspace-id=${workspace.id} workspace-name=${a.name}></ss-workspace-delete>
                </details>`
              : nothing
          }`;
      },
    });
  }

  /** The configuration version of this workspace's newest run, to start another run on. */
  private latestConfiguration(): { configurationVersionId: string; runId: string } | null {
    const newest = this.runs.value?.runs[0];
    return newest
      ? { configurationVersionId: newest.relationships.configuration_version.data.id, runId: newest.id }
      : null;
  }

  private renderState(canWrite: boolean): TemplateResult {
    return this.state.render({
      initial: () => html`<p role="status">Loading state…</p>`,
      pending: () => html`<p role="status">Loading state…</p>`,
      error: (error) =>
        html`<p class="notice danger" role="alert" id="overview-state-unavailable">The current state version and the lock are unavailable${unavailableReason(error)}.</p>`,
      complete: (summary) => {
        const current = summary.state_versions.find((v) => v.id === summary.current_state_version_id);
        return html`<p id="current-state">
            ${
              current
                ? html`Current state: serial <strong>${current.serial}</strong>, published <time datetime=${current.published_at} title=${absoluteUtc(current.published_at)}>${relativeTime(current.published_at)}</time>${current.run_id ? html` by run <a class="mono" href="/runs/${current.run_id}">${current.run_id}</a>` : nothing}.`
                : html`No state has been published yet.`
            }
          </p>
          ${renderLock(summary.lock)}
          <ss-workspace-lock
            workspace-id=${this.workspaceId}
            user-id=${this.page.session?.user.id ?? ""}
            ?can-write=${canWrite}
            ?can-force=${this.page.session?.organizationAdmin ?? false}
            .lock=${summary.lock}
            @ss-workspace-lock-changed=${() => void this.state.run()}
          ></ss-workspace-lock>`;
      },
    });
  }

  private renderRuns(): TemplateResult {
    return this.runs.render({
      initial: () => html`<p role="status">Loading runs…</p>`,
      pending: () => html`<p role="status">Loading runs…</p>`,
      error: (error) =>
        html`<p class="notice danger" role="alert" id="workspace-runs-unavailable">The runs of this workspace are unavailable${unavailableReason(error)}. This is not an empty history.</p>`,
      complete: (result) => {
        if (!result)
          return html`<p class="muted">The organization of this workspace is not known, so its runs cannot be listed.</p>`;
        const scope = result.complete ? "" : ` among the organization's ${result.scanned} newest runs`;
        if (result.runs.length === 0) return html`<p id="workspace-runs-empty">No runs${scope}.</p>`;
        const now = Date.now();
        return html`<table>
            <caption class="visually-hidden">Runs of this workspace</caption>
            <thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Duration</th><th scope="col">Created</th></tr></thead>
            <tbody>
              ${result.runs.map((run) => {
                const a = run.attributes;
                const terminal = isTerminal(a.status);
                const end = terminal ? Date.parse(a.finished_at ?? a.updated_at) : now;
                const commit = commitLine(run);
                return html`<tr>
                  <td>
                    <a href="/runs/${run.id}">${a.message || "(no message)"}</a>
                    <div class="mono muted">${run.id}</div>
                    ${commit ? html`<div class="muted run-commit" title=${commit.title}>${commit.text}</div>` : nothing}
                  </td>
                  <td><ss-status-badge status=${a.status}></ss-status-badge></td>
                  <td>${duration(end - Date.parse(a.created_at))}</td>
                  <td><time datetime=${a.created_at} title=${absoluteUtc(a.created_at)}>${relativeTime(a.created_at, now)}</time></td>
                </tr>`;
              })}
            </tbody>
          </table>
          <p class="muted">${result.runs.length} run${result.runs.length === 1 ? "" : "s"}${scope}. <a href="/runs">All runs of the organization</a>.</p>`;
      },
    });
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-page": SsWorkspacePage;
  }
}
