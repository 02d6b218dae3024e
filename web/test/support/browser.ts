// The e2e scenarios' Chromium: launched headless from Debian's build, and axe-core run in a page.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { REPO_ROOT } from "../../../server/src/config.ts";

export const CHROMIUM = process.env.STACKSHIP_CHROMIUM || "/usr/lib/chromium/chromium";

/** Headless Chromium without its background traffic (updates, sync, QUIC). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
}

let axeSource: string | null = null;

/** axe-core in `page` (shadow DOM included); throws on serious or critical violations, listing rule, impact and targets. */
export async function checkA11y(page: Page, label: string, options: { exclude?: string[] } = {}): Promise<void> {
  axeSource ??= readFileSync(join(REPO_ROOT, "node_modules/axe-core/axe.min.js"), "utf8");
  const source = axeSource;
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (a <script> tag would be refused).
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(source);
  const result = await page.evaluate(async (exclude) => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: unknown,
            options: unknown,
          ): Promise<{
            violations: Array<{
              id: string;
              impact: string | null;
              help: string;
              nodes: Array<{ target: unknown[] }>;
            }>;
          }>;
        };
      }
    ).axe;
    const context = exclude.length > 0 ? { exclude: exclude.map((selector) => [selector]) } : document;
    const outcome = await axe.run(context, { resultTypes: ["violations"] });
    return outcome.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 5),
    }));
  }, options.exclude ?? []);
  const serious = result.filter((v) => v.impact === "serious" || v.impact === "critical");
  if (serious.length > 0) {
    throw new Error(
      `axe (${label}): ${serious.length} serious/critical violation(s):\n${serious.map((v) => `  ${v.impact} ${v.id}: ${v.help} at ${v.targets.join(", ")}`).join("\n")}`,
    );
  }
}

/** Every response body `page` receives from now on, as text (what the test then searches for a canary). */
export function responseBodies(page: Page): string[] {
  const bodies: string[] = [];
  page.on(
    "response",
    (response) =>
      void response.text().then(
        (text) => bodies.push(text),
        () => undefined,
      ),
  );
  return bodies;
}
