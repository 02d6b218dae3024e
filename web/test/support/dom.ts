// Reading what a component shows: through shadow roots, and waiting until it shows it.

/** A fixed pause: only for a quiet window sized by the page's own (shortened) timers, never to wait for something. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Resolves once `check` returns a truthy value (polling every 10 ms), or fails naming `what` after
 * `ms`. The limit is only a backstop for a loaded machine: a wait never asserts a speed.
 */
export async function until<T>(check: () => T, what = "condition", ms = 10_000): Promise<NonNullable<T>> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** querySelector through shadow roots. */
export function deep<E extends Element = HTMLElement>(
  root: Element | ShadowRoot | Document,
  selector: string,
): E | null {
  if (root instanceof Element && root.shadowRoot) {
    const inside = deep<E>(root.shadowRoot, selector);
    if (inside) return inside;
  }
  const direct = root.querySelector<E>(selector);
  if (direct) return direct;
  for (const el of root.querySelectorAll("*")) {
    if (el.shadowRoot) {
      const found = deep<E>(el.shadowRoot, selector);
      if (found) return found;
    }
  }
  return null;
}

/** Every match through shadow roots. */
export function deepAll<E extends Element = HTMLElement>(
  root: Element | ShadowRoot | Document,
  selector: string,
  out: E[] = [],
): E[] {
  if (root instanceof Element && root.shadowRoot) deepAll(root.shadowRoot, selector, out);
  out.push(...root.querySelectorAll<E>(selector));
  for (const el of root.querySelectorAll("*")) if (el.shadowRoot) deepAll(el.shadowRoot, selector, out);
  return out;
}

/** The visible text of an element including its shadow content. */
export function text(el: Element | null): string {
  if (!el) return "";
  return ((el as HTMLElement).shadowRoot ? (el as HTMLElement).shadowRoot!.textContent : el.textContent)
    .replace(/\s+/g, " ")
    .trim();
}
