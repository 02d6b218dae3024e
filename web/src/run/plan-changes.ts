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
import {
  ATTRIBUTE_SYMBOLS,
  attributeRows,
  leafText,
  searchableText,
  type AttributeRow,
  type Leaf,
} from "./plan-values.ts";
import {
  ACTION_LABELS,
  PLAN_CHANGE_ACTIONS,
  known,
  type PlanChangeAction,
  type PlanDiffResource,
} from "./review-model.ts";

/** Rows rendered above and below the visible window. */
const OVERSCAN = 8;
const WITHHELD = {
  unresolvable_masks: "its sensitivity masks could not be resolved, so nothing was shown rather than risk a secret",
  unrecognized_actions: "OpenTofu reported actions StackShip does not recognize",
  unsupported_format_version: "the plan's format version is not supported",
  size_limit: "the change list had to fit 4 MiB",
} as const;

/** The CLI's symbol for each resource action, always shown beside its word. */
export const ACTION_SYMBOLS: Record<PlanChangeAction, string> = {
  create: "+",
  delete: "−",
  update: "~",
  replace: "∓",
  forget: "·",
  forget_replace: "∓",
  unknown: "?",
};

export const GROUPINGS = { none: "None", module: "Module", type: "Resource type" } as const;
export type Grouping = keyof typeof GROUPINGS;

/** One line of the virtualized list: a group heading or a resource (its index in the diff). */
type Entry = { kind: "group"; label: string; count: number } | { kind: "resource"; index: number; ordinal: number };

function groupKey(r: PlanDiffResource, grouping: Grouping): string {
  if (grouping === "module") return r.module_address ?? "root module";
  return r.type ?? "type not recorded";
}

