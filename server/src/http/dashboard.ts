// Serves the built dashboard (web/dist, see web/build.mjs) at `/`: content-hashed files under
// /assets/ are immutable for a year, index.html is `no-cache`, and the dashboard's client-side
// routes (the list in web/src/app/router.ts) answer index.html so a deep link reload works.
// Nothing under the API and protocol prefixes is ever answered here: those keep their own 404s.
import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type Koa from "koa";

/** Paths the dashboard may never shadow. */
const RESERVED = /^\/(v1|v2|api|\.well-known|live|healthz|uploads|metrics)(\/|$)/;

/** The dashboard's client-side routes (kept in step with web/src/app/router.ts). */
const ID = "[A-Za-z0-9_-]{1,64}";
const ROUTES = [
  /^\/$/,
  /^\/sign-in\/?$/,
  /^\/setup\/?$/,
  /^\/tokens\/?$/,
  /^\/members\/?$/,
  /^\/audit\/?$/,
  /^\/workspaces\/?$/,
  /^\/policy-sets\/?$/,
  /^\/organizations\/?$/,
  /^\/runs\/?$/,
  new RegExp(`^/runs/${ID}/?$`),
  new RegExp(`^/workspaces/${ID}(/(state|cloud-access|source|variables))?/?$`),
  /^\/github\/setup\/?$/,
];

/** Content-hashed bundles as esbuild names them: `app-ABCD1234.js`, `.css`, and their source maps. */
const ASSET = /^\/assets\/([A-Za-z0-9_-]+-[A-Z0-9]{8}\.(js|css)(\.map)?)$/;

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  map: "application/json; charset=utf-8",
};

/** Whether `path` is a dashboard page URL (answered with index.html). */
export function isDashboardRoute(path: string): boolean {
  return !RESERVED.test(path) && ROUTES.some((route) => route.test(path));
}

/**
 * Answers a GET/HEAD for the dashboard when `path` is one of its routes or assets; returns false
 * (leaving the response alone) otherwise, so the API's own 404 follows.
 */
export function serveDashboard(ctx: Koa.Context, dir: string): boolean {
  if (ctx.method !== "GET" && ctx.method !== "HEAD") return false;
  if (RESERVED.test(ctx.path)) return false;
  const asset = ASSET.exec(ctx.path);
  if (asset) {
    const file = join(dir, "assets", asset[1]);
    if (!existsSync(file)) return false;
    ctx.status = 200;
    ctx.type = TYPES[asset[3] ? "map" : asset[2]];
    ctx.set("Cache-Control", "public, max-age=31536000, immutable");
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.length = statSync(file).size;
    ctx.body = createReadStream(file); // Koa sends no body for HEAD
    return true;
  }
  if (!isDashboardRoute(ctx.path)) return false;
  const index = join(dir, "index.html");
  ctx.set("Cache-Control", "no-cache");
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("X-Frame-Options", "DENY");
  ctx.set("Referrer-Policy", "same-origin");
  ctx.set(
    "Content-Security-Policy",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  );
  if (!existsSync(index)) {
    ctx.status = 503;
    ctx.type = "text/plain; charset=utf-8";
    ctx.body = "The dashboard is not built yet: run `node web/build.mjs` (npm start does it for you).\n";
    return true;
  }
  ctx.status = 200;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = readFileSync(index);
  return true;
}
