// Client-side routing with real URLs. Every dashboard route is listed here, and the server's
// SPA fallback (server/src/http/dashboard.ts) answers exactly these paths with index.html, so a
// deep link reload works.

export type Route =
  | { name: "sign-in" }
  | { name: "setup" }
  | { name: "tokens" }
  | { name: "members" }
  | { name: "audit" }
  | { name: "workspaces" }
  | { name: "policy-sets" }
  | { name: "organizations" }
  | { name: "home" }
  | { name: "runs" }
  | { name: "run"; runId: string }
  | { name: "workspace"; workspaceId: string }
  | { name: "workspace-state"; workspaceId: string }
  | { name: "workspace-cloud-access"; workspaceId: string }
  | { name: "workspace-source"; workspaceId: string }
  | { name: "workspace-variables"; workspaceId: string }
  | { name: "github-setup" }
  | { name: "not-found"; path: string };

const ID = "([A-Za-z0-9_-]{1,64})";
const TABLE: Array<[RegExp, (m: RegExpExecArray) => Route]> = [
  [/^\/$/, () => ({ name: "home" })],
  [/^\/sign-in\/?$/, () => ({ name: "sign-in" })],
  [/^\/setup\/?$/, () => ({ name: "setup" })],
  [/^\/tokens\/?$/, () => ({ name: "tokens" })],
  [/^\/members\/?$/, () => ({ name: "members" })],
  [/^\/audit\/?$/, () => ({ name: "audit" })],
  [/^\/workspaces\/?$/, () => ({ name: "workspaces" })],
  [/^\/policy-sets\/?$/, () => ({ name: "policy-sets" })],
  [/^\/organizations\/?$/, () => ({ name: "organizations" })],
  [/^\/runs\/?$/, () => ({ name: "runs" })],
  [new RegExp(`^/runs/${ID}/?$`), (m) => ({ name: "run", runId: m[1] })],
  [new RegExp(`^/workspaces/${ID}/?$`), (m) => ({ name: "workspace", workspaceId: m[1] })],
  [new RegExp(`^/workspaces/${ID}/state/?$`), (m) => ({ name: "workspace-state", workspaceId: m[1] })],
  [new RegExp(`^/workspaces/${ID}/cloud-access/?$`), (m) => ({ name: "workspace-cloud-access", workspaceId: m[1] })],
  [new RegExp(`^/workspaces/${ID}/source/?$`), (m) => ({ name: "workspace-source", workspaceId: m[1] })],
  [new RegExp(`^/workspaces/${ID}/variables/?$`), (m) => ({ name: "workspace-variables", workspaceId: m[1] })],
  [/^\/github\/setup\/?$/, () => ({ name: "github-setup" })],
];

export function matchRoute(pathname: string): Route {
  for (const [pattern, build] of TABLE) {
    const m = pattern.exec(pathname);
    if (m) return build(m);
  }
  return { name: "not-found", path: pathname };
}

/** Fired on window whenever the URL changed through navigate() or the back/forward buttons. */
export const NAVIGATE_EVENT = "ss-location-changed";

/** Goes to a dashboard URL without reloading the page. */
export function navigate(url: string, options: { replace?: boolean } = {}): void {
  const target = new URL(url, location.origin);
  if (target.origin !== location.origin) {
    location.assign(target.href);
    return;
  }
  const next = target.pathname + target.search + target.hash;
  if (next === location.pathname + location.search + location.hash && !options.replace) return;
  if (options.replace) history.replaceState(null, "", next);
  else history.pushState(null, "", next);
  window.dispatchEvent(new Event(NAVIGATE_EVENT));
}

/** Replaces the query string of the current URL (filters that live in the URL), without a history entry; the entry's state is kept. */
export function replaceQuery(params: URLSearchParams): void {
  const query = params.toString();
  history.replaceState(history.state, "", location.pathname + (query ? `?${query}` : "") + location.hash);
}

/**
 * A `next` parameter that may be followed after sign-in: a dashboard page on this origin only.
 * Decided on the parsed URL, never on the raw string: the URL parser drops tabs and newlines and
 * reads `\` as `/`, so `/\t/evil.example` or `/\evil.example` are network paths to another host.
 * What is returned is the parsed path (pathname, search, hash), checked to parse back to this origin.
 */
export function safeNext(value: string | null, origin: string = location.origin): string {
  const fallback = "/runs";
  if (!value || !value.startsWith("/")) return fallback;
  let target: URL;
  try {
    target = new URL(value, origin);
  } catch {
    return fallback;
  }
  if (target.origin !== origin) return fallback;
  const path = target.pathname + target.search + target.hash;
  // Dot segments can leave `//host` as the pathname (`/.//evil.example`): that must not be followed either.
  if (!path.startsWith("/") || path.startsWith("//") || new URL(path, origin).origin !== origin) return fallback;
  // Only a dashboard page other than sign-in itself (the guard remembers nothing else).
  const route = matchRoute(target.pathname).name;
  if (route === "sign-in" || route === "not-found") return fallback;
  return path;
}

/**
 * Lets plain `<a href="/runs/…">` links anywhere (also inside shadow roots) navigate in place:
 * same-origin dashboard links, primary button, no modifier keys, no target, no download.
 */
export function interceptLinks(root: EventTarget): void {
  root.addEventListener("click", (event) => {
    const e = event as MouseEvent;
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const anchor = e.composedPath().find((node): node is HTMLAnchorElement => node instanceof HTMLAnchorElement);
    if (!anchor || !anchor.href || anchor.target || anchor.hasAttribute("download")) return;
    const url = new URL(anchor.href);
    if (url.origin !== location.origin) return;
    if (matchRoute(url.pathname).name === "not-found") return;
    e.preventDefault();
    navigate(url.pathname + url.search + url.hash);
  });
}
