// The run page scenarios' shared steps (run-page.test.ts, run-page-decisions.test.ts).
import type { Page } from "playwright-core";
import { getRun } from "../../../client/src/index.ts";
import type { Harness, HarnessOrganization } from "../support/index.ts";

/** Opens the run page and waits until the review rendered its header. */
export async function openRun(h: Harness, page: Page, runId: string) {
  await page.goto(h.url(`/runs/${runId}`));
  await page.getByTestId("run-id").filter({ hasText: runId }).waitFor();
}

/** The deepest focused element's tag and text (through shadow roots). */
export function focused(page: Page) {
  return page.evaluate(() => {
    let active: Element | null = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    return { tag: active?.tagName.toLowerCase() ?? "", text: (active?.textContent ?? "").trim().replace(/\s+/g, " ") };
  });
}

export async function runStatus(h: Harness, org: HarnessOrganization, runId: string) {
  const result = await getRun({ client: h.server.v1(org.token), path: { run_id: runId } });
  return result.data!.data.attributes.status;
}
