// The phase console's text as ranges (run-console.ts keeps it as text nodes, one per appended
// chunk): a Range over the kept text, the document's two search highlights (CSS Custom Highlight
// API) and scrolling a range into view.

/** A Range over kept text [start, end) across its text nodes `pieces`. */
export function textRange(pieces: readonly Text[], start: number, end: number): Range | null {
  const range = document.createRange();
  let at = 0;
  let started = false;
  for (const piece of pieces) {
    const next = at + piece.length;
    if (!started && start < next) {
      range.setStart(piece, start - at);
      started = true;
    }
    if (started && end <= next) {
      range.setEnd(piece, end - at);
      return range;
    }
    at = next;
  }
  return null;
}

/** The document's two search highlights (CSS Custom Highlight API), created once; null where unsupported. */
function highlights(): HighlightRegistry | null {
  if (typeof Highlight === "undefined" || !CSS.highlights) return null;
  for (const name of ["ss-console-match", "ss-console-current"])
    if (!CSS.highlights.has(name)) CSS.highlights.set(name, new Highlight());
  return CSS.highlights;
}

/** Highlights the matches `ranges`, the one at index `current` as the current one. */
export function showHighlights(ranges: readonly Range[], current: number) {
  const registry = highlights();
  if (!registry) return;
  const all = registry.get("ss-console-match")!;
  const currentMatch = registry.get("ss-console-current")!;
  ranges.forEach((range, i) => (i === current ? currentMatch : all).add(range));
}

/** Takes the matches `ranges` out of both highlights. */
export function hideHighlights(ranges: readonly Range[]) {
  const registry = highlights();
  if (registry)
    for (const range of ranges)
      for (const name of ["ss-console-match", "ss-console-current"]) registry.get(name)!.delete(range);
}

/** Scrolls `scroller` so that `range` is in view (near the top for "start", centred otherwise). */
export function scrollToRange(scroller: HTMLElement, range: Range, where: "start" | "center") {
  const rect = range.getBoundingClientRect();
  const box = scroller.getBoundingClientRect();
  const top = scroller.scrollTop + rect.top - box.top;
  scroller.scrollTop =
    where === "start" ? Math.max(0, top - 2 * rect.height) : Math.max(0, top - scroller.clientHeight / 2);
  const left = scroller.scrollLeft + rect.left - box.left;
  if (left < scroller.scrollLeft || left > scroller.scrollLeft + scroller.clientWidth - 40)
    scroller.scrollLeft = Math.max(0, left - 40);
}
