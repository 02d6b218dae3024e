import { consume } from "@lit/context";
import { Task, TaskStatus } from "@lit/task";
import { getRunLog, type Client } from "@stackship/client";
import { LitElement, html, nothing } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import { base } from "../ui/tokens.ts";
import { unwrap } from "./api-result.ts";
import { runConsoleStyles } from "./run-console.styles.ts";

/** The newest decoded log text a console keeps. */
export const CONSOLE_MAX_CHARS = 512 * 1024;
/** One HTTP log window. */
const WINDOW = 1024 * 1024;
const CAPTIONS = { plan: "Plan log", policy: "Policy log", apply: "Apply log" } as const;

/**
 * One phase's inline console: the ordered sanitized log read from
 * `GET /v1/runs/{run_id}/logs/{phase}` when the element first connects (its stage's first
 * expansion), keeping at most the newest 512 KiB of text. Refresh log reads what was added
 * since. The live WebSocket feed is not attached yet, so the control is always shown.
 *
 * @summary A phase's log.
 */
@customElement("ss-run-console")
export class SsRunConsole extends LitElement {
  static override styles = [base, runConsoleStyles];

  @consume({ context: apiContext, subscribe: true })
  @state()
  accessor client!: Client;

  @property({ attribute: "run-id" }) accessor runId = "";
  @property() accessor phase: "plan" | "policy" | "apply" = "plan";

  @state() accessor text = "";
  @state() accessor complete = false;
  @state() accessor clipped = false;
  private offset = 0;
  @state() private accessor generation = 0;

  /** Reads from the last offset to the end of what is stored, appending. */
  readonly log = new Task(this, {
    args: () => [this.client, this.runId, this.phase, this.generation] as const,
    task: async ([client, runId, phase], { signal }) => {
      if (!client || !runId) return this.text;
      for (let windows = 0; windows < 64; windows++) {
        const window = unwrap(await getRunLog({ client, path: { run_id: runId, phase }, query: { offset: this.offset, limit: WINDOW }, signal })).data.attributes;
        this.appendText(window.text);
        const moved = window.next_offset !== this.offset;
        this.offset = window.next_offset;
        this.complete = window.complete;
        if (window.complete || !moved || window.text.length === 0) break;
      }
      return this.text;
    },
  });

  private appendText(chunk: string) {
    if (chunk.length === 0) return;
    const next = this.text + chunk;
    if (next.length > CONSOLE_MAX_CHARS) {
      this.clipped = true;
      this.text = next.slice(next.length - CONSOLE_MAX_CHARS);
    } else {
      this.text = next;
    }
  }

  override render() {
    const caption = CAPTIONS[this.phase];
    const refresh = html`<button type="button" @click=${() => this.generation++} ?disabled=${this.log.status === TaskStatus.PENDING}>Refresh log</button>`;
    const body = this.log.render({
      initial: () => html`<p class="muted">Loading the ${caption.toLowerCase()}…</p>`,
      pending: () => (this.text ? this.pre(caption) : html`<p class="muted" role="status">Loading the ${caption.toLowerCase()}…</p>`),
      complete: () => (this.text ? this.pre(caption) : html`<p class="muted" data-testid="console-empty">No ${caption.toLowerCase()} output${this.complete ? "" : " yet"}.</p>`),
      error: (error) => html`${this.text ? this.pre(caption) : nothing}
        <p class="error" role="alert">The ${caption.toLowerCase()} could not be read: ${(error as Error).message}</p>`,
    });
    return html`<div class="bar">
        <span class="muted">${caption}${this.clipped ? " (showing the newest 512 KiB)" : ""}</span>${refresh}
      </div>
      ${body}`;
  }

  private pre(caption: string) {
    return html`<pre class="ink" tabindex="0" aria-label=${caption} data-testid="console-${this.phase}">${this.text}</pre>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-run-console": SsRunConsole;
  }
}
