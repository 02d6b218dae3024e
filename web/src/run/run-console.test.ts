import { equal, ok } from "../../test/support/assert.ts";
import { deep, sleep, text, until } from "../../test/support/dom.ts";
import { FakeSocket, helloMessage, logMessage } from "../../test/support/fake-socket.ts";
import { applying, applyLogServer, consoleText, fastLiveFeed, timelinePage } from "../../test/support/run-page.ts";
import type { Review } from "./review-model.ts";

// The console as a reader uses it: it follows new output while scrolled to the bottom, stops when
// the reader scrolls up ("Jump to latest" brings it back), numbers its lines, searches, wraps, and
// a failed stage opens at its first error line.

fastLiveFeed();

function applyFailed(r: Review) {
  r.attributes.header.status = "errored";
  r.attributes.available_actions = [];
  Object.assign(r.attributes.stages.approval, { status: "succeeded", state: "approved" });
  Object.assign(r.attributes.stages.apply, {
    status: "failed",
    phase_status: "errored",
    started_at: "2026-12-03T10:01:00.000Z",
    finished_at: "2026-12-03T10:02:00.000Z",
  });
}

const lines = (from: number, to: number, word = "line") =>
  Array.from({ length: to - from + 1 }, (_, i) => `${word} ${from + i}\n`).join("");
const scroller = (el: HTMLElement) => deep<HTMLElement>(deep(el, "ss-run-console")!, "[data-scroll]")!;
const atBottom = (box: HTMLElement) => box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
const jump = (el: HTMLElement) => deep<HTMLButtonElement>(el, '[data-testid="console-jump"]');
const control = <E extends HTMLElement = HTMLButtonElement>(el: HTMLElement, id: string) =>
  deep<E>(el, `[data-testid="${id}"]`)!;

/** A running apply whose console opened by itself and holds lines 1..n (read after the hello). */
async function liveConsole(n: number) {
  const log = { stored: lines(1, n), complete: false };
  const s = applyLogServer(applying, log);
  const el = await timelinePage(s);
  await until(() => deep(el, "ss-run-console"), "the running stage's console, opened by itself");
  FakeSocket.last.send(helloMessage({ apply: { next_seq: 1, next_offset: log.stored.length } }));
  await until(() => consoleText(el) === log.stored, "the first window");
  return { el, log };
}

async function append(el: HTMLElement, log: { stored: string }, seq: number, chunk: string) {
  FakeSocket.last.send(logMessage("apply", seq, log.stored.length, chunk));
  log.stored += chunk;
  await until(() => consoleText(el) === log.stored, `live chunk ${seq}`);
  await sleep(30);
}

