/**
 * The dashboard's end-to-end harness: a real StackShip server (SQLite, in-process runner running
 * real `tofu` in bubblewrap) serving the built dashboard, Debian's Chromium driven by
 * playwright-core, real runs in every state the run page shows, screenshots and axe-core.
 *
 * Typical scenario file (web/test/e2e/*.test.ts, uvu; run with `node scripts/run-tests.mjs web/test/e2e`):
 *
 *   import { suite } from "uvu";
 *   import { startHarness, type Harness } from "../support/index.ts";
 *   const test = suite<{ h: Harness }>("runs page");
 *   test.before(hook(async (ctx) => { ctx.h = await startHarness(); }));   // hook(): prints a hook's error (uvu does not)
 *   test.after(hook(async (ctx) => { await ctx.h?.stop(); }));
 *   test("…", async ({ h }) => {
 *     const org = await h.organization("acme");                  // org + admin token
 *     const made = await h.makeRun(org, "awaiting_approval");     // a real run, waited for
 *     const { page } = await h.signInAs(org, "viewer");           // a new user with that role, signed in through the page
 *     await page.goto(h.url(`/runs/${made.run.id}`));
 *     await h.screenshot(page, "run-awaiting-approval");          // → .stackship-test/screenshots/run-awaiting-approval.png
 *     await h.checkA11y(page, "run page awaiting approval");      // throws on serious/critical axe violations
 *   });
 *   test.run();
 *
 * harnessSuite(name) is that suite with its before/after hooks, the harness in `h` and an organization
 * "acme" in `acme`.
 *
 * API (all on the Harness returned by startHarness()):
 *   h.server                       the server test support's TestServer (baseUrl, db, services, admin SDK client, v1(token))
 *   h.url(path)                    absolute URL on the server
 *   h.browser                      the shared playwright-core Browser (one per harness)
 *   h.organization(name)           creates an organization; returns { name, id, token } (admin API token)
 *   h.workspace(org, name?, attrs?) creates a workspace (unique name by default)
 *   h.user(org, role, opts?)       a user with role viewer | operator | admin on the organization; { email, password, userId, displayName }
 *   h.signInAs(org, role | user, { colorScheme? })   new browser context (light by default; "dark" for
 *                                  the dark tokens), signs in through /sign-in (fills email and password,
 *                                  presses Sign in, waits to leave /sign-in); returns { context, page, user }
 *   h.newPage({ colorScheme? })    a page in a fresh, signed-out context
 *   h.makeRun(org, state, opts?)   a real run in a fresh workspace (or opts.workspace), waited until in `state`:
 *       "plan_running"            a 10,000-resource plan caught while planning (cancel it with h.cancel(run) when done)
 *       "awaiting_approval"       basic config: 1 create, 0 destroys
 *       "awaiting_approval_destroys"  an applied config, then a plan that destroys 1 and creates 1
 *       "discarded"               awaiting approval, then discarded with opts.reason (default "not this one")
 *       "policy_soft_failed"      a soft-mandatory policy flags every terraform_data resource
 *       "applied"                 approved and applied (state version committed)
 *       "plan_failed"             a configuration that fails to plan with more than eight log lines
 *       "needs_recovery"          apply interrupted: the runner process is killed mid-apply (slow provisioner),
 *                                 a fresh in-process runner notices and the run needs recovery
 *       "expired"                 awaiting approval, then its approval window passes
 *     opts: { files?: Record<string,string> (your own configuration), workspace?, message?, reason? } → { run, workspace }
 *     (the "awaiting_approval_destroys" set-up run gets the message too)
 *   h.startRun(org, workspace, files?, message?)  creates a run and returns at once (it queues behind the workspace lock)
 *   h.waitForStatus(org, runId, statuses)   polls until the run is in one of them
 *   h.cancel(org, runId)           cancels a run through the API
 *   h.expireSession(email)         ends every session of that user in the database (the next API call gets 401)
 *   h.screenshot(page, name)       full-page PNG into SCREENSHOT_DIR/<name>.png (returns the path)
 *   h.checkA11y(page, label, opts?) axe-core in the page (shadow DOM included); fails on serious or critical
 *                                  violations, listing rule, impact and targets. opts.exclude: CSS selectors
 *   h.stop()                       closes the browser, the runner and the server
 *   responseBodies(page)           every response body the page receives from then on (to search for a canary)
 *
 * Everything runs on SQLite only (the API suites cover PostgreSQL); the browser suites are kept to
 * a few minutes. CHROMIUM (env STACKSHIP_CHROMIUM) defaults to /usr/lib/chromium/chromium.
 */
export {
  hook,
  startHarness,
  SCREENSHOT_DIR,
  CHROMIUM,
  type Harness,
  type HarnessOrganization,
  type HarnessUser,
  type RunState,
  type MadeRun,
} from "./harness.ts";
export { harnessSuite } from "./harness-suite.ts";
export { responseBodies } from "./browser.ts";
