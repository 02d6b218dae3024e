/**
 * `npm run bench dashboard-live`: the run page's live consoles in Debian's Chromium against a real
 * server and a real run awaiting approval, its live socket routed through Playwright so synthetic
 * apply `log` messages (seq and offsets exactly as the server would send them) are injected after
 * the server's own hello.
 *   1. Publish-to-painted latency at 200 events/s: from the moment an event is handed to the
 *      socket until the frame after the console's text showed it. Target p95 ≤ 100 ms.
 *   2. CPU time (CDP Performance TaskDuration) per MiB appended with the 512 KiB cap active (4 MiB
 *      in 4 KiB events), against appending the same chunks to a plain <pre> in the same page.
 *      Target ≤ 2×.
 * Prints figures and ratios; asserts nothing (benchmarks never do).
 */
import type { WebSocketRoute } from "playwright-core";
import { startHarness } from "../../web/test/support/index.ts";
import { percentile } from "./stats.ts";

const EVENTS = Number(process.env.BENCH_LIVE_EVENTS ?? 1000);
const RATE = 200;
const CPU_MIB = 4;
const CHUNK = 4096;

// In-page scripts are strings: tsx would wrap named inner functions in a helper the page lacks.
const FIND = `const find = (root, selector) => { const direct = root.querySelector(selector); if (direct) return direct; for (const el of root.querySelectorAll("*")) { const found = el.shadowRoot ? find(el.shadowRoot, selector) : null; if (found) return found; } return null; };`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const h = await startHarness();
try {
  const org = await h.organization("bench");
  const { run } = await h.makeRun(org, "awaiting_approval");
  const { page } = await h.signInAs(org, "viewer");
  let route: WebSocketRoute | null = null;
  await page.routeWebSocket(/\/live\/runs\//, (ws) => {
    route = ws;
    ws.connectToServer();
  });
  await page.goto(h.url(`/runs/${run.id}`));
  await page.getByTestId("stage-apply").getByTestId("stage-head").click();
  await page.getByTestId("console-live").waitFor({ timeout: 15_000 });
  const socket = route as unknown as WebSocketRoute;
  const at = { apply: { seq: 0, offset: 0 }, policy: { seq: 0, offset: 0 } };
  const send = (text: string, phase: "apply" | "policy" = "apply") => {
    const { seq, offset } = at[phase];
    socket.send(
      JSON.stringify({
        type: "log",
        run_id: run.id,
        phase,
        seq,
        offset,
        next_offset: offset + text.length,
        text,
        final: false,
      }),
    );
    at[phase] = { seq: seq + 1, offset: offset + text.length };
  };

  // 1. Latency: the page notes, per frame, the highest event number its console shows.
  await page.evaluate(`(() => {
    ${FIND}
    window.__painted = [];
    const pre = () => find(document, '[data-testid="console-apply"]');
    const tick = () => {
      const el = pre();
      if (el) {
        const text = el.textContent;
        const at = text.lastIndexOf("evt-");
        if (at >= 0) {
          const n = Number(text.slice(at + 4, text.indexOf(" ", at)));
          const last = window.__painted[window.__painted.length - 1];
          if (!last || last[0] !== n) window.__painted.push([n, Date.now()]);
        }
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  })()`);
  const sent: number[] = [];
  const start = Date.now();
  for (let n = 0; n < EVENTS; n++) {
    const due = start + (n * 1000) / RATE;
    if (due > Date.now()) await sleep(due - Date.now());
    sent[n] = Date.now();
    send(`evt-${n} ${"x".repeat(60)}\n`);
  }
  await sleep(500);
  const painted = await page.evaluate<Array<[number, number]>>("window.__painted");
  const latencies: number[] = [];
  let i = 0;
  for (let n = 0; n < EVENTS; n++) {
    while (i < painted.length && painted[i][0] < n) i++;
    if (i < painted.length) latencies.push(painted[i][1] - sent[n]);
  }
  console.log(`dashboard-live: ${EVENTS} apply log events at ${RATE}/s through the run page's live socket (Chromium)`);
  console.log(
    `  publish → painted  p50 ${percentile(latencies, 50)} ms  p95 ${percentile(latencies, 95)} ms  max ${Math.max(...latencies)} ms (target: p95 ≤ 100 ms; ${latencies.length} of ${EVENTS} events seen painted)`,
  );

  // 2. CPU per MiB with the cap active, against a plain <pre>.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const taskDuration = async () =>
    (await cdp.send("Performance.getMetrics")).metrics.find((m) => m.name === "TaskDuration")!.value;
  const chunks = (CPU_MIB * 1048576) / CHUNK;
  const body = (k: number) => `cpu-${String(k).padStart(6, "0")} ${"y".repeat(CHUNK - 13)}\n`;
  const cpuBefore = await taskDuration();
  for (let k = 0; k < chunks; k++) {
    send(body(k));
    if (k % 64 === 63) await sleep(16);
  }
  const lastMarker = `cpu-${String(chunks - 1).padStart(6, "0")}`;
  await page.waitForFunction(
    `(() => { ${FIND} const el = find(document, '[data-testid="console-apply"]'); return !!el && el.textContent.includes(${JSON.stringify(lastMarker)}); })()`,
    undefined,
    { timeout: 60_000, polling: 100 },
  );
  const consoleCpu = (await taskDuration()) - cpuBefore;
  const kept = await page.evaluate<number>(
    `(() => { ${FIND} return find(document, '[data-testid="console-apply"]').textContent.length; })()`,
  );
  // The same messages over the same socket for the policy phase, whose console was never opened:
  // what delivery and parsing cost without any console.
  const transportBefore = await taskDuration();
  for (let k = 0; k < chunks; k++) {
    send(body(k), "policy");
    if (k % 64 === 63) await sleep(16);
  }
  await sleep(300);
  const transportCpu = (await taskDuration()) - transportBefore;
  // The same chunks to a plain <pre>, handed over in the same batches.
  await page.evaluate(
    `(() => { window.__pre = document.createElement("pre"); document.body.append(window.__pre); })()`,
  );
  const preBefore = await taskDuration();
  for (let k = 0; k < chunks; k += 64) {
    await page.evaluate(
      `(() => { for (let j = ${k}; j < ${Math.min(chunks, k + 64)}; j++) window.__pre.insertAdjacentText("beforeend", ${JSON.stringify(body(0))}.replace("000000", String(j).padStart(6, "0"))); })()`,
    );
    await sleep(16);
  }
  await page.evaluate(`new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))`);
  const preCpu = (await taskDuration()) - preBefore;
  await cdp.detach();
  const perMiB = (s: number) => `${((s * 1000) / CPU_MIB).toFixed(1)} ms/MiB`;
  console.log(
    `  CPU, ${CPU_MIB} MiB in ${CHUNK / 1024} KiB events, console capped at 512 KiB (kept ${kept} chars): ${perMiB(consoleCpu)}`,
  );
  console.log(`  CPU, the same messages delivered to no console (socket, routing, parse): ${perMiB(transportCpu)}`);
  console.log(`  CPU, the same chunks appended to a plain <pre>:                        ${perMiB(preCpu)}`);
  console.log(
    `  ratio console / (delivery + plain <pre>) ${(consoleCpu / (transportCpu + preCpu)).toFixed(2)}× (target: ≤ 2×); console alone over delivery ${perMiB(consoleCpu - transportCpu)} vs <pre> ${perMiB(preCpu)}`,
  );
} finally {
  await h.stop();
}
