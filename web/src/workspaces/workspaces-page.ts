// /workspaces — the organization's workspaces: name, project, latest run (status and time, from
// the organization's newest runs), lock and current state serial (each row's own summary), a
// filter by name, and New workspace (name, project, working directory, description, whether plans
// need a cloud credential), which lands on the new workspace's page.
import { consume } from "@lit/context";
import { Task } from "@lit/task";
import { createWorkspace, listOrganizationRuns, listProjects, listWorkspaces, type Client, type Run, type Workspace } from "@stackship/client";
import { LitElement, css, html, nothing, type TemplateResult } from "lit";
import { customElement, state } from "lit/decorators.js";
import { dataOf, RequestFailed } from "../app/api.ts";
import { checkRun } from "../app/closed-sets.ts";
import { apiContext, sessionContext } from "../app/context.ts";
import { absoluteUtc, relativeTime } from "../app/format.ts";
import { navigate } from "../app/router.ts";
import type { Session } from "../app/session.ts";
import { dataTable, formControls, listPage } from "../ui/shared-styles.ts";
import "../ui/status-badge.ts";
import { tableHead } from "../ui/table-head.ts";
import { base } from "../ui/tokens.ts";
import "./workspace-state-cell.ts";
import { WORKSPACE_NAME_PATTERN } from "../ui/patterns.ts";

/** How many of the organization's newest runs are read for each workspace's latest run. */
export const LATEST_RUNS_SCAN = 100;

interface Loaded {
  workspaces: Workspace[];
  projects: Array<{ id: string; name: string }>;
  latest: Map<string, Run>;
  /** Whether every workspace's latest run is among the runs read (false: older ones show "not among the newest"). */
  scannedAll: boolean;
}

@customElement("ss-workspaces-page")
export class SsWorkspacesPage extends LitElement {
  static override styles = [
    base,
    dataTable,
    formControls,
    listPage,
    css`
      .bar {
        display: flex;
        flex-wrap: wrap;
        gap: var(--ss-space-4);
        align-items: end;
        margin: var(--ss-space-4) 0;
      }
      .bar label,
      form label {
        display: grid;
        gap: var(--ss-space-1);
      }
      form {
        display: grid;
        gap: var(--ss-space-3);
        max-width: 480px;
        margin-bottom: var(--ss-space-4);
      }
      form .check {
        display: flex;
        gap: var(--ss-space-2);
        align-items: center;
      }
    `,
  ];

  @consume({ context: apiContext }) accessor api!: Client;
  @consume({ context: sessionContext, subscribe: true }) @state() accessor session: Session | null = null;

  @state() accessor filter = "";
  @state() accessor creating = false;
  @state() accessor error: string | null = null;
  @state() accessor busy = false;

  private readonly load = new Task(this, {
    args: () => [this.session?.organization ?? null] as const,
    task: async ([organization], { signal }): Promise<Loaded | null> => {
      if (!organization) return null;
      const path = { organization_name: organization };
      const [workspaces, projects, runs] = await Promise.all([
        dataOf(listWorkspaces({ client: this.api, path, signal })),
        dataOf(listProjects({ client: this.api, path, signal })).catch(() => null),
        dataOf(listOrganizationRuns({ client: this.api, path, query: { limit: LATEST_RUNS_SCAN }, signal })).catch(() => null),
      ]);
      const latest = new Map<string, Run>();
      for (const run of runs?.data ?? []) {
        checkRun(run);
        const id = run.relationships.workspace.data.id;
        if (!latest.has(id)) latest.set(id, run); // newest first
      }
      return {
        workspaces: [...workspaces.data].sort((a, b) => a.attributes.name.localeCompare(b.attributes.name)),
        projects: (projects?.data ?? []).map((p) => ({ id: p.id, name: p.attributes.name })),
        latest,
        scannedAll: runs !== null && runs.meta.page.next_cursor === null,
      };
    },
  });

  private async create(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const organization = this.session?.organization;
    if (!organization) return;
    const form = event.target as HTMLFormElement;
    const field = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    const project = field("project");
    const attributes = {
      name: field("name"),
      ...(field("working_directory") ? { working_directory: field("working_directory") } : {}),
      ...(field("description") ? { description: field("description") } : {}),
      plan_requires_credential: (form.elements.namedItem("plan_requires_credential") as HTMLInputElement).checked,
    };
    this.busy = true;
    this.error = null;
    try {
      const created = await dataOf(
        createWorkspace({
          client: this.api,
          path: { organization_name: organization },
          body: { data: { type: "workspaces", attributes, ...(project ? { relationships: { project: { data: { type: "projects", id: project } } } } : {}) } },
        }),
      );
      navigate(`/workspaces/${created.data.id}`);
    } catch (error) {
      this.error = error instanceof RequestFailed ? error.message : "The workspace could not be created.";
    } finally {
      this.busy = false;
    }
  }

