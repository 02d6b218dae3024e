import { consume } from "@lit/context";
import { getRunLog, type Client } from "@stackship/client";
import { LitElement, html, nothing, type PropertyValues } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import { base } from "../ui/tokens.ts";
import { asFailure, unwrap } from "./api-result.ts";
import { liveContext, type LiveHandle } from "./live-context.ts";
import type { LiveChunk, PhaseListener } from "./live-feed.ts";
import { runConsoleStyles } from "./run-console.styles.ts";

/** The newest decoded log text a console keeps (UTF-16 code units, as the log route counts). */
export const CONSOLE_MAX_CHARS = 512 * 1024;
/** One HTTP log window. */
const WINDOW = 1024 * 1024;
const CAPTIONS = { plan: "Plan log", policy: "Policy log", apply: "Apply log" } as const;

/** `text` cut to its newest `max` code units, never starting inside a surrogate pair. */
export function keepNewest(text: string, max = CONSOLE_MAX_CHARS): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  let start = text.length - max;
  const first = text.charCodeAt(start);
  if (first >= 0xdc00 && first <= 0xdfff) start++;
  return { text: text.slice(start), cut: true };
}

/**
 * One phase's inline console. Created on its stage's first expansion, it reads its window from
 * `GET /v1/runs/{run_id}/logs/{phase}` (from where the live feed says the log ends, less 512 KiB,
 * so only what it keeps is read), then follows the run page's live feed: a chunk starting at its
 * offset appends, one ending at or before it is a duplicate, one starting past it (a gap), a
 * hello ahead of it, or any disconnect makes it re-read the route from its offset (the route is
 * authoritative). Chunks arriving during a read wait for it. It keeps at most the newest 512 KiB
 * of text, cut on a character boundary, with a visible "earlier output trimmed" line. While the
 * feed is live there is no control; otherwise a Refresh log button re-reads the route.
 *
 * @summary A phase's log.
 */
@customElement("ss-run-console")
export class SsRunConsole extends LitElement implements PhaseListener {
  static override styles = [base, runConsoleStyles];

  @consume({ context: apiContext, subscribe: true })
  @state()
  accessor client!: Client;

  @consume({ context: liveContext, subscribe: true })
  @state()
  accessor live: LiveHandle | null = null;

  @property({ attribute: "run-id" }) accessor runId = "";
  @property() accessor phase: "plan" | "policy" | "apply" = "plan";
  /** The plan is running and its log is held by the runner until it finishes (plan console only). */
  @property({ type: Boolean }) accessor held = false;

  /**
   * The kept text as text nodes, one per appended chunk: new ones are appended to the <pre> once
   * per animation frame and old ones removed (or shortened) from its front, so the console never
   * rewrites its whole text.
   */
  private pieces: Text[] = [];
  private kept = 0;
  private frame = 0;
  private synced: HTMLPreElement | null = null;
  @state() accessor complete = false;
  @state() accessor clipped = false;
  @state() accessor reading = false;
  @state() accessor loaded = false;
  @state() accessor error: string | null = null;
  /** The next offset of the log route: everything before it is in `text` (or was trimmed). */
  offset = 0;
  private started = false;
  private again = false;
  private pending: LiveChunk[] = [];
  private unlisten: (() => void) | null = null;
  private listening: LiveHandle["feed"] | null = null;

  protected override willUpdate(changed: PropertyValues<this>) {
    if (changed.has("runId") && changed.get("runId") !== undefined) {
      for (const piece of this.pieces) piece.remove();
      this.pieces = [];
      this.kept = 0;
      this.offset = 0;
      this.clipped = this.complete = this.loaded = this.started = false;
    }
    const feed = this.live?.feed ?? null;
    if (feed !== this.listening && this.isConnected) {
      this.unlisten?.();
      this.unlisten = feed ? feed.listen(this.phase, this) : null;
      this.listening = feed;
    }
    if (!this.started && this.client && this.runId) {
      this.started = true;
      const position = feed?.position(this.phase) ?? null;
      if (position !== null && position > CONSOLE_MAX_CHARS) {
        this.offset = position - CONSOLE_MAX_CHARS;
        this.clipped = true;
      }
      void this.read();
    }
  }

  override connectedCallback() {
    super.connectedCallback();
    if (this.hasUpdated) this.requestUpdate();
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    this.unlisten?.();
    this.unlisten = null;
    this.listening = null;
  }

  /** A live chunk: appended when it continues the text, dropped when already had, a gap otherwise. */
  chunk(chunk: LiveChunk) {
    if (this.reading || !this.loaded) {
      this.pending.push(chunk);
      return;
    }
    this.apply(chunk);
  }

  /** Re-read the route from the current offset (when the stream is known to be ahead, only then). */
  resync(atLeast?: number) {
    if (atLeast !== undefined && atLeast <= this.offset) return;
    void this.read();
  }

