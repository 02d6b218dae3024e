// /audit — the organization's audit history (organization admins), the durable record of who did
// what: actor, action, target, time and reason, in the chain's own order (oldest first, forward
// cursor paging through meta.page.next_cursor), filtered by action and by target over the loaded
// events. `npm run verify-audit` checks the chain and its signed checkpoints (README).
import { consume } from "@lit/context";
import { Task, TaskStatus } from "@lit/task";
import { listAuditEvents, listMemberships, type AuditEvent, type Client } from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, state } from "lit/decorators.js";
import { dataOf, RequestFailed } from "../app/api.ts";
import { apiContext, sessionContext } from "../app/context.ts";
import { absoluteUtc } from "../app/format.ts";
import type { Session } from "../app/session.ts";
import { nextPageTask } from "../ui/next-page.ts";
import { tableHead } from "../ui/table-head.ts";
import { auditPageStyles } from "./audit-page.styles.ts";

/** Events per page read. */
export const AUDIT_PAGE_SIZE = 100;

@customElement("ss-audit-page")
export class SsAuditPage extends LitElement {
  static override styles = auditPageStyles;

  @consume({ context: apiContext }) accessor api!: Client;
  @consume({ context: sessionContext, subscribe: true }) @state() accessor session: Session | null = null;

  @state() accessor events: AuditEvent[] = [];
  @state() accessor nextCursor: string | null = null;
  @state() accessor people = new Map<string, string>();
  @state() accessor action = "";
  @state() accessor target = "";

  private readonly firstPage = new Task(this, {
    args: () => [this.session?.organization ?? null] as const,
    task: async ([organization], { signal }) => {
      this.events = [];
      this.nextCursor = null;
      if (!organization) return null;
      const path = { organization_name: organization };
      const [page, members] = await Promise.all([
        dataOf(listAuditEvents({ client: this.api, path, query: { limit: AUDIT_PAGE_SIZE }, signal })),
        // Names only label actors: without them the ids stand in.
        dataOf(listMemberships({ client: this.api, path, signal })).catch(() => null),
      ]);
      this.events = page.data;
      this.nextCursor = page.meta.page.next_cursor ?? null;
      this.people = new Map(
        (members?.data ?? []).map((m) => [
          m.attributes.user_id,
          m.attributes.display_name || m.attributes.email || m.attributes.user_id,
        ]),
      );
      return organization;
    },
  });

  private readonly morePage = nextPageTask(this, {
    organization: () => this.session?.organization ?? null,
    cursor: () => this.nextCursor,
    read: (organization, cursor, signal) =>
      dataOf(
        listAuditEvents({
          client: this.api,
          path: { organization_name: organization },
          query: { limit: AUDIT_PAGE_SIZE, cursor },
          signal,
        }),
      ),
    take: (page) => {
      this.events = [...this.events, ...page.data];
      this.nextCursor = page.meta.page.next_cursor ?? null;
    },
  });

  private visible(): AuditEvent[] {
    const target = this.target.trim().toLowerCase();
    return this.events.filter((event) => {
      const a = event.attributes;
      if (this.action && a.action !== this.action) return false;
      return !target || `${a.target_type} ${a.target_id}`.toLowerCase().includes(target);
    });
  }

  override render(): TemplateResult {
    const organization = this.session?.organization ?? null;
    if (!organization)
      return html`<h1>Audit history</h1><p class="notice info" role="status">You are not a member of any organization yet.</p>`;
    return html`<h1>Audit history</h1>
      <p class="muted">
        Everything done in <strong>${organization}</strong>, oldest first, as a hash chain: <code>npm run verify-audit</code> proves no event was edited, removed or reordered.
      </p>
      ${this.firstPage.render({
        pending: () => html`<p role="status">Loading the audit history…</p>`,
        error: (error) => this.renderUnavailable(error),
        complete: () => this.renderEvents(),
      })}`;
  }

  private renderUnavailable(error: unknown): TemplateResult {
    if (error instanceof RequestFailed && (error.status === 403 || error.status === 404)) {
      return html`<p class="notice info" role="status" id="audit-not-allowed">Only an administrator of ${this.session?.organization} reads its audit history.</p>`;
    }
    return html`<div class="notice danger" role="alert">
      <p>The audit history could not be read${error instanceof RequestFailed ? html` (${error.summary})` : nothing}. This is not an empty history: try again in a moment.</p>
      <button @click=${() => void this.firstPage.run()}>Try again</button>
    </div>`;
  }

  private renderEvents(): TemplateResult {
    const visible = this.visible();
    const actions = [...new Set(this.events.map((event) => event.attributes.action))].sort();
    const pending = this.morePage.status === TaskStatus.PENDING;
    const failed = this.morePage.status === TaskStatus.ERROR ? this.morePage.error : null;
    return html`<div class="filters" role="search">
        <label
          >Action
          <select id="filter-action" @change=${(e: Event) => (this.action = (e.target as HTMLSelectElement).value)}>
            <option value="">All actions</option>
            ${actions.map((action) => html`<option value=${action} ?selected=${action === this.action}>${action}</option>`)}
          </select>
        </label>
        <label
          >Target
          <input id="filter-target" type="search" placeholder="e.g. runs or run-…" .value=${this.target} @input=${(e: Event) => (this.target = (e.target as HTMLInputElement).value)} />
        </label>
      </div>
      ${
        this.events.length === 0
          ? html`<p id="audit-empty">No audit events yet.</p>`
          : visible.length === 0
            ? html`<p id="audit-no-match">No loaded event matches${this.nextCursor ? "; later events are not loaded yet" : ""}.</p>`
            : this.renderTable(visible)
      }
      <p class="muted" role="status" aria-live="polite" id="audit-count">
        Showing ${visible.length} of ${this.events.length} loaded event${this.events.length === 1 ? "" : "s"}${this.nextCursor ? " (more available)" : ""}.
      </p>
      ${failed ? html`<p class="notice danger" role="alert">Later events could not be loaded${failed instanceof RequestFailed ? html` (${failed.summary})` : nothing}.</p>` : nothing}
      ${
        this.nextCursor
          ? html`<button id="load-more" ?disabled=${pending} @click=${() => void this.morePage.run()}>${pending ? "Loading more events…" : "Load more events"}</button>`
          : this.events.length > 0
            ? html`<p class="muted" id="audit-end">That is the whole history so far.</p>`
            : nothing
      }`;
  }

  private renderTable(events: AuditEvent[]): TemplateResult {
    return html`<div class="table-wrap">
      <table id="audit-table">
        <caption class="visually-hidden">Audit events</caption>
        ${tableHead(["#", "When", "Who", "Action", "Target", "Reason"])}
        <tbody>
          ${events.map((event) => {
            const a = event.attributes;
            const who = a.actor_id === null ? "StackShip" : (this.people.get(a.actor_id) ?? a.actor_id);
            return html`<tr data-audit-id=${event.id}>
              <td class="seq">${a.sequence}</td>
              <td><time datetime=${a.created_at}>${absoluteUtc(a.created_at)}</time></td>
              <td>${who}</td>
              <td class="mono">${a.action}</td>
              <td class="mono">${a.target_type} ${a.target_id}</td>
              <td>${a.reason ?? html`<span class="muted">—</span>`}</td>
            </tr>`;
          })}
        </tbody>
      </table>
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-audit-page": SsAuditPage;
  }
}
