import { consume } from "@lit/context";
import { Task } from "@lit/task";
import { getRunPlanChanges, type Client, type PlanDiff } from "@stackship/client";
import { LitElement, html, nothing, type PropertyValues } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import { tableHead } from "../ui/table-head.ts";
import { base } from "../ui/tokens.ts";
import { RequestFailed, unwrap } from "./api-result.ts";
import { ROW_HEIGHT, planChangesStyles } from "./plan-changes.styles.ts";
import { attributeRows, leafText, type Leaf } from "./plan-values.ts";
import { ACTION_LABELS, PLAN_CHANGE_ACTIONS, known, type PlanDiffResource } from "./review-model.ts";

/** Rows rendered above and below the visible window. */
const OVERSCAN = 8;
const WITHHELD = {
  unresolvable_masks: "its sensitivity masks could not be resolved, so nothing was shown rather than risk a secret",
  unrecognized_actions: "OpenTofu reported actions StackShip does not recognize",
  unsupported_format_version: "the plan's format version is not supported",
  size_limit: "the change list had to fit 4 MiB",
} as const;

/**
 * The plan stage's Changes tab: the per-resource redacted changes of `GET
 * /v1/runs/{run_id}/plan-changes` (stackship.plan-diff/v1) with address, provider, action and the
 * attribute-level before/after of the selected resource; sensitive values redacted and unknown
 * values marked exactly as the artifact says; a replace classified as such; truncation stated.
 * Filters by action and address narrow the list, which is virtualized (only the rows in view
 * exist in the DOM), so a 5,000-resource plan stays usable.
 *
 * @summary The redacted plan changes of a run.
 */
@customElement("ss-plan-changes")
export class SsPlanChanges extends LitElement {
  static override styles = [base, planChangesStyles];

  @consume({ context: apiContext, subscribe: true })
  @state()
  accessor client!: Client;

  @property({ attribute: "run-id" }) accessor runId = "";

  @state() accessor actionFilter = "all";
  @state() accessor addressFilter = "";
  @state() accessor selected: number | null = null;
  @state() accessor listScrollTop = 0;
  @state() accessor viewportHeight = 384;
  /** The row (position in the filtered list) that holds the list's single tab stop. */
  @state() accessor focusPosition = 0;

  private filteredCache: { resources: readonly PlanDiffResource[]; key: string; rows: number[] } | null = null;

  readonly changes = new Task(this, {
    args: () => [this.client, this.runId] as const,
    task: async ([client, runId], { signal }): Promise<PlanDiff | null> => {
      if (!client || !runId) return null;
      return unwrap(await getRunPlanChanges({ client, path: { run_id: runId }, signal }));
    },
  });

  protected override willUpdate(changed: PropertyValues<this>) {
    if (changed.has("actionFilter") || changed.has("addressFilter")) {
      this.listScrollTop = 0;
      this.focusPosition = 0;
      const viewport = this.renderRoot.querySelector(".viewport");
      if (viewport) viewport.scrollTop = 0;
    }
  }

  override render() {
    return this.changes.render({
      initial: () => html`<p class="muted">Loading the plan changes…</p>`,
      pending: () => html`<p class="muted" role="status">Loading the plan changes…</p>`,
      error: (error) => this.renderError(error),
      complete: (diff) => (diff ? this.renderDiff(diff) : nothing),
    });
  }

  private renderError(error: unknown) {
    if (error instanceof RequestFailed && error.code === "RUN_PLAN_CHANGES_NOT_READY") {
      return html`<p class="notice" data-testid="changes-not-ready">Plan not finished yet: the changes appear when the plan finishes.</p>`;
    }
    if (error instanceof RequestFailed && error.code === "RUN_PLAN_CHANGES_UNAVAILABLE") {
      return html`<p class="notice" data-testid="changes-unavailable">This plan produced no change list (it failed, was canceled, or the list could not be built).</p>`;
    }
    const failure = error instanceof RequestFailed ? error : null;
    return html`<p class="notice danger" role="alert" data-testid="changes-error">
      The plan changes could not be read: ${(error as Error).message} ${failure ? html`<code>${failure.summary}</code>` : nothing}
    </p>`;
  }