  /** Reads the route from the current offset to the end of what is stored, appending. */
  async read(): Promise<void> {
    if (!this.client || !this.runId) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    this.error = null;
    try {
      do {
        this.again = false;
        for (let windows = 0; windows < 64; windows++) {
          const window = unwrap(await getRunLog({ client: this.client, path: { run_id: this.runId, phase: this.phase }, query: { offset: this.offset, limit: WINDOW } })).data
            .attributes;
          const moved = window.next_offset !== this.offset;
          if (window.next_offset > this.offset) this.appendText(window.text);
          this.offset = Math.max(this.offset, window.next_offset);
          this.complete = window.complete;
          if (window.complete || !moved || window.text.length < WINDOW) break; // a short window is the stored end
        }
      } while (this.again);
      this.loaded = true;
    } catch (error) {
      this.error = asFailure(error).detail;
      this.loaded = true;
    } finally {
      this.reading = false;
    }
    const waiting = this.pending;
    this.pending = [];
    for (const chunk of waiting)
      if (!this.reading) this.apply(chunk);
      else this.pending.push(chunk);
  }

  private apply(chunk: LiveChunk) {
    if (chunk.next_offset <= this.offset) return; // already had
    if (chunk.offset !== this.offset) {
      void this.read(); // a gap (or an overlap): the route decides
      return;
    }
    this.appendText(chunk.text);
    this.offset = chunk.next_offset;
    if (chunk.final) this.complete = true;
  }

  /** The text the console keeps. */
  get text(): string {
    return this.pieces.map((piece) => piece.data).join("");
  }

  /**
   * Appends, then drops the oldest text beyond 512 KiB (whole pieces first, then the front of the
   * first, never starting inside a surrogate pair), and paints on the next animation frame.
   */
  private appendText(chunk: string) {
    if (chunk.length === 0) return;
    this.pieces.push(document.createTextNode(chunk));
    this.kept += chunk.length;
    while (this.pieces.length > 1 && this.kept - this.pieces[0]!.length >= CONSOLE_MAX_CHARS) {
      const dropped = this.pieces.shift()!;
      this.kept -= dropped.length;
      dropped.remove();
      this.clipped = true;
    }
    const first = this.pieces[0]!;
    if (this.kept > CONSOLE_MAX_CHARS) {
      first.deleteData(0, this.kept - CONSOLE_MAX_CHARS);
      this.kept = CONSOLE_MAX_CHARS;
      this.clipped = true;
    }
    if (this.clipped && isLow(first.data)) {
      first.deleteData(0, 1); // a cut (or a window) that starts inside a pair
      this.kept--;
    }
    if (this.frame === 0) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        if (!this.paint()) this.requestUpdate();
      });
    }
  }

  /** Puts the pieces not shown yet into the <pre>; false when there is no <pre> to put them in. */
  private paint(): boolean {
    const pre = this.renderRoot.querySelector<HTMLPreElement>("pre[data-console]");
    if (!pre) return false;
    if (pre !== this.synced) {
      pre.replaceChildren(...this.pieces);
      this.synced = pre;
      return true;
    }
    let from = this.pieces.length;
    while (from > 0 && this.pieces[from - 1]!.parentNode !== pre) from--;
    if (from < this.pieces.length) pre.append(...this.pieces.slice(from));
    return true;
  }

  protected override updated() {
    this.paint();
  }

  override render() {
    const caption = CAPTIONS[this.phase];
    const live = this.live?.live === true;
    const refresh = live ? nothing : html`<button type="button" @click=${() => void this.read()} ?disabled=${this.reading} data-testid="refresh-log">Refresh log</button>`;
    let body;
    if (this.kept > 0) body = this.pre(caption);
    else if (!this.loaded) body = html`<p class="muted" role="status">Loading the ${caption.toLowerCase()}…</p>`;
    else if (this.held && !this.complete)
      body = html`<p class="muted" data-testid="console-held">The plan log appears when the plan finishes: the runner holds it until the plan's own sensitive values are known.</p>`;
    else if (!this.error) body = html`<p class="muted" data-testid="console-empty">No ${caption.toLowerCase()} output${this.complete ? "" : " yet"}.</p>`;
    return html`<div class="bar">
        <span class="muted">${caption}${live ? html` · <span data-testid="console-live">live</span>` : nothing}</span>${refresh}
      </div>
      ${this.clipped ? html`<p class="muted trimmed" data-testid="console-trimmed">… earlier output trimmed: showing the newest 512 KiB</p>` : nothing}
      ${body ?? nothing}
      ${this.error ? html`<p class="error" role="alert">The ${caption.toLowerCase()} could not be read: ${this.error}</p>` : nothing}`;
  }

  private pre(caption: string) {
    return html`<pre class="ink" tabindex="0" aria-label=${caption} data-testid="console-${this.phase}" data-console></pre>`;
  }
}

function isLow(text: string) {
  const first = text.charCodeAt(0);
  return first >= 0xdc00 && first <= 0xdfff;
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-run-console": SsRunConsole;
  }
}
