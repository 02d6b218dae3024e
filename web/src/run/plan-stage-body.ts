import { LitElement, html, nothing } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { base } from "../ui/tokens.ts";
import { evidenceStyles } from "./evidence.styles.ts";
import "./plan-changes.ts";
import "./run-console.ts";

type Tab = "log" | "changes";

/**
 * The plan stage's body: two tabs, the plan log (the inline console) and Changes (the redacted
 * per-resource changes). Each tab's content is created the first time it is shown, so the plan
 * changes are read only when someone opens the tab.
 *
 * @summary The plan log and the Changes tab.
 */
@customElement("ss-plan-stage-body")
export class SsPlanStageBody extends LitElement {
  static override styles = [base, evidenceStyles];

  @property({ attribute: "run-id" }) accessor runId = "";
  /** Whether the plan has finished (the Changes tab says so instead of reading too early). */
  @property({ type: Boolean, attribute: "plan-finished" }) accessor planFinished = false;

  /** Whether the plan is running (its log is held by the runner until it finishes). */
  @property({ type: Boolean, attribute: "plan-running" }) accessor planRunning = false;
  @state() accessor tab: Tab = "log";
  @state() accessor opened = new Set<Tab>(["log"]);

  override render() {
    return html`<div class="stack">
      <div role="tablist" aria-label="Plan evidence" @keydown=${this.onKeydown}>
        ${this.tabButton("log", "Log")} ${this.tabButton("changes", "Changes")}
      </div>
      <div role="tabpanel" id="panel-log" aria-labelledby="tab-log" ?hidden=${this.tab !== "log"}>
        ${this.opened.has("log") ? html`<ss-run-console run-id=${this.runId} phase="plan" ?held=${this.planRunning}></ss-run-console>` : nothing}
      </div>
      <div role="tabpanel" id="panel-changes" aria-labelledby="tab-changes" ?hidden=${this.tab !== "changes"}>
        ${
          this.opened.has("changes")
            ? this.planFinished
              ? html`<ss-plan-changes run-id=${this.runId}></ss-plan-changes>`
              : html`<p class="notice" data-testid="changes-not-ready">Plan not finished yet: the changes appear when the plan finishes.</p>`
            : nothing
        }
      </div>
    </div>`;
  }

  private tabButton(tab: Tab, label: string) {
    const selected = this.tab === tab;
    return html`<button
      type="button"
      role="tab"
      id="tab-${tab}"
      aria-selected=${selected ? "true" : "false"}
      aria-controls="panel-${tab}"
      tabindex=${selected ? "0" : "-1"}
      @click=${() => this.select(tab)}
    >
      ${label}
    </button>`;
  }

  /** Shows `tab`, creating its content the first time. */
  select(tab: Tab) {
    this.tab = tab;
    if (!this.opened.has(tab)) this.opened = new Set([...this.opened, tab]);
  }

  private async onKeydown(event: KeyboardEvent) {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    event.preventDefault();
    this.select(this.tab === "log" ? "changes" : "log");
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLButtonElement>(`#tab-${this.tab}`)?.focus();
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-plan-stage-body": SsPlanStageBody;
  }
}
