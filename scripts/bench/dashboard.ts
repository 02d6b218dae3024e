/**
 * `npm run bench dashboard`: the run page in Debian's Chromium against a real server, with a
 * real run whose plan-diff artifact is replaced by a 5,000-resource one (built by the real
 * builder from a synthetic plan).
 *   1. Changes tab: from the click on the tab to the first rows painted (the plan-changes read,
 *      its JSON parse and the virtualized list's first frame), against painting the same 5,000
 *      addresses as one plain <pre> in the same page, measured in the same run. Target ≤ 3×.
 *   2. The run page's JS heap with that plan open in the Changes tab, after a collection
 *      (CDP Runtime.getHeapUsage). Target ≤ 50 MiB.
 *   3. With Chromium's CPU throttled 4× (CDP Emulation.setCPUThrottlingRate), a full load of the
 *      run page until its title is painted (target ≤ 0.8 s) and of the runs page until its first
 *      row is painted (target ≤ 0.5 s), from navigation start, the same page and server.
 * Prints medians and ratios; asserts nothing (benchmarks never do).
 */
import type { Page } from "playwright-core";
import { startHarness } from "../../web/test/support/index.ts";
import { largePlanDiff, storePlanDiff } from "../../web/test/e2e/run-plan-diff-fixture.ts";
import { median } from "./stats.ts";

const REPEATS = Number(process.env.BENCH_DASHBOARD_REPEATS ?? 7);
const RESOURCES = 5_000;

// The in-page scripts are strings: tsx would wrap named inner functions in a helper the page lacks.
const FIND = `const find = (root, selector) => { const direct = root.querySelector(selector); if (direct) return direct; for (const el of root.querySelectorAll("*")) { const found = el.shadowRoot ? find(el.shadowRoot, selector) : null; if (found) return found; } return null; };`;

/** Clicks the Changes tab in the page and resolves with the ms until a row was painted. */
async function timeChangesTab(page: Page): Promise<number> {
  return await page.evaluate<number>(`new Promise((resolve, reject) => {
    ${FIND}
    const tab = find(document, "#tab-changes");
    if (!tab) return reject(new Error("no Changes tab"));
    const start = performance.now();
    tab.click();
    const deadline = start + 30000;
    const poll = () => {
      // The rows exist: the next frame paints them.
      if (find(document, '[role="listitem"]')) return requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - start), 0));
      if (performance.now() > deadline) return reject(new Error("no rows within 30 s"));
      requestAnimationFrame(poll);
    };
    requestAnimationFrame(poll);
  })`);
}

/** Paints the addresses as one <pre> in the page; resolves with the ms until that frame was painted. */
async function timePlainPre(page: Page, addresses: string[]): Promise<number> {
  return await page.evaluate<number>(`new Promise((resolve) => {
    const list = ${JSON.stringify(addresses)};
    const start = performance.now();
    const pre = document.createElement("pre");
    pre.textContent = list.join("\\n");
    document.body.append(pre);
    requestAnimationFrame(() => setTimeout(() => { const took = performance.now() - start; pre.remove(); resolve(took); }, 0));
  })`);
}

/** Loads `url` and resolves with the ms from navigation start until `selector` exists (through shadow roots) and a frame was painted. */
async function timeLoad(page: Page, url: string, selector: string): Promise<number> {
  await page.goto(url, { waitUntil: "commit" });
  return await page.evaluate<number>(`new Promise((resolve, reject) => {
    ${FIND}
    const poll = () => {
      if (find(document, ${JSON.stringify(selector)})) return requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0));
      if (performance.now() > 60000) return reject(new Error("not painted within 60 s"));
      requestAnimationFrame(poll);
    };
    poll();
  })`);
}

const h = await startHarness();
try {
  const org = await h.organization("bench");
  const { run } = await h.makeRun(org, "awaiting_approval");
  const diff = largePlanDiff(run.id, RESOURCES);
  await storePlanDiff(h.server, run.id, diff);
  const addresses = (JSON.parse(diff.toString("utf8")) as { resources: Array<{ address: string }> }).resources.map(
    (r) => r.address,
  );
  const { page } = await h.signInAs(org, "viewer");

  const tab: number[] = [];
  const pre: number[] = [];
  let heapBefore = 0;
  let heapAfter = 0;
  let metricsAfter = 0;
  for (let i = 0; i < REPEATS; i++) {
    await page.goto(h.url(`/runs/${run.id}`));
    await page.getByTestId("stage-plan").getByTestId("stage-head").click();
    await page.getByRole("tab", { name: "Changes" }).waitFor();
    const last = i === REPEATS - 1;
    const cdp = last ? await page.context().newCDPSession(page) : null;
    if (cdp) {
      await cdp.send("HeapProfiler.collectGarbage");
      heapBefore = (await cdp.send("Runtime.getHeapUsage")).usedSize;
    }
    pre.push(await timePlainPre(page, addresses));
    tab.push(await timeChangesTab(page));
    if (cdp) {
      await cdp.send("HeapProfiler.collectGarbage");
      heapAfter = (await cdp.send("Runtime.getHeapUsage")).usedSize;
      await cdp.send("Performance.enable");
      metricsAfter =
        (await cdp.send("Performance.getMetrics")).metrics.find((m) => m.name === "JSHeapUsedSize")?.value ?? 0;
      await cdp.detach();
    }
  }
  const t = median(tab);
  const p = median(pre);
  console.log(
    `dashboard: run page, ${addresses.length} resources in the plan-diff (${(diff.length / 1e6).toFixed(2)} MB); medians of ${REPEATS} in Chromium`,
  );
  console.log(
    `  5,000 addresses as one plain <pre> (baseline)   ${p.toFixed(1)} ms  [${pre.map((x) => x.toFixed(0)).join(", ")}]`,
  );
  console.log(
    `  Changes tab: click → first rows painted          ${t.toFixed(1)} ms  ${(t / p).toFixed(2)}× the <pre> (target: ≤ 3×)  [${tab.map((x) => x.toFixed(0)).join(", ")}]`,
  );
  const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
  console.log(
    `  run page JS heap with the Changes tab open       ${mib(heapAfter)} (target: ≤ 50 MiB); ${mib(heapBefore)} before the tab was opened; JSHeapUsedSize ${mib(metricsAfter)}`,
  );

  // 3. First paint of the run page and the runs page with the CPU throttled 4×.
  const throttled = await page.context().newCDPSession(page);
  await throttled.send("Emulation.setCPUThrottlingRate", { rate: 4 });
  const title: number[] = [];
  const firstRow: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    title.push(await timeLoad(page, h.url(`/runs/${run.id}`), "#run-title"));
    firstRow.push(await timeLoad(page, h.url("/runs"), "tr[data-run-id]"));
  }
  await throttled.send("Emulation.setCPUThrottlingRate", { rate: 1 });
  await throttled.detach();
  console.log(`  CPU throttled 4×, from navigation start:`);
  console.log(
    `    run page → title painted                       ${median(title).toFixed(0)} ms (target: ≤ 800 ms)  [${title.map((x) => x.toFixed(0)).join(", ")}]`,
  );
  console.log(
    `    runs page → first row painted                  ${median(firstRow).toFixed(0)} ms (target: ≤ 500 ms)  [${firstRow.map((x) => x.toFixed(0)).join(", ")}]`,
  );
} finally {
  await h.stop();
}
