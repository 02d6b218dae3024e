// /runs — the organization's run inventory, as the product description's runs paragraph reads:
// Load more runs through meta.page.next_cursor; a free-text filter over run id, message and
// workspace name; status and workspace filters over the loaded rows (status initialised from
// ?status=); per row a duration (final for terminal runs, ticking otherwise) and a relative
// created time with the absolute UTC time as tooltip; while any listed run is not terminal the
// first page is re-read on a short interval and merged; an unavailable request renders as
// unavailable, never as an empty history.
import { consume } from "@lit/context";
import { Task, TaskStatus } from "@lit/task";
import { listWorkspaces, type Client, type Run } from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { dataOf, RequestFailed } from "../app/api.ts";
import {
  ATTENTION_STATUSES,
  commitLine,
  ContractError,
  isTerminal,
  RUN_STATUSES,
  RUN_STATUS_LABELS,
} from "../app/closed-sets.ts";
import { apiContext, sessionContext } from "../app/context.ts";
import { absoluteUtc, duration, relativeTime } from "../app/format.ts";
import { NAVIGATE_EVENT, replaceQuery } from "../app/router.ts";
import type { Session } from "../app/session.ts";
import "../ui/elapsed.ts";
import "../ui/status-badge.ts";
import { nextPageTask } from "../ui/next-page.ts";
import { tableHead } from "../ui/table-head.ts";
import {
  byCreatedDesc,
  isStatusFilter,
  mergeFirstPage,
  PAGE_SIZE,
  readRunsPage,
  renderCounts,
  SEARCH_BUDGET,
  SOURCE_LABELS,
  type RunStatus,
  type StatusFilter,
} from "./runs-list.ts";
import { runsPageStyles } from "./runs-page.styles.ts";

export { mergeFirstPage, PAGE_SIZE, SEARCH_BUDGET } from "./runs-list.ts";

/** What the runs page was showing, kept when the reader leaves it so Back restores it (per history entry). */
interface Remembered {
  organization: string;
  rows: Run[];
  nextCursor: string | null;
  workspaceNames: Map<string, string> | null;
  text: string;
  statusFilter: StatusFilter;
  workspaceFilter: string;
  searchUpTo: number;
  scrollY: number;
}

/** Snapshots by history-entry key; only the few newest are kept. */
const remembered = new Map<string, Remembered>();
const REMEMBERED_MAX = 5;

@customElement("ss-runs-page")
export class SsRunsPage extends LitElement {
  static override styles = runsPageStyles;

  @consume({ context: apiContext }) accessor api!: Client;
  @consume({ context: sessionContext, subscribe: true }) @state() accessor session: Session | null = null;

  /** How often the first page is re-read while a listed run is not terminal (ms). */
  @property({ type: Number, attribute: "refresh-ms" }) accessor refreshMs = 3000;

  @state() accessor rows: Run[] = [];
  @state() accessor nextCursor: string | null = null;
  @state() accessor workspaceNames: Map<string, string> | null = null;
  @state() accessor text = "";
  @state() accessor statusFilter: StatusFilter = "";
  @state() accessor workspaceFilter = "";
  @state() accessor ignoredStatus: string | null = null;
  @state() accessor refreshFailedAt: string | null = null;
  @state() accessor now = Date.now();
  /** How many loaded runs the current filter may search before it waits for "Search older runs". */
  @state() accessor searchUpTo = SEARCH_BUDGET;

  private refreshTimer: ReturnType<typeof setInterval> | null = null;
  /** This history entry's key (kept in history.state), under which Back finds what was shown. */
  private entryKey = "";
  /** What Back restores on connecting, read once by the first page's task. */
  private restoring: Remembered | null = null;
  private lastScrollY = 0;
  private readonly onScroll = () => {
    this.lastScrollY = window.scrollY;
  };
  /** A link to /runs?status=… while this page is open (the same route, so the page stays): follow its filter. */
  private readonly onLocation = () => {
    if (location.pathname.replace(/\/$/, "") !== "/runs") return;
    const requested = new URLSearchParams(location.search).get("status") ?? "";
    const next = requested === "" || isStatusFilter(requested) ? requested : "";
    this.ignoredStatus = requested !== "" && !isStatusFilter(requested) ? requested : null;
    if (next !== this.statusFilter) {
      this.filterChanged();
      this.statusFilter = next;
    }
  };

