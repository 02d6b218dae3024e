// The API reference pages (/docs, /docs/tfe) and the bundled specs (/openapi/v1.json,
// /openapi/tfe.json): served without credentials, exactly what `npm run generate` wrote, the
// pages self-contained (nothing loaded from another host), and none of them shadowing an API or
// protocol prefix or the dashboard.
import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { withTestServer } from "../support/test-server.ts";

const test = suite("reference");

const generated = (path: string) => readFileSync(new URL(`../../../generated/${path}`, import.meta.url), "utf8");

test("/openapi/v1.json and /openapi/tfe.json are the bundled specs, without a token", () =>
  withTestServer("sqlite", async (server) => {
    for (const surface of ["v1", "tfe"] as const) {
      const response = await fetch(`${server.baseUrl}/openapi/${surface}.json`);
      assert.is(response.status, 200, surface);
      assert.match(response.headers.get("content-type") ?? "", /^application\/json/, surface);
      assert.equal(await response.json(), JSON.parse(generated(`${surface}/openapi.json`)), surface);
    }
    const v1 = (await (await fetch(`${server.baseUrl}/openapi/v1.json`)).json()) as { paths: Record<string, unknown> };
    // The served v1 spec declares its own reference routes, and the tfe spec its /api/v2 paths.
    for (const path of ["/openapi/v1.json", "/openapi/tfe.json", "/docs", "/docs/tfe", "/v1/runs/{run_id}"])
      assert.ok(v1.paths[path], path);
    const tfe = (await (await fetch(`${server.baseUrl}/openapi/tfe.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    assert.ok(Object.keys(tfe.paths).some((path) => path.startsWith("/api/v2/")));
    // A bad token is not even looked at (the routes take no credentials).
    const withBadToken = await fetch(`${server.baseUrl}/openapi/v1.json`, {
      headers: { Authorization: "Bearer nonsense" },
    });
    assert.is(withBadToken.status, 200);
  }));

test("/docs and /docs/tfe are the generated reference pages, loading nothing from another host", () =>
  withTestServer("sqlite", async (server) => {
    for (const [path, file, title] of [
      ["/docs", "docs/v1.html", "StackShip API"],
      ["/docs/tfe", "docs/tfe.html", ""],
    ] as const) {
      const response = await fetch(`${server.baseUrl}${path}`);
      assert.is(response.status, 200, path);
      assert.match(response.headers.get("content-type") ?? "", /^text\/html/, path);
      const csp = response.headers.get("content-security-policy") ?? "";
      assert.match(csp, /default-src 'none'/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.is(response.headers.get("x-content-type-options"), "nosniff", path);
      const html = await response.text();
      assert.is(html, generated(file), path);
      if (title) assert.match(html, new RegExp(`<title>${title}</title>`), path);
      // Redoc runs from the page itself: no script, stylesheet or preload from a CDN.
      assert.not.match(html, /<(script|link)[^>]+(src|href)="https?:/i, path);
      assert.match(html, /<script>/, path);
    }
  }));

test("the reference routes shadow nothing: API prefixes keep their 404s, other methods get 405", () =>
  withTestServer("sqlite", async (server) => {
    for (const path of [
      "/docs/v2",
      "/docs/tfe/x",
      "/openapi/v2.json",
      "/openapi/v1.yaml",
      "/openapi",
      "/v1/docs",
      "/api/v2/docs",
      "/.well-known/docs",
    ]) {
      const response = await fetch(`${server.baseUrl}${path}`);
      assert.is(response.status, 404, path);
      assert.match(response.headers.get("content-type") ?? "", /json/, path);
    }
    const post = await fetch(`${server.baseUrl}/openapi/v1.json`, { method: "POST" });
    assert.is(post.status, 405);
    assert.is(post.headers.get("allow"), "GET");
    assert.is((await fetch(`${server.baseUrl}/healthz`)).status, 200);
  }));

test.run();
