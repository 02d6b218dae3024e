import { equal, ok } from "../../test/support/assert.ts";
import { deep, sleep, text, until } from "../../test/support/dom.ts";
import { cleanup, type FakeServer } from "../../test/support/fake-server.ts";
import { FakeSocket, helloMessage, logMessage } from "../../test/support/fake-socket.ts";
import { RUN_ID } from "../../test/support/fixtures.ts";
import {
  APPLY_LOG,
  applying,
  applyLogServer,
  consoleText,
  fastLiveFeed,
  logAnswer,
  planning,
  REVIEW,
  stage,
  timelinePage,
} from "../../test/support/run-page.ts";
import type { Review } from "./review-model.ts";
import { CONSOLE_MAX_CHARS, keepNewest } from "./run-console.ts";
import { SsRunPage } from "./run-page.ts";

fastLiveFeed();

/** A fake server whose apply log route serves `log.stored` by offset, as the real route does. */
function server(patch: (r: Review) => void = applying) {
  const log = { stored: "", complete: false };
  return { s: applyLogServer(patch, log), log };
}

/** Expands the stage unless it is already (a running or failed stage opens by itself). */
const expand = (el: HTMLElement, name: string) => {
  if (!stage(el, name).hasAttribute("expanded"))
    stage(el, name).shadowRoot!.querySelector<HTMLElement>('[data-testid="stage-head"]')!.click();
};
const logReads = (s: FakeServer) =>
  s.requests
    .filter((r) => `${r.method} ${r.path}` === APPLY_LOG)
    .map((r) => Number(new URLSearchParams(r.search).get("offset")));
const refreshButton = (el: HTMLElement) => deep(el, '[data-testid="refresh-log"]');