  /** The first page and the workspace names of the current organization. */
  private readonly firstPage = new Task(this, {
    args: () => [this.session?.organization ?? null] as const,
    task: async ([organization], { signal }) => {
      this.rows = [];
      this.nextCursor = null;
      this.workspaceNames = null;
      this.refreshFailedAt = null;
      if (!organization) return null;
      const restoring = this.restoring;
      this.restoring = null;
      if (restoring && restoring.organization === organization) {
        this.rows = restoring.rows;
        this.nextCursor = restoring.nextCursor;
        this.workspaceNames = restoring.workspaceNames;
        // Statuses may have moved on while the reader was away: the first page is read again and merged.
        queueMicrotask(() => void this.refresh.run());
        void this.updateComplete.then(() => requestAnimationFrame(() => window.scrollTo(0, restoring.scrollY)));
        return organization;
      }
      const [page, workspaces] = await Promise.all([
        readRunsPage(this.api, organization, signal),
        // The names only label rows: without them the ids stand in, with a note.
        dataOf(listWorkspaces({ client: this.api, path: { organization_name: organization }, signal })).catch(
          (error) => {
            if ((error as Error).name === "AbortError") throw error;
            return null;
          },
        ),
      ]);
      this.rows = [...page.data].sort(byCreatedDesc);
      this.nextCursor = page.meta.page.next_cursor;
      this.workspaceNames = workspaces ? new Map(workspaces.data.map((w) => [w.id, w.attributes.name])) : null;
      return organization;
    },
  });

  /** The next page, through meta.page.next_cursor. */
  private readonly morePage = nextPageTask(this, {
    organization: () => this.session?.organization ?? null,
    cursor: () => this.nextCursor,
    read: (organization, cursor, signal) => readRunsPage(this.api, organization, signal, cursor),
    take: (page) => {
      this.rows = mergeFirstPage(this.rows, page.data);
      this.nextCursor = page.meta.page.next_cursor;
    },
  });

  /** The first page again, merged (while a listed run is not terminal). */
  private readonly refresh = new Task(this, {
    autoRun: false,
    args: () => [this.session?.organization ?? null] as const,
    task: async ([organization], { signal }) => {
      if (!organization) return;
      try {
        const page = await readRunsPage(this.api, organization, signal);
        if (organization !== this.session?.organization) return;
        this.rows = mergeFirstPage(this.rows, page.data);
        this.refreshFailedAt = null;
      } catch (error) {
        if ((error as Error).name === "AbortError") return;
        this.refreshFailedAt ??= new Date().toISOString();
      }
    },
  });