  override render(): TemplateResult {
    const organization = this.session?.organization ?? null;
    if (!organization) return html`<h1>Workspaces</h1><p class="notice info" role="status">You are not a member of any organization yet.</p>`;
    return html`<h1>Workspaces</h1>
      ${this.load.render({
        pending: () => html`<p role="status">Loading workspaces…</p>`,
        error: (error) =>
          html`<div class="notice danger" role="alert" id="workspaces-unavailable">
            <p>The workspaces could not be read${error instanceof RequestFailed ? html` (${error.summary})` : nothing}. Try again in a moment.</p>
            <button @click=${() => void this.load.run()}>Try again</button>
          </div>`,
        complete: (loaded) => (loaded ? this.renderLoaded(loaded) : nothing),
      })}`;
  }

  private renderLoaded(loaded: Loaded): TemplateResult {
    const needle = this.filter.trim().toLowerCase();
    const visible = loaded.workspaces.filter((w) => w.attributes.name.toLowerCase().includes(needle));
    const projectName = new Map(loaded.projects.map((p) => [p.id, p.name]));
    return html`<div class="bar">
        <label
          >Filter by name
          <input id="filter-name" type="search" .value=${this.filter} @input=${(e: Event) => (this.filter = (e.target as HTMLInputElement).value)} />
        </label>
        ${this.creating ? nothing : html`<button class="primary" id="new-workspace" @click=${() => (this.creating = true)}>New workspace</button>`}
      </div>
      ${this.creating ? this.renderForm(loaded) : nothing}
      ${
        loaded.workspaces.length === 0
          ? html`<p id="workspaces-empty">No workspaces yet. Create one here, or let <code>tofu init</code> create it from a <code>cloud</code> block.</p>`
          : visible.length === 0
            ? html`<p id="workspaces-no-match">No workspace name contains “${this.filter}”.</p>`
            : html`<div class="table-wrap">
              <table id="workspaces-table">
                <caption class="visually-hidden">Workspaces</caption>
                ${tableHead(["Workspace", "Project", "Latest run", "Lock", "State"])}
                <tbody>
                  ${visible.map((w) => this.renderRow(w, projectName, loaded))}
                </tbody>
              </table>
            </div>`
      }
      <p class="muted" role="status" aria-live="polite" id="workspaces-count">Showing ${visible.length} of ${loaded.workspaces.length} workspace${loaded.workspaces.length === 1 ? "" : "s"}.</p>`;
  }

  private renderRow(w: Workspace, projectName: Map<string, string>, loaded: Loaded): TemplateResult {
    const run = loaded.latest.get(w.id);
    const projectId = w.relationships.project.data.id;
    return html`<tr data-workspace-id=${w.id}>
      <td><a href="/workspaces/${w.id}">${w.attributes.name}</a>${w.attributes.description ? html`<div class="muted">${w.attributes.description}</div>` : nothing}</td>
      <td>${projectName.get(projectId) ?? projectId}</td>
      <td>
        ${
          run
            ? html`<a href="/runs/${run.id}"><ss-status-badge status=${run.attributes.status}></ss-status-badge></a>
              <time datetime=${run.attributes.created_at} title=${absoluteUtc(run.attributes.created_at)}>${relativeTime(run.attributes.created_at)}</time>`
            : html`<span class="muted">${loaded.scannedAll ? "no runs yet" : `none among the newest ${LATEST_RUNS_SCAN} runs`}</span>`
        }
      </td>
      <td><ss-workspace-state-cell workspace-id=${w.id} show="lock"></ss-workspace-state-cell></td>
      <td><ss-workspace-state-cell workspace-id=${w.id} show="serial"></ss-workspace-state-cell></td>
    </tr>`;
  }

  private renderForm(loaded: Loaded): TemplateResult {
    return html`<h2>New workspace</h2>
      <form id="new-workspace-form" @submit=${(e: SubmitEvent) => void this.create(e)}>
        <label>Name <input name="name" required autocomplete="off" pattern=${WORKSPACE_NAME_PATTERN} /></label>
        <label
          >Project
          <select name="project">
            ${loaded.projects.map((p, i) => html`<option value=${p.id} ?selected=${i === 0}>${p.name}</option>`)}
          </select>
        </label>
        <label>Working directory (optional) <input name="working_directory" autocomplete="off" placeholder="e.g. infra/prod" /></label>
        <label>Description (optional) <input name="description" autocomplete="off" maxlength="1000" /></label>
        <label class="check"><input type="checkbox" name="plan_requires_credential" /> Plans need a cloud credential from a federation profile</label>
        ${this.error ? html`<p class="notice danger" role="alert" id="new-workspace-error">${this.error}</p>` : nothing}
        <div class="row">
          <button class="primary" type="submit" ?disabled=${this.busy}>Create workspace</button>
          <button type="button" @click=${() => ((this.creating = false), (this.error = null))}>Cancel</button>
        </div>
      </form>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspaces-page": SsWorkspacesPage;
  }
}