describe("the run page's live feed", () => {
  afterEach(() => {
    FakeSocket.all = [];
  });

  it("should open one socket on the page's own origin for a non-terminal run, and none for a terminal run", async () => {
    await timelinePage(server().s);
    await until(() => FakeSocket.all.length === 1, "the socket");
    equal(FakeSocket.last.url, `ws://${location.host}/live/runs/${RUN_ID}`);
    cleanup();
    FakeSocket.all = [];
    await timelinePage(server((r) => (r.attributes.header.status = "applied")).s);
    await sleep(100);
    equal(FakeSocket.all.length, 0, "a run terminal at load opens no socket");
  });

  it("should append live chunks in order, drop duplicates, and show no control while live", async () => {
    const { s, log } = server();
    log.stored = "one\n";
    const el = await timelinePage(s);
    await until(() => FakeSocket.all.length === 1);
    expand(el, "apply");
    await until(() => consoleText(el) === "one\n", "the first window");
    ok(refreshButton(el), "not live yet: Refresh log");
    const socket = FakeSocket.last;
    socket.send(helloMessage({ apply: { next_seq: 1, next_offset: 4 } }));
    await until(() => !refreshButton(el), "no control while live");
    socket.send(logMessage("apply", 1, 4, "two\n"));
    socket.send(logMessage("apply", 1, 4, "two\n"));
    socket.send(logMessage("apply", 2, 8, "three\n"));
    await until(() => consoleText(el) === "one\ntwo\nthree\n", "live lines");
    await sleep(50);
    equal(consoleText(el), "one\ntwo\nthree\n", "the duplicate was dropped");
    equal(logReads(s), [0], "the live lines needed no HTTP read");
  });

  it("should re-read the HTTP route from its offset on a sequence gap and on an out-of-order message", async () => {
    const { s, log } = server();
    log.stored = "a\n";
    const el = await timelinePage(s);
    expand(el, "apply");
    await until(() => consoleText(el) === "a\n");
    const socket = FakeSocket.last;
    socket.send(helloMessage({ apply: { next_seq: 1, next_offset: 2 } }));
    log.stored = "a\nb\nc\nd\n";
    socket.send(logMessage("apply", 3, 6, "d\n")); // seq 1 and 2 never came
    await until(() => consoleText(el) === "a\nb\nc\nd\n", "the re-read");
    equal(logReads(s), [0, 2], "re-read from its last offset");
    socket.send(logMessage("apply", 2, 4, "c\n")); // late, out of order: dropped
    log.stored += "e\n";
    socket.send(logMessage("apply", 4, 8, "e\n"));
    // an offset gap the sequence does not show: the route decides
    log.stored += "f\ng\n";
    socket.send(logMessage("apply", 5, 12, "g\n"));
    await until(() => consoleText(el) === log.stored, "the second re-read");
    equal(logReads(s), [0, 2, 10]);
  });

  it("should wait for the hello before its first read, then read just its window and continue live, capped at 512 KiB with a trimmed line", async () => {
    const { s, log } = server();
    const line = "0123456789abcdef0123456789abcde\n"; // 32 chars
    log.stored = line.repeat(20_000); // 640,000 chars
    const el = await timelinePage(s);
    const socket = FakeSocket.last;
    await until(() => deep(el, "ss-run-console"), "the running stage's console, opened by itself");
    await sleep(50);
    equal(logReads(s), [], "nothing read before the hello says where the log ends");
    socket.send(helloMessage({ apply: { next_seq: 5, next_offset: log.stored.length } }));
    socket.send(logMessage("apply", 5, log.stored.length, "tail-1\n"));
    log.stored += "tail-1\n";
    expand(el, "apply");
    await until(() => consoleText(el).endsWith("tail-1\n"), "the window");
    equal(
      logReads(s),
      [line.length * 20_000 - CONSOLE_MAX_CHARS],
      "only the newest 512 KiB (from the hello's end) were read",
    );
    equal(consoleText(el).length, CONSOLE_MAX_CHARS);
    ok(deep(el, '[data-testid="console-trimmed"]'), "says it trimmed");
    socket.send(logMessage("apply", 6, log.stored.length, "tail-2\n"));
    log.stored += "tail-2\n";
    await until(() => consoleText(el).endsWith("tail-1\ntail-2\n"), "live after the window");
    equal(
      consoleText(el),
      log.stored.slice(-CONSOLE_MAX_CHARS),
      "exactly the newest 512 KiB, nothing duplicated or skipped",
    );
  });

  it("should cut on a character boundary", () => {
    const emoji = "😀"; // two UTF-16 code units
    const long = "x" + emoji.repeat(CONSOLE_MAX_CHARS / 2);
    const kept = keepNewest(long);
    ok(kept.cut);
    equal(kept.text.length, CONSOLE_MAX_CHARS);
    const odd = emoji.repeat(CONSOLE_MAX_CHARS / 2 + 1) + "y"; // the cut would fall inside a pair
    const cut = keepNewest(odd);
    equal(cut.text.length, CONSOLE_MAX_CHARS - 1);
    ok(cut.text.startsWith(emoji) && cut.text.endsWith("y"));
    equal(keepNewest("short").cut, false);
  });

  it("should read the review once for a burst of run messages", async () => {
    const { s } = server();
    await timelinePage(s);
    const socket = FakeSocket.last;
    socket.send(helloMessage());
    await sleep(100);
    const before = s.count(REVIEW);
    for (let i = 0; i < 6; i++)
      socket.send({
        type: "run",
        run_id: RUN_ID,
        run: {
          status: "applying",
          status_reason: null,
          plan_status: "finished",
          policy_outcome: "passed",
          apply_status: "running",
          terminal: false,
        },
        changed: ["apply_status"],
      });
    await sleep(150);
    equal(s.count(REVIEW) - before, 1);
  });

  it("should fall back to the route on a disconnect and show Refresh log; stop for good on close 1000", async () => {
    const { s, log } = server();
    log.stored = "a\n";
    const el = await timelinePage(s);
    expand(el, "apply");
    await until(() => consoleText(el) === "a\n");
    FakeSocket.last.send(helloMessage({ apply: { next_seq: 1, next_offset: 2 } }));
    await until(() => !refreshButton(el));
    log.stored = "a\nb\n";
    FakeSocket.last.drop(1006);
    await until(() => consoleText(el) === "a\nb\n", "the re-read after the disconnect");
    ok(refreshButton(el), "not live: Refresh log");
    equal(logReads(s).slice(-1), [2]);
    await until(() => FakeSocket.all.length === 2, "a reconnect");
    FakeSocket.last.send(helloMessage({ apply: { next_seq: 2, next_offset: 4 } }));
    await until(() => !refreshButton(el));
    FakeSocket.last.send({
      type: "run",
      run_id: RUN_ID,
      run: {
        status: "applied",
        status_reason: null,
        plan_status: "finished",
        policy_outcome: "passed",
        apply_status: "finished",
        terminal: true,
      },
      changed: ["status"],
    });
    FakeSocket.last.drop(1000);
    await until(() => refreshButton(el), "Refresh log once terminal");
    await sleep(100);
    equal(FakeSocket.all.length, 2, "no reconnect after close 1000");
  });

  it("should show the stale note and poll the review after three failures, and drop both when the socket recovers", async () => {
    const { s } = server();
    const el = await timelinePage(s);
    const note = () => deep(el, '[data-testid="live-stale"]');
    for (let i = 1; i <= 2; i++) {
      await until(() => FakeSocket.all.length === i);
      FakeSocket.last.drop(1006);
    }
    await sleep(30);
    equal(note(), null, "two failures: no note");
    await until(() => FakeSocket.all.length === 3);
    FakeSocket.last.drop(1006);
    await until(() => note(), "the note");
    equal(text(note()), "Reconnecting — data may be stale");
    const before = s.count(REVIEW);
    await until(() => s.count(REVIEW) - before >= 2, "the review polled twice");
    await until(() => FakeSocket.all.length === 4);
    FakeSocket.last.send(helloMessage());
    await until(() => !note(), "the note goes");
    await sleep(150);
    const settled = s.count(REVIEW);
    await sleep(300);
    equal(s.count(REVIEW), settled, "no polling once live again");
  });

  it("should say the plan log appears when the plan finishes while the plan runs", async () => {
    const s = server(planning).s.on(
      `GET /v1/runs/${RUN_ID}/logs/plan`,
      logAnswer("plan", { offset: 0, text: "", next_offset: 0, complete: false }),
    );
    const el = await timelinePage(s);
    expand(el, "plan");
    const held = await until(() => deep(el, '[data-testid="console-held"]'), "the held note");
    ok(text(held).startsWith("The plan log appears when the plan finishes"));
  });

  it("should close the socket when the page stays hidden, and reopen it (and re-read the review) when visible", async () => {
    SsRunPage.hiddenCloseMs = 50;
    let visibility: DocumentVisibilityState = "visible";
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => visibility });
    try {
      const { s } = server();
      const el = await timelinePage(s);
      FakeSocket.last.send(helloMessage());
      visibility = "hidden";
      document.dispatchEvent(new Event("visibilitychange"));
      await sleep(20);
      equal(FakeSocket.last.closed, false, "a short hide keeps the socket");
      await until(() => FakeSocket.last.closed, "closed after staying hidden");
      await sleep(50);
      equal(FakeSocket.all.length, 1, "no reconnect while hidden");
      const reads = s.count(REVIEW);
      visibility = "visible";
      document.dispatchEvent(new Event("visibilitychange"));
      await until(() => FakeSocket.all.length === 2, "reopened when visible");
      await until(() => s.count(REVIEW) > reads, "the review re-read");
      ok(el.isConnected);
      el.remove();
      ok(FakeSocket.last.closed, "leaving the page closes its socket");
    } finally {
      delete (document as unknown as { visibilityState?: string }).visibilityState;
      SsRunPage.hiddenCloseMs = 60_000;
    }
  });
});
