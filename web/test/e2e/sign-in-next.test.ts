// The `next` parameter of the sign-in page, attacked in Chromium against the real server: only a
// dashboard page on this origin is followed after sign-in. The URL parser drops tabs and newlines
// and reads `\` as `/`, so `/%09/evil.example/` or `/\evil.example` would be another host.
import * as assert from "uvu/assert";
import type { BrowserContext, Page } from "playwright-core";
import { harnessSuite } from "../support/index.ts";

const test = harnessSuite("sign-in next: same-origin only");

const CONTROLS = [...Array.from({ length: 0x20 }, (_, code) => code), 0x7f].map((code) => String.fromCharCode(code));
const BACKSLASH_FORMS = [
  "/\\evil.example/",
  "\\\\evil.example/",
  "\\/evil.example/",
  "/\\/evil.example/",
  "/\t/evil.example/",
  "/\t\\evil.example/",
  "https://evil.example/",
];

interface Offsite {
  /** Every refused off-site request's URL. */
  urls: string[];
  /** Settles at the next off-site request. */
  next(): Promise<void>;
}

/** Records every request that leaves the server's origin, and answers it locally. */
async function recordOffsite(context: BrowserContext, origin: string): Promise<Offsite> {
  const urls: string[] = [];
  let wake = () => {};
  await context.route(
    (url) => url.origin !== origin,
    async (route) => {
      urls.push(route.request().url());
      wake();
      // Answered here (nothing leaves the machine), so the page settles there instead of on an error page.
      await route.fulfill({ status: 200, contentType: "text/html", body: "<p>off-site</p>" });
    },
  );
  return { urls, next: () => new Promise<void>((resolve) => (wake = resolve)) };
}

/**
 * Waits until the page left /sign-in on this origin, or tried to leave the origin; ends at once when
 * one already did. A page that never moves (a `next` the shell choked on) fails the wait.
 */
async function settle(page: Page, origin: string, offsite: Offsite, before = 0): Promise<void> {
  const left = offsite.next();
  if (offsite.urls.length > before) return;
  await Promise.race([left, page.waitForURL((u) => u.origin !== origin || u.pathname !== "/sign-in")]);
}

test("a person signing in through /sign-in?next=/%09/evil.example/ lands on /runs of this dashboard", async ({
  h,
  acme,
}) => {
  const origin = new URL(h.server.baseUrl).origin;
  const user = await h.user(acme, "viewer");
  const { context, page } = await h.newPage();
  const offsite = await recordOffsite(context, origin);
  await page.goto(h.url("/sign-in?next=/%09/evil.example/"));
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  const settled = settle(page, origin, offsite);
  await page.getByRole("button", { name: "Sign in" }).click();
  await settled;
  assert.equal(offsite.urls, [], "no request left the origin");
  assert.is(new URL(page.url()).origin, origin);
  assert.is(new URL(page.url()).pathname, "/runs");
  await page.getByRole("heading", { name: "Runs" }).waitFor();
});

test("a signed-in person is never sent off-site: every control character (0x00-0x1f, 0x7f) and backslash form", async ({
  h,
  acme,
}) => {
  const origin = new URL(h.server.baseUrl).origin;
  const { context, page } = await h.signInAs(acme, "viewer");
  const offsite = await recordOffsite(context, origin);
  const attacks = [...CONTROLS.flatMap((c) => [`/${c}/evil.example/`, `/${c}\\evil.example/`]), ...BACKSLASH_FORMS];
  const wrong: string[] = [];
  for (const attack of attacks) {
    // A page of its own per attack (same signed-in context): an earlier attack's navigation cannot interfere.
    const tab = await context.newPage();
    const before = offsite.urls.length;
    // The sign-in page itself loads first (committed), then the signed-in shell follows `next`.
    await tab.goto(h.url(`/sign-in?next=${encodeURIComponent(attack)}`), { waitUntil: "commit" });
    const stuck = await settle(tab, origin, offsite, before).then(
      () => null,
      (error: Error) => error.message.split("\n")[0],
    );
    const landed = new URL(tab.url());
    if (stuck) wrong.push(`${JSON.stringify(attack)} → stayed on ${landed.href} (${stuck})`);
    else if (offsite.urls.length > before)
      wrong.push(`${JSON.stringify(attack)} → off-site ${offsite.urls.slice(before).join(", ")}`);
    else if (landed.origin !== origin || landed.pathname !== "/runs")
      wrong.push(`${JSON.stringify(attack)} → ${landed.href}`);
    await tab.close();
  }
  assert.equal(wrong, [], "every attack lands on /runs of this dashboard");
  assert.equal(offsite.urls, []);
  // A same-origin dashboard page is still followed, query included.
  await page.goto(h.url(`/sign-in?next=${encodeURIComponent("/runs?status=applied")}`));
  await page.waitForURL((u) => u.pathname === "/runs" && u.search === "?status=applied");
});

test.run();