  override connectedCallback(): void {
    super.connectedCallback();
    const state = history.state as { runsPage?: unknown } | null;
    const key = typeof state?.runsPage === "string" ? state.runsPage : null;
    const snapshot = key ? remembered.get(key) : undefined;
    if (key && snapshot) {
      // Back (or Forward) to this entry: what it showed, not a fresh first page.
      this.entryKey = key;
      this.restoring = snapshot;
      this.text = snapshot.text;
      this.statusFilter = snapshot.statusFilter;
      this.workspaceFilter = snapshot.workspaceFilter;
      this.searchUpTo = snapshot.searchUpTo;
    } else {
      this.entryKey = `runs-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
      history.replaceState({ ...(state ?? {}), runsPage: this.entryKey }, "", location.href);
      const requested = new URLSearchParams(location.search).get("status");
      if (requested !== null && requested !== "") {
        if (isStatusFilter(requested)) this.statusFilter = requested;
        else this.ignoredStatus = requested;
      }
    }
    window.addEventListener("scroll", this.onScroll, { passive: true });
    window.addEventListener(NAVIGATE_EVENT, this.onLocation);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.stopTimers();
    window.removeEventListener("scroll", this.onScroll);
    window.removeEventListener(NAVIGATE_EVENT, this.onLocation);
    const organization = this.session?.organization;
    if (organization && this.firstPage.status === TaskStatus.COMPLETE && this.entryKey) {
      remembered.delete(this.entryKey);
      remembered.set(this.entryKey, {
        organization,
        rows: this.rows,
        nextCursor: this.nextCursor,
        workspaceNames: this.workspaceNames,
        text: this.text,
        statusFilter: this.statusFilter,
        workspaceFilter: this.workspaceFilter,
        searchUpTo: this.searchUpTo,
        scrollY: this.lastScrollY,
      });
      while (remembered.size > REMEMBERED_MAX) remembered.delete(remembered.keys().next().value!);
    }
  }

  private stopTimers(): void {
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    this.refreshTimer = null;
  }

  private filtering(): boolean {
    return this.statusFilter !== "" || this.workspaceFilter !== "" || this.text.trim() !== "";
  }

  /** A filter that matches fewer than a page of the loaded runs reads the next page itself (within the budget). */
  private keepSearching(): void {
    if (!this.filtering() || !this.nextCursor || this.rows.length >= this.searchUpTo) return;
    if (
      this.firstPage.status !== TaskStatus.COMPLETE ||
      this.morePage.status === TaskStatus.PENDING ||
      this.morePage.status === TaskStatus.ERROR
    )
      return;
    if (this.visibleRows().length >= PAGE_SIZE) return;
    void this.morePage.run();
  }

  /** A changed filter gets a fresh budget counted from the runs already loaded. */
  private filterChanged(): void {
    this.searchUpTo = this.rows.length + SEARCH_BUDGET;
  }

  override updated(): void {
    // After this update, not inside it (the next read's pending state is a new update).
    queueMicrotask(() => this.keepSearching());
    const live =
      this.firstPage.status === TaskStatus.COMPLETE && this.rows.some((run) => !isTerminal(run.attributes.status));
    if (live && !this.refreshTimer) {
      this.refreshTimer = setInterval(() => {
        this.now = Date.now(); // relative times move with each re-read; running durations tick on their own (<ss-elapsed>)
        if (this.refresh.status !== TaskStatus.PENDING) void this.refresh.run();
      }, this.refreshMs);
    } else if (!live && this.refreshTimer) {
      this.stopTimers();
    }
  }

  private setStatusFilter(value: string): void {
    this.filterChanged();
    this.statusFilter = isStatusFilter(value) ? value : "";
    this.ignoredStatus = null;
    const params = new URLSearchParams(location.search);
    if (this.statusFilter) params.set("status", this.statusFilter);
    else params.delete("status");
    replaceQuery(params);
  }

  private workspaceName(run: Run): string | null {
    return this.workspaceNames?.get(run.relationships.workspace.data.id) ?? null;
  }

  private visibleRows(): Run[] {
    const needle = this.text.trim().toLowerCase();
    return this.rows.filter((run) => {
      if (
        this.statusFilter === "needs_attention"
          ? !(ATTENTION_STATUSES as readonly RunStatus[]).includes(run.attributes.status)
          : this.statusFilter && run.attributes.status !== this.statusFilter
      )
        return false;
      if (this.workspaceFilter && run.relationships.workspace.data.id !== this.workspaceFilter) return false;
      if (!needle) return true;
      const haystack = [run.id, run.attributes.message, this.workspaceName(run) ?? ""].join("\n").toLowerCase();
      return haystack.includes(needle);
    });
  }

  override render(): TemplateResult {
    const organization = this.session?.organization ?? null;
    return html`<h1>Runs</h1>
      ${
        organization
          ? html`<p class="muted">Every run of <strong>${organization}</strong>, newest first.</p>`
          : html`<p class="notice info" role="status" id="no-organization">
            ${
              this.session?.user.site_admin
                ? html`No organization exists yet. <a href="/organizations">Create one</a>.`
                : "You are not a member of any organization yet. Ask an organization admin to add you."
            }
          </p>`
      }
      ${organization ? this.renderBody() : nothing}`;
  }

  private renderBody(): TemplateResult {
    return this.firstPage.render({
      initial: () => html`<p role="status">Loading runs…</p>`,
      pending: () => html`<p role="status">Loading runs…</p>`,
      error: (error) => this.renderUnavailable(error),
      complete: () => this.renderList(),
    });
  }

  private renderUnavailable(error: unknown): TemplateResult {
    const contract = error instanceof ContractError;
    const failed = error instanceof RequestFailed ? error : null;
    return html`<div class="notice danger" role="alert" id="runs-unavailable">
      <h2>Run history unavailable</h2>
      ${
        contract
          ? html`<p>The server answered with something this dashboard does not recognise, so it shows nothing rather than guess.</p>
            <p class="mono">${error.message}</p>`
          : html`<p>The runs could not be read${failed ? html` (<span class="mono">${failed.summary}</span>)` : nothing}. This is not an empty history: try again in a moment.</p>
            ${failed?.message ? html`<p class="muted">${failed.message}</p>` : nothing}`
      }
      <button @click=${() => void this.firstPage.run()}>Try again</button>
    </div>`;
  }

  private renderList(): TemplateResult {
    const visible = this.visibleRows();
    const workspaceIds = [...new Set(this.rows.map((run) => run.relationships.workspace.data.id))];
    return html`
      ${
        this.ignoredStatus !== null
          ? html`<p class="notice attention" role="status" id="ignored-status">“${this.ignoredStatus}” is not a run status, so the list is not filtered by status.</p>`
          : nothing
      }
      <div class="filters" role="search">
        <label>Filter
          <input id="filter-text" type="search" placeholder="Run id, message or workspace" .value=${this.text} @input=${(
            e: Event,
          ) => {
            this.filterChanged();
            this.text = (e.target as HTMLInputElement).value;
          }} />
        </label>
        <label>Status
          <select id="filter-status" @change=${(e: Event) => this.setStatusFilter((e.target as HTMLSelectElement).value)}>
            <option value="" ?selected=${this.statusFilter === ""}>All statuses</option>
            <option value="needs_attention" ?selected=${this.statusFilter === "needs_attention"} title="Awaiting approval, policy soft-failed or needs recovery">Needs attention</option>
            ${RUN_STATUSES.map((status) => html`<option value=${status} ?selected=${this.statusFilter === status}>${RUN_STATUS_LABELS[status].label}</option>`)}
          </select>
        </label>
        <label>Workspace
          <select id="filter-workspace" @change=${(e: Event) => {
            this.filterChanged();
            this.workspaceFilter = (e.target as HTMLSelectElement).value;
          }}>
            <option value="" ?selected=${this.workspaceFilter === ""}>All workspaces</option>
            ${workspaceIds.map((id) => html`<option value=${id} ?selected=${this.workspaceFilter === id}>${this.workspaceNames?.get(id) ?? id}</option>`)}
          </select>
        </label>
      </div>
      ${this.workspaceNames === null ? html`<p class="muted" id="workspace-names-unavailable">Workspace names are unavailable right now; workspace ids are shown instead.</p>` : nothing}
      ${
        this.refreshFailedAt
          ? html`<p class="notice attention" role="status" id="refresh-failed">Could not refresh the list; statuses are as of ${absoluteUtc(this.refreshFailedAt)}. Retrying.</p>`
          : nothing
      }
      ${
        this.rows.length === 0
          ? html`<p id="runs-empty">No runs yet in this organization.</p>`
          : visible.length === 0
            ? html`<p id="runs-no-match">No loaded runs match these filters${this.nextCursor ? "; older runs are not loaded yet" : ""}.</p>`
            : this.renderTable(visible)
      }
      <p class="count muted" role="status" aria-live="polite">Showing ${visible.length} of ${this.rows.length} loaded run${this.rows.length === 1 ? "" : "s"}${this.nextCursor ? " (more available)" : ""}.</p>
      ${this.filtering() ? this.renderSearched(visible.length) : nothing}
      ${this.renderMore()}`;
  }

  private renderSearched(matches: number): TemplateResult {
    const searching =
      this.morePage.status === TaskStatus.PENDING && this.rows.length < this.searchUpTo && matches < PAGE_SIZE;
    const paused = this.nextCursor !== null && this.rows.length >= this.searchUpTo && matches < PAGE_SIZE;
    return html`<p class="muted" id="runs-searched">
      ${searching ? "Searching older runs… " : nothing}Searched ${this.rows.length} run${this.rows.length === 1 ? "" : "s"}${this.nextCursor ? "" : ": the whole history"}.
      ${
        paused
          ? html`<button
              id="search-older"
              @click=${() => {
                this.searchUpTo = this.rows.length + SEARCH_BUDGET;
              }}
            >
              Search older runs
            </button>`
          : nothing
      }
    </p>`;
  }

  private renderMore(): TemplateResult | typeof nothing {
    const pending = this.morePage.status === TaskStatus.PENDING;
    const failed = this.morePage.status === TaskStatus.ERROR ? this.morePage.error : null;
    return html`${
      failed
        ? html`<p class="notice danger" role="alert" id="more-failed">Older runs could not be loaded${failed instanceof RequestFailed ? html` (<span class="mono">${failed.summary}</span>)` : failed instanceof ContractError ? html`: ${failed.message}` : nothing}.</p>`
        : nothing
    }
      ${
        this.nextCursor
          ? html`<button id="load-more" ?disabled=${pending} @click=${() => void this.morePage.run()}>${pending ? "Loading more runs…" : "Load more runs"}</button>`
          : this.rows.length > 0
            ? html`<p class="muted" id="runs-end">That is every run.</p>`
            : nothing
      }`;
  }

  private renderTable(rows: Run[]): TemplateResult {
    return html`<table>
      <caption class="visually-hidden">Runs</caption>
      ${tableHead(["Run", "Workspace", "Status", "Changes", "Duration", "Created"])}
      <tbody>
        ${rows.map((run) => this.renderRow(run))}
      </tbody>
    </table>`;
  }

  private renderRow(run: Run): TemplateResult {
    const a = run.attributes;
    const terminal = isTerminal(run.attributes.status);
    const end = Date.parse(a.finished_at ?? a.updated_at);
    const workspaceId = run.relationships.workspace.data.id;
    const name = this.workspaceName(run);
    const commit = commitLine(run);
    return html`<tr data-run-id=${run.id} data-status=${a.status}>
      <td>
        <a class="message" href="/runs/${run.id}">${a.message || "(no message)"}</a>
        <div class="facts muted">
          <span class="tag kind" data-kind=${a.kind}>${a.kind === "speculative" ? "speculative" : "plan and apply"}</span>
          <span class="started-by">${a.created_by ? html`by ${a.created_by.name} · ` : nothing}${SOURCE_LABELS[a.source]}</span>
          <span class="mono run-id">${run.id}</span>
        </div>
        ${commit ? html`<div class="muted run-commit" title=${commit.title}>${commit.text}</div>` : nothing}
      </td>
      <td data-label="Workspace"><a href="/workspaces/${workspaceId}">${name ?? workspaceId}</a></td>
      <td><ss-status-badge status=${a.status}></ss-status-badge></td>
      <td class="changes" data-label="Changes">${renderCounts(run)}</td>
      <td class="duration" data-label="Duration" data-final=${terminal ? "true" : "false"}>
        <span>${terminal ? duration(end - Date.parse(a.created_at)) : html`<ss-elapsed since=${a.created_at}></ss-elapsed>`}</span>${terminal ? nothing : html`<span class="visually-hidden"> so far</span>`}
      </td>
      <td data-label="Created"><time datetime=${a.created_at} title=${absoluteUtc(a.created_at)}>${relativeTime(a.created_at, this.now)}</time></td>
    </tr>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-runs-page": SsRunsPage;
  }
}