  /** Indexes of the resources passing both filters (cached per filter pair). */
  private filtered(resources: readonly PlanDiffResource[]): number[] {
    const key = `${this.actionFilter}\u0000${this.addressFilter}`;
    if (this.filteredCache?.key === key && this.filteredCache.resources === resources) return this.filteredCache.rows;
    const needle = this.addressFilter.trim().toLowerCase();
    const rows: number[] = [];
    for (let i = 0; i < resources.length; i++) {
      const r = resources[i];
      if (this.actionFilter !== "all" && r.action !== this.actionFilter) continue;
      if (needle && !r.address.toLowerCase().includes(needle)) continue;
      rows.push(i);
    }
    this.filteredCache = { resources, key, rows };
    return rows;
  }

  private renderDiff(diff: PlanDiff) {
    const resources = diff.resources;
    const counts = new Map<string, number>();
    for (const r of resources) counts.set(r.action, (counts.get(r.action) ?? 0) + 1);
    const rows = this.filtered(resources);
    const first = Math.max(0, Math.floor(this.listScrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((this.listScrollTop + this.viewportHeight) / ROW_HEIGHT) + OVERSCAN);
    const visible = rows.slice(first, last);
    // The single tab stop stays inside the rendered window, even after the list was scrolled away from it.
    const tabStop = this.focusPosition >= first && this.focusPosition < last ? this.focusPosition : first;
    const selected = this.selected !== null ? resources[this.selected] : undefined;
    return html`<div class="notes">
        <p class="muted">
          This view omits resources whose only actions are no-op or read and counts a create-and-delete pair as one replace, so its totals can differ
          from the plan counts.
        </p>
        ${diff.truncated ? this.renderTruncation(diff) : nothing}
        ${diff.plan_errored ? html`<p class="notice danger">OpenTofu reported the plan as errored: this change list may be incomplete.</p>` : nothing}
      </div>
      <div class="filters">
        <label
          >Action
          <select @change=${(e: Event) => (this.actionFilter = (e.target as HTMLSelectElement).value)} aria-label="Filter by action">
            <option value="all" ?selected=${this.actionFilter === "all"}>All actions (${resources.length})</option>
            ${PLAN_CHANGE_ACTIONS.filter((a) => counts.has(a)).map(
              (a) => html`<option value=${a} ?selected=${this.actionFilter === a}>${ACTION_LABELS[a]} (${counts.get(a)})</option>`,
            )}
          </select>
        </label>
        <label
          >Address contains
          <input type="search" .value=${this.addressFilter} @input=${(e: Event) => (this.addressFilter = (e.target as HTMLInputElement).value)} aria-label="Filter by address" />
        </label>
        <span class="count" role="status" data-testid="changes-count">${rows.length} of ${resources.length} resources shown</span>
      </div>
      ${
        rows.length === 0
          ? html`<p class="notice" data-testid="changes-empty">${resources.length === 0 ? "This plan changes no resources." : "No resource matches these filters."}</p>`
          : html`<div class="viewport" @scroll=${this.onScroll} tabindex="-1" data-testid="changes-viewport">
            <div
              class="rows"
              role="list"
              aria-label="Changed resources (arrow keys move between rows)"
              style="height:${rows.length * ROW_HEIGHT}px"
              @keydown=${(e: KeyboardEvent) => this.onRowKeydown(e, rows.length)}
            >
              ${visible.map((index, offset) => this.renderRow(resources[index], index, first + offset, rows.length, tabStop))}
            </div>
          </div>`
      }
      ${selected ? this.renderDetail(selected) : nothing}`;
  }

  private renderTruncation(diff: PlanDiff) {
    const t = diff.truncation;
    const parts: string[] = [];
    if (t.cut > 0) parts.push(`${t.cut} cut beyond the ${t.max_resources.toLocaleString("en-US")}-resource limit`);
    if (t.withheld > 0) parts.push(`${t.withheld} with their before/after detail withheld to fit ${Math.round(t.max_bytes / 1048576)} MiB`);
    if (t.dropped > 0) parts.push(`${t.dropped} dropped entirely to fit ${Math.round(t.max_bytes / 1048576)} MiB`);
    return html`<p class="notice attention" data-testid="changes-truncated">
      This change list is truncated: the plan changes ${t.changed_resources.toLocaleString("en-US")} resources${parts.length ? html`; ${parts.join(", ")}` : nothing}.
    </p>`;
  }

  private renderRow(r: PlanDiffResource, index: number, position: number, total: number, tabStop: number) {
    const action = known(PLAN_CHANGE_ACTIONS, r.action);
    return html`<div class="row" role="listitem" aria-setsize=${total} aria-posinset=${position + 1} data-pos=${position} style="top:${position * ROW_HEIGHT}px">
      <button
        type="button"
        tabindex=${position === tabStop ? "0" : "-1"}
        aria-pressed=${this.selected === index ? "true" : "false"}
        @focus=${() => (this.focusPosition = position)}
        @click=${() => (this.selected = this.selected === index ? null : index)}
      >
        <span class="action a-${action ?? "unknown"}">${action ? ACTION_LABELS[action] : `unknown action “${r.action}”`}</span>
        <span class="address" title=${r.address}>${r.address}</span>
        <span class="provider">${r.provider ?? "provider not recorded"}</span>
      </button>
    </div>`;
  }

  private renderDetail(r: PlanDiffResource) {
    const action = known(PLAN_CHANGE_ACTIONS, r.action);
    return html`<section class="detail" aria-label="Changes of ${r.address}" data-testid="changes-detail">
      <h4>${r.address}</h4>
      <p class="muted">
        ${action ? ACTION_LABELS[action] : `unknown action “${r.action}”`} · actions <code>${r.actions.join(", ")}</code> · ${r.provider ?? "provider not recorded"}
        ${r.action_reason ? html` · reason <code>${r.action_reason}</code>` : nothing}${r.previous_address ? html` · moved from <code>${r.previous_address}</code>` : nothing}
        ${r.deposed ? html` · deposed object <code>${r.deposed}</code>` : nothing}${r.importing ? " · importing" : nothing}
      </p>
      ${
        r.detail_withheld
          ? html`<p class="notice attention" data-testid="detail-withheld">
            Before/after detail withheld: ${r.withheld_reason ? (WITHHELD[r.withheld_reason] ?? r.withheld_reason) : "no reason recorded"}.
          </p>`
          : this.renderAttributes(r)
      }
    </section>`;
  }

  private renderAttributes(r: PlanDiffResource) {
    const rows = attributeRows(r.before, r.after, r.replace_paths ?? []);
    if (rows.length === 0) return html`<p class="muted">No attribute values on either side.</p>`;
    return html`<table>
      ${tableHead(["Attribute", "Before", "After"])}
      <tbody>
        ${rows.map(
          (row) => html`<tr class=${row.changed ? "changed" : ""}>
            <td class="path">
              <code>${row.path}</code> ${row.changed ? html`<span class="tag">changed</span>` : nothing}
              ${row.forcesReplacement ? html`<span class="tag">forces replacement</span>` : nothing}
            </td>
            <td class="value">${this.leaf(row.before)}</td>
            <td class="value">${this.leaf(row.after)}</td>
          </tr>`,
        )}
      </tbody>
    </table>`;
  }

  private leaf(leaf: Leaf) {
    return leaf.kind === "value" || leaf.kind === "absent" ? leafText(leaf) : html`<span class="marker">${leafText(leaf)}</span>`;
  }

  /** Roving focus over the virtualized rows: the row is scrolled into the rendered window, then focused. */
  private async onRowKeydown(event: KeyboardEvent, total: number) {
    const page = Math.max(1, Math.floor(this.viewportHeight / ROW_HEIGHT) - 1);
    const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
    let next: number;
    if (event.key in moves) next = this.focusPosition + moves[event.key];
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = total - 1;
    else return;
    event.preventDefault();
    next = Math.max(0, Math.min(total - 1, next));
    const viewport = this.renderRoot.querySelector<HTMLElement>(".viewport");
    if (viewport) {
      const top = next * ROW_HEIGHT;
      if (top < viewport.scrollTop) viewport.scrollTop = top;
      else if (top + ROW_HEIGHT > viewport.scrollTop + viewport.clientHeight) viewport.scrollTop = top + ROW_HEIGHT - viewport.clientHeight;
      this.listScrollTop = viewport.scrollTop;
    }
    this.focusPosition = next;
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLButtonElement>(`[data-pos="${next}"] button`)?.focus();
  }

  private scrollFrame = 0;
  private onScroll(event: Event) {
    const viewport = event.currentTarget as HTMLElement;
    if (this.scrollFrame) return;
    this.scrollFrame = requestAnimationFrame(() => {
      this.scrollFrame = 0;
      this.listScrollTop = viewport.scrollTop;
      this.viewportHeight = viewport.clientHeight || this.viewportHeight;
    });
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-plan-changes": SsPlanChanges;
  }
}
