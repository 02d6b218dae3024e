import { duration } from "../app/format.ts";

/** Every connected `<ss-elapsed>`; one shared 1 s clock runs while there is any. */
const ticking = new Set<SsElapsed>();
let clock: ReturnType<typeof setInterval> | undefined;

function tickAll() {
  const now = Date.now();
  for (const el of ticking) el.paint(now);
}

/**
 * A running duration, `since` (an ISO timestamp) until now, repainted once a second by one shared
 * clock. It writes only its own text (light DOM), so a list of running things ticks without
 * re-rendering the list.
 *
 * @summary A ticking duration.
 */
export class SsElapsed extends HTMLElement {
  static observedAttributes = ["since"];

  connectedCallback() {
    ticking.add(this);
    if (clock === undefined) clock = setInterval(tickAll, 1000);
    this.paint(Date.now());
  }

  disconnectedCallback() {
    ticking.delete(this);
    if (ticking.size === 0 && clock !== undefined) {
      clearInterval(clock);
      clock = undefined;
    }
  }

  attributeChangedCallback() {
    if (this.isConnected) this.paint(Date.now());
  }

  /** Writes the duration as of `now` (only when it changed). */
  paint(now: number) {
    const since = Date.parse(this.getAttribute("since") ?? "");
    const text = Number.isNaN(since) ? "" : duration(now - since);
    if (this.textContent !== text) this.textContent = text;
  }
}

if (!customElements.get("ss-elapsed")) customElements.define("ss-elapsed", SsElapsed);

declare global {
  interface HTMLElementTagNameMap {
    "ss-elapsed": SsElapsed;
  }
}