describe("the run console", () => {
  afterEach(() => {
    FakeSocket.all = [];
  });

  it("should follow new output at the bottom, stop when the reader scrolls up, and Jump to latest brings it back", async () => {
    const { el, log } = await liveConsole(200);
    const box = scroller(el);
    ok(box.scrollHeight > box.clientHeight + 100, "the log is taller than its box");
    await until(() => atBottom(box), "a live console opens at its newest line");
    ok(!jump(el), "no Jump to latest while following");
    await append(el, log, 1, lines(201, 260));
    ok(atBottom(box), "it followed the new lines");

    box.scrollTop = 0;
    await until(() => jump(el), "Jump to latest once the reader scrolled up");
    equal(text(jump(el)), "Jump to latest");
    await append(el, log, 2, lines(261, 300));
    equal(box.scrollTop, 0, "the reader's place is kept while new lines arrive");
    ok(!atBottom(box));

    jump(el)!.click();
    await until(() => !jump(el), "following again");
    ok(atBottom(box), "back at the newest line");
    await append(el, log, 3, lines(301, 320));
    ok(atBottom(box), "and following new lines again");
  });

  it("should number its lines, and keep numbering as lines arrive", async () => {
    const { el, log } = await liveConsole(30);
    const gutter = () => text(control<HTMLElement>(el, "console-gutter")).split(/\s+/);
    equal(gutter()[0], "1");
    equal(gutter().at(-1), "30");
    await append(el, log, 1, "line 31\npartial ");
    equal(gutter().at(-1), "32", "a partial last line has its number");
    await append(el, log, 2, "end\nline 33\n");
    equal(gutter().at(-1), "33", "the partial line was finished, not counted twice");
    equal(gutter().length, 33);
  });

  it("should search with a match count, next and previous (buttons and Enter / Shift+Enter), and stop following", async () => {
    const { el } = await liveConsole(120);
    const search = control<HTMLInputElement>(el, "console-search");
    search.value = "LINE 10";
    search.dispatchEvent(new Event("input"));
    // line 10, 100..109: 11 matches, case-insensitively
    await until(() => text(control(el, "console-matches")) === "1 of 11", "the count");
    ok(jump(el), "a search leaves the newest line: Jump to latest offered");
    control(el, "console-next").click();
    await until(() => text(control(el, "console-matches")) === "2 of 11");
    control(el, "console-previous").click();
    control(el, "console-previous").click();
    await until(() => text(control(el, "console-matches")) === "11 of 11", "previous wraps around");
    search.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    await until(() => text(control(el, "console-matches")) === "1 of 11", "Enter: next");
    search.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", shiftKey: true }));
    await until(() => text(control(el, "console-matches")) === "11 of 11", "Shift+Enter: previous");
    search.value = "no such text";
    search.dispatchEvent(new Event("input"));
    await until(() => text(control(el, "console-matches")) === "No matches");
    ok(control(el, "console-next").disabled && control(el, "console-previous").disabled, "nothing to step through");
  });

  it("should scroll long lines sideways by default and wrap them on request", async () => {
    const long = `${"x".repeat(2000)}\n`;
    const log = { stored: long, complete: false };
    const el = await timelinePage(applyLogServer(applying, log));
    await until(() => deep(el, "ss-run-console"));
    FakeSocket.last.send(helloMessage({ apply: { next_seq: 1, next_offset: long.length } }));
    await until(() => consoleText(el) === long);
    const box = scroller(el);
    ok(
      box.scrollWidth > box.clientWidth,
      `a long line scrolls sideways (${box.scrollWidth} > ${box.clientWidth}; page ${document.documentElement.scrollWidth})`,
    );
    ok(document.documentElement.scrollWidth <= innerWidth, "the long line does not widen the page");
    const wrap = control(el, "console-wrap");
    equal(wrap.getAttribute("aria-pressed"), "false");
    wrap.click();
    await until(() => wrap.getAttribute("aria-pressed") === "true");
    await sleep(30);
    ok(box.scrollWidth <= box.clientWidth + 1, "wrapped: nothing to scroll sideways");
    ok(!deep(el, '[data-testid="console-gutter"]'), "wrapped lines have no number column");
  });

  it("should open a failed stage by itself, at its first error line", async () => {
    const log = {
      stored: `${lines(1, 150)}│ Error: creating thing: access denied\n${lines(152, 300)}`,
      complete: true,
    };
    const el = await timelinePage(applyLogServer(applyFailed, log));
    await until(() => consoleText(el) === log.stored, "the failed stage's console, opened without a click");
    const box = scroller(el);
    await until(() => box.scrollTop > 0, "scrolled to the error");
    ok(!atBottom(box), "not at the end: at the error");
    const pre = control<HTMLPreElement>(el, "console-apply");
    const range = document.createRange();
    const node = pre.firstChild!;
    const at = log.stored.indexOf("│ Error");
    range.setStart(node, at);
    range.setEnd(node, at + 7);
    const line = range.getBoundingClientRect();
    const view = box.getBoundingClientRect();
    ok(
      line.top >= view.top && line.bottom <= view.bottom,
      `the error line is in view (${line.top}..${line.bottom} within ${view.top}..${view.bottom})`,
    );
    equal(text(jump(el)), "Jump to end", "a finished log offers the end, not 'latest'");
  });
});
