import { consume } from "@lit/context";
import { getRunLog, type Client } from "@stackship/client";
import { LitElement, html, nothing, type PropertyValues } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import { base } from "../ui/tokens.ts";
import { asFailure, unwrap } from "./api-result.ts";
import { liveContext, type LiveHandle } from "./live-context.ts";
import type { LiveChunk, PhaseListener } from "./live-feed.ts";
import { hideHighlights, scrollToRange, showHighlights, textRange } from "./run-console-highlights.ts";
import {
  CAPTIONS,
  CONSOLE_MAX_CHARS,
  ERROR_LINE,
  findMatches,
  isLow,
  LOG_WINDOW,
  MAX_MATCHES,
  newlines,
  numbers,
} from "./run-console-model.ts";
import { runConsoleStyles } from "./run-console.styles.ts";

export { CONSOLE_MAX_CHARS, keepNewest } from "./run-console-model.ts";

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
  /** Stick to the newest output: true while the reader is at the bottom of a live console. */
  @state() accessor following = true;
  /** Long lines wrap (true) or scroll sideways (false, the default, with line numbers). */
  @state() accessor wrap = false;
  @state() accessor query = "";
  /** Where the search matched (code unit offsets into the kept text), and which one is current. */
  @state() accessor hits: number[] = [];
  @state() accessor current = -1;
  @state() accessor copyNote = "";
  /** Lines dropped from the front since this console started (its first line's number less one). */
  private droppedLines = 0;
  private lines = 0;
  private endsWithNewline = true;
  private gutterFrom = -1;
  private gutterTo = 0;
  private positioned = false;
  /** Bumped on every append: a search of an older version is re-run on the next paint. */
  private version = 0;
  private searched = -1;
  private ranges: Range[] = [];
  /** The next offset of the log route: everything before it is in `text` (or was trimmed). */
  offset = 0;
  private started = false;
  private awaitingHello = false;
  private helloTimer: ReturnType<typeof setTimeout> | undefined;
  /** How long a console opened before the feed's hello waits for it before reading the route. */
  static helloWaitMs = 1000;
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
      this.clipped = this.complete = this.loaded = this.started = this.positioned = this.awaitingHello = false;
      clearTimeout(this.helloTimer);
      this.droppedLines = this.lines = 0;
      this.endsWithNewline = true;
      this.following = true;
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
      // Opened with the page (a running stage opens by itself) before the feed's hello: the hello
      // says where the log ends, so only the newest window is read (resync below). A hello that
      // does not come soon (no socket, a slow proxy) leaves the route read from the start.
      if (feed && position === null && !feed.state.stopped) {
        this.awaitingHello = true;
        this.helloTimer = setTimeout(() => this.resync(), SsRunConsole.helloWaitMs);
      } else this.readFrom(position);
    }
  }

  override connectedCallback() {
    super.connectedCallback();
    if (this.hasUpdated) this.requestUpdate();
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    clearTimeout(this.helloTimer);
    this.clearHighlights();
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

  /** The first read: from `end` less 512 KiB when the log's end is known, else from the start. */
  private readFrom(end: number | null) {
    if (end !== null && end > CONSOLE_MAX_CHARS) {
      this.offset = end - CONSOLE_MAX_CHARS;
      this.clipped = true;
    }
    void this.read();
  }

  /** Re-read the route from the current offset (when the stream is known to be ahead, only then). */
  resync(atLeast?: number) {
    if (this.awaitingHello) {
      this.awaitingHello = false;
      clearTimeout(this.helloTimer);
      this.readFrom(atLeast ?? null);
      return;
    }
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
          const window = unwrap(
            await getRunLog({
              client: this.client,
              path: { run_id: this.runId, phase: this.phase },
              query: { offset: this.offset, limit: LOG_WINDOW },
            }),
          ).data.attributes;
          const moved = window.next_offset !== this.offset;
          if (window.next_offset > this.offset) this.appendText(window.text);
          this.offset = Math.max(this.offset, window.next_offset);
          this.complete = window.complete;
          if (window.complete || !moved || window.text.length < LOG_WINDOW) break; // a short window is the stored end
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
    this.version++;
    const breaks = newlines(chunk);
    this.lines += breaks + (this.endsWithNewline ? 1 : 0) - (chunk.endsWith("\n") ? 1 : 0);
    this.endsWithNewline = chunk.endsWith("\n");
    while (this.pieces.length > 1 && this.kept - this.pieces[0].length >= CONSOLE_MAX_CHARS) {
      const dropped = this.pieces.shift()!;
      this.kept -= dropped.length;
      this.dropLines(newlines(dropped.data));
      dropped.remove();
      this.clipped = true;
    }
    const first = this.pieces[0];
    if (this.kept > CONSOLE_MAX_CHARS) {
      this.dropLines(newlines(first.data.slice(0, this.kept - CONSOLE_MAX_CHARS)));
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

  /** Whole lines cut from the front: the line numbers move on by as many. */
  private dropLines(count: number) {
    this.droppedLines += count;
    this.lines -= count;
  }

  /**
   * Puts the pieces not shown yet into the <pre>, numbers the lines, re-runs an active search,
   * and keeps a following console at its newest line; false when there is no <pre> yet.
   */
  private paint(): boolean {
    const pre = this.renderRoot.querySelector<HTMLPreElement>("pre[data-console]");
    if (!pre) return false;
    if (pre !== this.synced) {
      pre.replaceChildren(...this.pieces);
      this.synced = pre;
      this.gutterFrom = -1;
    } else {
      let from = this.pieces.length;
      while (from > 0 && this.pieces[from - 1].parentNode !== pre) from--;
      if (from < this.pieces.length) pre.append(...this.pieces.slice(from));
    }
    this.paintGutter();
    if (this.query && this.searched !== this.version) this.search(false);
    const scroller = this.scroller;
    if (scroller && !this.positioned && this.loaded) {
      this.positioned = true;
      // A log already complete when first read opens at its first error line, or at the top.
      if (this.complete) {
        this.following = false;
        const error = ERROR_LINE.exec(this.text);
        if (error) this.reveal(error.index + (error[1]?.length ?? 0), "start");
      }
    }
    if (scroller && this.following) scroller.scrollTop = scroller.scrollHeight;
    return true;
  }

  /** The line numbers beside the text (only new numbers are appended while the first line stays). */
  private paintGutter() {
    const gutter = this.renderRoot.querySelector<HTMLPreElement>("pre.gutter");
    if (!gutter) return;
    const from = this.droppedLines + 1;
    const to = this.droppedLines + this.lines;
    if (from !== this.gutterFrom || to < this.gutterTo || gutter.childNodes.length === 0) {
      gutter.textContent = numbers(from, to);
    } else if (to > this.gutterTo) gutter.append(document.createTextNode(numbers(this.gutterTo + 1, to, true)));
    this.gutterFrom = from;
    this.gutterTo = to;
  }

  private get scroller(): HTMLElement | null {
    return this.renderRoot.querySelector<HTMLElement>("[data-scroll]");
  }

  /** The reader scrolled: following resumes only at the bottom. */
  private onScroll() {
    const s = this.scroller;
    if (!s) return;
    this.following = s.scrollTop + s.clientHeight >= s.scrollHeight - 4;
  }

  /** "Jump to latest": back to the newest line, following again. */
  jumpToLatest() {
    this.following = true;
    const s = this.scroller;
    if (s) s.scrollTop = s.scrollHeight;
  }

  /** Scrolls the console so the text at `index` is in view (near the top for "start", centred otherwise). */
  private reveal(index: number, where: "start" | "center") {
    const scroller = this.scroller;
    const range = textRange(this.pieces, index, Math.min(index + 1, this.kept));
    if (scroller && range) scrollToRange(scroller, range, where);
  }

  /** Finds every match of the query (case-insensitively), highlights them, and keeps or resets the current one. */
  private search(reset: boolean) {
    this.clearHighlights();
    this.searched = this.version;
    const needle = this.query.toLowerCase();
    if (!needle) {
      this.hits = [];
      this.current = -1;
      return;
    }
    const found = findMatches(this.text, needle);
    this.hits = found;
    if (reset || this.current >= found.length) this.current = found.length ? 0 : -1;
    this.ranges = found
      .map((at) => textRange(this.pieces, at, at + needle.length))
      .filter((r): r is Range => r !== null);
    showHighlights(this.ranges, this.current);
  }

  private clearHighlights() {
    hideHighlights(this.ranges);
    this.ranges = [];
  }

  /** Moves to the next (+1) or previous (−1) match and scrolls to it; the console stops following. */
  step(by: 1 | -1) {
    if (this.hits.length === 0) return;
    this.current = (this.current + by + this.hits.length) % this.hits.length;
    this.clearHighlights();
    const needle = this.query.length;
    this.ranges = this.hits.map((at) => textRange(this.pieces, at, at + needle)).filter((r): r is Range => r !== null);
    showHighlights(this.ranges, this.current);
    this.following = false;
    this.reveal(this.hits[this.current], "center");
  }

  private onQuery(event: Event) {
    this.query = (event.target as HTMLInputElement).value;
    this.search(true);
    if (this.hits.length) {
      this.following = false;
      this.reveal(this.hits[0], "center");
    }
  }

  private onSearchKey(event: KeyboardEvent) {
    if (event.key !== "Enter") return;
    event.preventDefault();
    this.step(event.shiftKey ? -1 : 1);
  }

  private async copy() {
    try {
      await navigator.clipboard.writeText(this.text);
      this.copyNote = "Copied";
    } catch {
      this.copyNote = "Copy failed: select the text instead";
    }
  }

  protected override updated() {
    this.paint();
  }

  override render() {
    const caption = CAPTIONS[this.phase];
    const live = this.live?.live === true;
    const refresh = live
      ? nothing
      : html`<button type="button" @click=${() => void this.read()} ?disabled=${this.reading} data-testid="refresh-log">Refresh log</button>`;
    let body;
    if (this.kept > 0) body = this.pre(caption);
    else if (!this.loaded) body = html`<p class="muted" role="status">Loading the ${caption.toLowerCase()}…</p>`;
    else if (this.held && !this.complete)
      body = html`<p class="muted" data-testid="console-held">The plan log appears when the plan finishes: the runner holds it until the plan's own sensitive values are known.</p>`;
    else if (!this.error)
      body = html`<p class="muted" data-testid="console-empty">No ${caption.toLowerCase()} output${this.complete ? "" : " yet"}.</p>`;
    return html`<div class="bar">
        <span class="muted">${caption}${live ? html` · <span data-testid="console-live">live</span>` : nothing}</span>
        ${this.kept > 0 ? this.tools() : nothing}${refresh}
      </div>
      ${this.clipped ? html`<p class="muted trimmed" data-testid="console-trimmed">… earlier output trimmed: showing the newest 512 KiB</p>` : nothing}
      ${body ?? nothing}
      ${this.error ? html`<p class="error" role="alert">The ${caption.toLowerCase()} could not be read: ${this.error}</p>` : nothing}`;
  }

  private tools() {
    const count = this.query
      ? this.hits.length
        ? `${this.current + 1} of ${this.hits.length}${this.hits.length >= MAX_MATCHES ? "+" : ""}`
        : "No matches"
      : "";
    return html`<span class="tools">
      <input type="search" placeholder="Search log" aria-label="Search the ${CAPTIONS[this.phase].toLowerCase()}" .value=${this.query} @input=${this.onQuery} @keydown=${this.onSearchKey} data-testid="console-search" />
      <span class="muted count" role="status" data-testid="console-matches">${count}</span>
      <button type="button" aria-label="Previous match" title="Previous match (Shift+Enter)" ?disabled=${this.hits.length === 0} @click=${() => this.step(-1)} data-testid="console-previous">↑</button>
      <button type="button" aria-label="Next match" title="Next match (Enter)" ?disabled=${this.hits.length === 0} @click=${() => this.step(1)} data-testid="console-next">↓</button>
      <button type="button" aria-pressed=${this.wrap ? "true" : "false"} @click=${() => (this.wrap = !this.wrap)} data-testid="console-wrap">Wrap lines</button>
      <button type="button" @click=${() => void this.copy()} data-testid="console-copy">Copy log</button>
      <span class="muted" role="status" data-testid="console-copied">${this.copyNote}</span>
    </span>`;
  }

  private pre(caption: string) {
    return html`<div class="frame">
      <div class="scroll ink ${this.wrap ? "wrap" : ""}" data-scroll @scroll=${this.onScroll}>
        ${this.wrap ? nothing : html`<pre class="gutter" aria-hidden="true" data-testid="console-gutter"></pre>`}
        <pre tabindex="0" aria-label=${caption} data-testid="console-${this.phase}" data-console></pre>
      </div>
      ${
        this.following
          ? nothing
          : html`<button type="button" class="jump" @click=${() => this.jumpToLatest()} data-testid="console-jump">${this.complete ? "Jump to end" : "Jump to latest"}</button>`
      }
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-run-console": SsRunConsole;
  }
}
