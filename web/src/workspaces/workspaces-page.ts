// /workspaces — the organization's workspaces: name, project, latest run (status and time, from
// the organization's newest runs), lock and current state serial (each row's own summary), a
// filter by name (read by the server, so it finds every workspace), pages of PAGE_SIZE through
// the list's cursor (Load more workspaces), and New workspace (name, project, working directory, description, whether plans
// need a cloud credential), which lands on the new workspace's page.
import { consume } from "@lit/context";
import { Task } from "@lit/task";
import {
  createWorkspace,
  listOrganizationRuns,
  listProjects,
  listWorkspaces,
  type Client,
  type Run,
  type Workspace,
} from "@stackship/client";
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

/** Workspaces per page read. */
export const PAGE_SIZE = 20;

/** How long the name filter waits for typing to pause before it asks the server (ms). */
export const FILTER_DEBOUNCE_MS = 250;

interface Loaded {
  /** The name filter the server applied to these workspaces ("" for none). */
  filter: string;
  workspaces: Workspace[];
  nextCursor: string | null;
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
  /** The filter the list was last read with (the input's value once typing paused). */
  @state() accessor appliedFilter = "";
  @state() accessor loadingMore = false;
  @state() accessor moreError: unknown = null;
  @state() accessor creating = false;
  @state() accessor error: string | null = null;
  @state() accessor busy = false;

  private filterTimer: ReturnType<typeof setTimeout> | null = null;

  private readonly load = new Task(this, {
    args: () => [this.session?.organization ?? null, this.appliedFilter] as const,
    task: async ([organization, filter], { signal }): Promise<Loaded | null> => {
      if (!organization) return null;
      const path = { organization_name: organization };
      const name = filter.trim();
      const [workspaces, projects, runs] = await Promise.all([
        dataOf(
          listWorkspaces({ client: this.api, path, query: { limit: PAGE_SIZE, ...(name ? { name } : {}) }, signal }),
        ),
        dataOf(listProjects({ client: this.api, path, signal })).catch(() => null),
        dataOf(listOrganizationRuns({ client: this.api, path, query: { limit: LATEST_RUNS_SCAN }, signal })).catch(
          () => null,
        ),
      ]);
      const latest = new Map<string, Run>();
      for (const run of runs?.data ?? []) {
        checkRun(run);
        const id = run.relationships.workspace.data.id;
        if (!latest.has(id)) latest.set(id, run); // newest first
      }
      return {
        filter: name,
        workspaces: workspaces.data,
        nextCursor: workspaces.meta?.page.next_cursor ?? null,
        projects: (projects?.data ?? []).map((p) => ({ id: p.id, name: p.attributes.name })),
        latest,
        scannedAll: runs !== null && runs.meta.page.next_cursor === null,
      };
    },
  });

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    if (this.filterTimer) clearTimeout(this.filterTimer);
  }

  private typed(value: string): void {
    this.filter = value;
    if (this.filterTimer) clearTimeout(this.filterTimer);
    this.filterTimer = setTimeout(() => {
      this.appliedFilter = this.filter.trim();
    }, FILTER_DEBOUNCE_MS);
  }

  /** The next page, through meta.page.next_cursor, appended to what is shown. */
  private async loadMore(loaded: Loaded): Promise<void> {
    const organization = this.session?.organization;
    if (!organization || !loaded.nextCursor) return;
    this.loadingMore = true;
    this.moreError = null;
    try {
      const page = await dataOf(
        listWorkspaces({
          client: this.api,
          path: { organization_name: organization },
          query: { limit: PAGE_SIZE, cursor: loaded.nextCursor, ...(loaded.filter ? { name: loaded.filter } : {}) },
        }),
      );
      // The same Loaded object the task holds: rows and cursor move on together.
      loaded.workspaces = [...loaded.workspaces, ...page.data];
      loaded.nextCursor = page.meta?.page.next_cursor ?? null;
    } catch (error) {
      this.moreError = error;
    } finally {
      this.loadingMore = false;
    }
  }

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
      structured_run_output_enabled: (form.elements.namedItem("structured_run_output_enabled") as HTMLInputElement)
        .checked,
    };
    this.busy = true;
    this.error = null;
    try {
      const created = await dataOf(
        createWorkspace({
          client: this.api,
          path: { organization_name: organization },
          body: {
            data: {
              type: "workspaces",
              attributes,
              ...(project ? { relationships: { project: { data: { type: "projects", id: project } } } } : {}),
            },
          },
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
    if (!organization)
      return html`<h1>Workspaces</h1><p class="notice info" role="status">You are not a member of any organization yet.</p>`;
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
    const visible = loaded.workspaces;
    const projectName = new Map(loaded.projects.map((p) => [p.id, p.name]));
    return html`<div class="bar">
        <label
          >Filter by name
          <input id="filter-name" type="search" .value=${this.filter} @input=${(e: Event) => this.typed((e.target as HTMLInputElement).value)} />
        </label>
        ${this.creating ? nothing : html`<button class="primary" id="new-workspace" @click=${() => (this.creating = true)}>New workspace</button>`}
      </div>
      ${this.creating ? this.renderForm(loaded) : nothing}
      ${
        visible.length === 0
          ? loaded.filter
            ? html`<p id="workspaces-no-match">No workspace name contains “${loaded.filter}”.</p>`
            : html`<p id="workspaces-empty">No workspaces yet. Create one here, or let <code>tofu init</code> create it from a <code>cloud</code> block.</p>`
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
      <p class="muted" role="status" aria-live="polite" id="workspaces-count">
        Showing ${visible.length} workspace${visible.length === 1 ? "" : "s"}${loaded.filter ? html` whose name contains “${loaded.filter}”` : nothing}${loaded.nextCursor ? " (more available)" : ""}.
      </p>
      ${
        this.moreError
          ? html`<p class="notice danger" role="alert" id="more-workspaces-failed">More workspaces could not be loaded${this.moreError instanceof RequestFailed ? html` (<span class="mono">${this.moreError.summary}</span>)` : nothing}.</p>`
          : nothing
      }
      ${
        loaded.nextCursor
          ? html`<button id="load-more-workspaces" ?disabled=${this.loadingMore} @click=${() => void this.loadMore(loaded)}>
              ${this.loadingMore ? "Loading more workspaces…" : "Load more workspaces"}
            </button>`
          : nothing
      }`;
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
        <label class="check"
          ><input type="checkbox" name="structured_run_output_enabled" checked /> Structured run output (each plan also stores the redacted plan the OpenTofu CLI renders
          itself)</label
        >
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