/**
 * The plan stage's Changes tab: the per-resource redacted changes of `GET
 * /v1/runs/{run_id}/plan-changes` (stackship.plan-diff/v1) with address, provider, action and the
 * attribute-level before/after of the selected resource; sensitive values redacted and unknown
 * values marked exactly as the artifact says; a replace classified as such; truncation stated.
 * Values read as the CLI prints them (`{…} → (known after apply)`, unchanged attributes folded,
 * `+ − ~ ∓` beside their words). Filters by action and by address or attribute text narrow the
 * list, which can be grouped by module or resource type and is virtualized (only the rows in view
 * exist in the DOM), so a 5,000-resource plan stays usable. On wide screens (≥ 1100 px) the detail
 * sits beside the list.
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
  @state() accessor grouping: Grouping = "none";
  @state() accessor selected: number | null = null;
  /** The address last copied (its button says "Copied" for a moment). */
  @state() accessor copied: string | null = null;
  @state() accessor copyFailed: string | null = null;
  /** Resources whose unchanged attributes are unfolded. */
  @state() accessor unfolded: ReadonlySet<number> = new Set();
  @state() accessor listScrollTop = 0;
  @state() accessor viewportHeight = 384;
  /** The row (position in the filtered list) that holds the list's single tab stop. */
  @state() accessor focusPosition = 0;

  private filteredCache: {
    resources: readonly PlanDiffResource[];
    key: string;
    entries: Entry[];
    matches: number;
  } | null = null;
  private searchCache = new WeakMap<PlanDiffResource, string>();
  private copiedTimer = 0;

  readonly changes = new Task(this, {
    args: () => [this.client, this.runId] as const,
    task: async ([client, runId], { signal }): Promise<PlanDiff | null> => {
      if (!client || !runId) return null;
      return unwrap(await getRunPlanChanges({ client, path: { run_id: runId }, signal }));
    },
  });

  override disconnectedCallback() {
    super.disconnectedCallback();
    clearTimeout(this.copiedTimer);
  }

  protected override willUpdate(changed: PropertyValues<this>) {
    if (changed.has("actionFilter") || changed.has("addressFilter") || changed.has("grouping")) {
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

  /** The address and attribute text one resource is searched in (computed once per resource). */
  private haystack(r: PlanDiffResource): string {
    let text = this.searchCache.get(r);
    if (text === undefined) {
      text = r.detail_withheld ? "" : searchableText(r.before, r.after);
      this.searchCache.set(r, text);
    }
    return text;
  }

  /** The list's entries: the resources passing both filters, under group headings when grouped (cached per filters and grouping). */
  private filtered(resources: readonly PlanDiffResource[]): { entries: Entry[]; matches: number } {
    const key = `${this.actionFilter}\u0000${this.addressFilter}\u0000${this.grouping}`;
    if (this.filteredCache?.key === key && this.filteredCache.resources === resources) return this.filteredCache;
    const needle = this.addressFilter.trim().toLowerCase();
    const rows: number[] = [];
    for (let i = 0; i < resources.length; i++) {
      const r = resources[i];
      if (this.actionFilter !== "all" && r.action !== this.actionFilter) continue;
      if (needle && !r.address.toLowerCase().includes(needle) && !this.haystack(r).includes(needle)) continue;
      rows.push(i);
    }
    let entries: Entry[];
    if (this.grouping === "none") {
      entries = rows.map((index, ordinal) => ({ kind: "resource", index, ordinal }));
    } else {
      const groups = new Map<string, number[]>();
      for (const index of rows) {
        const group = groupKey(resources[index], this.grouping);
        const members = groups.get(group);
        if (members) members.push(index);
        else groups.set(group, [index]);
      }
      entries = [];
      let ordinal = 0;
      for (const label of [...groups.keys()].sort()) {
        const members = groups.get(label)!;
        entries.push({ kind: "group", label, count: members.length });
        for (const index of members) entries.push({ kind: "resource", index, ordinal: ordinal++ });
      }
    }
    this.filteredCache = { resources, key, entries, matches: rows.length };
    return this.filteredCache;
  }

  private renderDiff(diff: PlanDiff) {
    const resources = diff.resources;
    const counts = new Map<string, number>();
    for (const r of resources) counts.set(r.action, (counts.get(r.action) ?? 0) + 1);
    const { entries, matches } = this.filtered(resources);
    const first = Math.max(0, Math.floor(this.listScrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(
      entries.length,
      Math.ceil((this.listScrollTop + this.viewportHeight) / ROW_HEIGHT) + OVERSCAN,
    );
    // The single tab stop stays inside the rendered window, even after the list was scrolled away from it.
    let tabStop =
      this.focusPosition >= first && this.focusPosition < last && entries[this.focusPosition]?.kind === "resource"
        ? this.focusPosition
        : -1;
    for (let p = first; tabStop < 0 && p < last; p++) if (entries[p].kind === "resource") tabStop = p;
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
              (a) =>
                html`<option value=${a} ?selected=${this.actionFilter === a}>${ACTION_LABELS[a]} (${counts.get(a)})</option>`,
            )}
          </select>
        </label>
        <label
          >Address or attribute contains
          <input
            type="search"
            .value=${this.addressFilter}
            @input=${(e: Event) => (this.addressFilter = (e.target as HTMLInputElement).value)}
            aria-label="Filter by address or attribute text"
          />
        </label>
        <label
          >Group by
          <select @change=${(e: Event) => (this.grouping = (e.target as HTMLSelectElement).value as Grouping)} aria-label="Group by" data-testid="changes-grouping">
            ${(Object.keys(GROUPINGS) as Grouping[]).map((g) => html`<option value=${g} ?selected=${this.grouping === g}>${GROUPINGS[g]}</option>`)}
          </select>
        </label>
        <span class="count" role="status" data-testid="changes-count">${matches} of ${resources.length} resources shown</span>
      </div>
      <p class="visually-hidden" role="status" data-testid="changes-copy-status">
        ${this.copied ? `Copied ${this.copied}` : this.copyFailed ? `Could not copy ${this.copyFailed}` : ""}
      </p>
      <div class="layout ${selected ? "with-detail" : ""}" @keydown=${(e: KeyboardEvent) => this.onEscape(e)}>
        ${
          matches === 0
            ? html`<p class="notice" data-testid="changes-empty">${resources.length === 0 ? "This plan changes no resources." : "No resource matches these filters."}</p>`
            : html`<div class="viewport" @scroll=${this.onScroll} tabindex="-1" data-testid="changes-viewport">
              <div
                class="rows"
                role="list"
                aria-label="Changed resources (arrow keys move between rows, Enter opens one)"
                style="height:${entries.length * ROW_HEIGHT}px"
                @keydown=${(e: KeyboardEvent) => this.onRowKeydown(e, entries)}
              >
                ${entries.slice(first, last).map((entry, offset) => this.renderEntry(resources, entry, first + offset, matches, tabStop))}
              </div>
            </div>`
        }
        ${selected ? this.renderDetail(selected, this.selected!) : nothing}
      </div>`;
  }

  private renderTruncation(diff: PlanDiff) {
    const t = diff.truncation;
    const parts: string[] = [];
    if (t.cut > 0) parts.push(`${t.cut} cut beyond the ${t.max_resources.toLocaleString("en-US")}-resource limit`);
    if (t.withheld > 0)
      parts.push(
        `${t.withheld} with their before/after detail withheld to fit ${Math.round(t.max_bytes / 1048576)} MiB`,
      );
    if (t.dropped > 0) parts.push(`${t.dropped} dropped entirely to fit ${Math.round(t.max_bytes / 1048576)} MiB`);
    return html`<p class="notice attention" data-testid="changes-truncated">
      This change list is truncated: the plan changes ${t.changed_resources.toLocaleString("en-US")} resources${parts.length ? html`; ${parts.join(", ")}` : nothing}.
    </p>`;
  }

  private renderEntry(
    resources: readonly PlanDiffResource[],
    entry: Entry,
    position: number,
    total: number,
    tabStop: number,
  ) {
    if (entry.kind === "group") {
      return html`<div class="row group" role="listitem" data-pos=${position} style="top:${position * ROW_HEIGHT}px" data-testid="changes-group">
        <span role="heading" aria-level="4" class="group-name">${entry.label}</span>
        <span class="count">${entry.count} ${entry.count === 1 ? "resource" : "resources"}</span>
      </div>`;
    }
    const r = resources[entry.index];
    const index = entry.index;
    return html`<div
      class="row resource"
      role="listitem"
      aria-setsize=${total}
      aria-posinset=${entry.ordinal + 1}
      data-pos=${position}
      style="top:${position * ROW_HEIGHT}px"
    >
      <button
        type="button"
        class="open"
        tabindex=${position === tabStop ? "0" : "-1"}
        aria-pressed=${this.selected === index ? "true" : "false"}
        @focus=${() => (this.focusPosition = position)}
        @click=${() => (this.selected = index)}
      >
        ${this.actionLabel(r)}
        <span class="address" title=${r.address}>${r.address}</span>
        <span class="provider">${r.provider ?? "provider not recorded"}</span>
      </button>
      ${this.copyButton(r.address, "-1")}
    </div>`;
  }

  /** `+ create`, `∓ replace`: the symbol is decoration, the word is what is read. */
  private actionLabel(r: PlanDiffResource) {
    const action = known(PLAN_CHANGE_ACTIONS, r.action);
    return html`<span class="action a-${action ?? "unknown"}"
      ><span class="sym" aria-hidden="true">${ACTION_SYMBOLS[action ?? "unknown"]}</span> ${action ? ACTION_LABELS[action] : `unknown action “${r.action}”`}</span
    >`;
  }

  private copyButton(address: string, tabindex: "0" | "-1") {
    const done = this.copied === address;
    return html`<button type="button" class="copy" tabindex=${tabindex} aria-label=${done ? "Copied" : "Copy address"} title="Copy ${address}" @click=${() => this.copy(address)}>
      ${done ? "Copied" : "Copy"}
    </button>`;
  }

  private async copy(address: string) {
    clearTimeout(this.copiedTimer);
    try {
      await navigator.clipboard.writeText(address);
      this.copied = address;
      this.copyFailed = null;
    } catch {
      this.copied = null;
      this.copyFailed = address;
    }
    this.copiedTimer = window.setTimeout(() => {
      this.copied = null;
      this.copyFailed = null;
    }, 2000);
  }

  private renderDetail(r: PlanDiffResource, index: number) {
    const action = known(PLAN_CHANGE_ACTIONS, r.action);
    return html`<section class="detail" aria-label="Changes of ${r.address}" data-testid="changes-detail">
      <div class="detail-head">
        <h4>${r.address}</h4>
        ${this.copyButton(r.address, "0")}
        <button type="button" class="close" @click=${() => this.closeDetail()}>Close</button>
      </div>
      <p class="muted">
        ${this.actionLabel(r)} · actions <code>${r.actions.join(", ")}</code> · ${r.provider ?? "provider not recorded"}
        ${r.action_reason ? html` · reason <code>${r.action_reason}</code>` : nothing}${r.previous_address ? html` · moved from <code>${r.previous_address}</code>` : nothing}
        ${r.deposed ? html` · deposed object <code>${r.deposed}</code>` : nothing}${r.importing ? " · importing" : nothing}
      </p>
      ${
        r.detail_withheld
          ? html`<p class="notice attention" data-testid="detail-withheld">
            Before/after detail withheld: ${r.withheld_reason ? (WITHHELD[r.withheld_reason] ?? r.withheld_reason) : "no reason recorded"}.
          </p>`
          : this.renderAttributes(r, index, action)
      }
    </section>`;
  }

  /** Escape in the list or the detail closes the detail and returns to the list. */
  private onEscape(event: KeyboardEvent) {
    if (event.key !== "Escape" || this.selected === null) return;
    event.preventDefault();
    void this.closeDetail();
  }

  private async closeDetail() {
    this.selected = null;
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLButtonElement>('.row button.open[tabindex="0"]')?.focus();
  }

  private renderAttributes(r: PlanDiffResource, index: number, action: PlanChangeAction | null) {
    const rows = attributeRows(r.before, r.after, r.replace_paths ?? []);
    if (rows.length === 0) return html`<p class="muted">No attribute values on either side.</p>`;
    const unchanged = rows.filter((row) => row.change === "unchanged").length;
    const open = this.unfolded.has(index);
    const shown = open ? rows : rows.filter((row) => row.change !== "unchanged");
    // In a create or a delete every attribute is added or removed: the word would only repeat the action.
    const words = action !== "create" && action !== "delete";
    return html`<table>
        ${tableHead(["Attribute", "Before", "After"])}
        <tbody>
          ${shown.map((row) => this.renderAttribute(row, words))}
        </tbody>
      </table>
      ${
        unchanged > 0
          ? html`<button type="button" class="fold" aria-expanded=${open ? "true" : "false"} data-testid="changes-unchanged" @click=${() => this.toggleFold(index)}>
            ${open ? "Hide" : "Show"} ${unchanged} unchanged ${unchanged === 1 ? "attribute" : "attributes"}
          </button>`
          : nothing
      }`;
  }

  private renderAttribute(row: AttributeRow, words: boolean) {
    const symbol = ATTRIBUTE_SYMBOLS[row.change];
    return html`<tr class="c-${row.change}">
      <td class="path">
        <span class="sym" aria-hidden="true">${symbol}</span><code>${row.path}</code>
        ${words && row.changed ? html`<span class="tag">${row.change}</span>` : nothing}
        ${row.forcesReplacement ? html`<span class="tag">forces replacement</span>` : nothing}
      </td>
      <td class="value">${this.leaf(row.before)}</td>
      <td class="value">${this.leaf(row.after)}</td>
    </tr>`;
  }

  private toggleFold(index: number) {
    const next = new Set(this.unfolded);
    if (next.has(index)) next.delete(index);
    else next.add(index);
    this.unfolded = next;
  }

  private leaf(leaf: Leaf) {
    return leaf.kind === "value" || leaf.kind === "absent" || leaf.kind === "collection"
      ? leafText(leaf)
      : html`<span class="marker">${leafText(leaf)}</span>`;
  }

  /** Roving focus over the virtualized rows (group headings are skipped): the row is scrolled into the rendered window, then focused. */
  private async onRowKeydown(event: KeyboardEvent, entries: readonly Entry[]) {
    if (!(event.target as HTMLElement).matches("button.open")) return;
    const page = Math.max(1, Math.floor(this.viewportHeight / ROW_HEIGHT) - 1);
    const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
    const total = entries.length;
    let next: number;
    let step: number;
    if (event.key in moves) {
      next = this.focusPosition + moves[event.key];
      step = Math.sign(moves[event.key]);
    } else if (event.key === "Home") {
      next = 0;
      step = 1;
    } else if (event.key === "End") {
      next = total - 1;
      step = -1;
    } else return;
    event.preventDefault();
    next = Math.max(0, Math.min(total - 1, next));
    while (entries[next]?.kind === "group") next += step;
    if (next < 0 || next >= total) {
      // Past the first or last resource (a heading at the edge): search back the other way.
      next = Math.max(0, Math.min(total - 1, next));
      while (entries[next]?.kind === "group") next -= step;
    }
    if (next < 0 || next >= total) return;
    const viewport = this.renderRoot.querySelector<HTMLElement>(".viewport");
    if (viewport) {
      // Keep a group heading just above the first row in view.
      const top = Math.max(0, (next - (next > 0 && entries[next - 1].kind === "group" ? 1 : 0)) * ROW_HEIGHT);
      if (top < viewport.scrollTop) viewport.scrollTop = top;
      else if (next * ROW_HEIGHT + ROW_HEIGHT > viewport.scrollTop + viewport.clientHeight)
        viewport.scrollTop = next * ROW_HEIGHT + ROW_HEIGHT - viewport.clientHeight;
      this.listScrollTop = viewport.scrollTop;
    }
    this.focusPosition = next;
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLButtonElement>(`[data-pos="${next}"] button.open`)?.focus();
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
