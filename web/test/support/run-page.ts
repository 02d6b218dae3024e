/**
 * The run page's component-test set-up (web/src/run/run-*.test.ts): its review and log routes on a
 * fake server, a run-logs answer, a mounted `ss-run-page`, the stages and console it shows, and the
 * review patch of a running apply.
 */
import type { Review } from "../../src/run/review-model.ts";
import { SsRunPage } from "../../src/run/run-page.ts";
import { deep, until } from "./dom.ts";
import { FakeServer, mount } from "./fake-server.ts";
import { FakeSocket } from "./fake-socket.ts";
import { reviewFixture, RUN_ID } from "./fixtures.ts";

export const REVIEW = `GET /v1/runs/${RUN_ID}/review`;
export const APPLY_LOG = `GET /v1/runs/${RUN_ID}/logs/apply`;

/** The live feed on a fake socket, with the page's own delays. */
export function fakeLiveFeed(): void {
  SsRunPage.liveDefaults = { createSocket: FakeSocket.create };
}

/** The live feed on a fake socket, with the short delays and poll interval the live and console tests wait out. */
export function fastLiveFeed(): void {
  SsRunPage.liveDefaults = { createSocket: FakeSocket.create, baseDelayMs: 10, maxDelayMs: 20, debounceMs: 40 };
  SsRunPage.pollMs = 60;
}

/** A run that is planning (plan stage running, nothing to approve yet). */
export function planning(r: Review) {
  r.attributes.header.status = "planning";
  r.attributes.available_actions = ["cancel"];
  Object.assign(r.attributes.stages.plan, {
    status: "running",
    phase_status: "running",
    finished_at: null,
    summary: { state: "not_finished" },
  });
  Object.assign(r.attributes.stages.approval, { status: "pending", state: "not_reached", plan_digest: null });
}

/** A run that is applying (apply stage running). */
export function applying(r: Review) {
  r.attributes.header.status = "applying";
  r.attributes.available_actions = ["cancel"];
  Object.assign(r.attributes.stages.approval, { status: "succeeded", state: "approved" });
  Object.assign(r.attributes.stages.apply, {
    status: "running",
    phase_status: "running",
    started_at: "2026-12-03T10:01:00.000Z",
  });
}

/** The answer of `GET /v1/runs/{run}/logs/{phase}`. */
export function logAnswer(
  phase: "plan" | "apply",
  window: { offset: number; text: string; next_offset: number; complete: boolean },
) {
  return {
    status: 200,
    body: { data: { type: "run-logs", id: `${RUN_ID}/${phase}`, attributes: { phase, ...window } } },
  };
}

/** A fake server with the review `patch` makes and an apply log route serving `log.stored` by offset, as the real route does. */
export function applyLogServer(patch: (r: Review) => void, log: { stored: string; complete: boolean }): FakeServer {
  return new FakeServer()
    .on(REVIEW, () => ({ status: 200, body: { data: reviewFixture(patch) } }))
    .on(APPLY_LOG, (request) => {
      const query = new URLSearchParams(request.search);
      const offset = Number(query.get("offset") ?? 0);
      const limit = Number(query.get("limit") ?? 65536);
      const slice = log.stored.slice(offset, offset + limit);
      const complete = log.complete && offset + slice.length >= log.stored.length;
      return logAnswer("apply", { offset, text: slice, next_offset: offset + slice.length, complete });
    });
}

/** `ss-run-page` mounted on `s`, once its stage timeline shows (the review was read). */
export async function timelinePage(s: FakeServer) {
  const el = document.createElement("ss-run-page");
  el.runId = RUN_ID;
  await mount(s, el);
  await until(() => deep(el, "ss-stage-timeline"), "the review");
  return el;
}

/** `ss-run-page` mounted on `server`, once its review read settled, whatever its outcome. */
export async function reviewedPage(server: FakeServer) {
  const el = document.createElement("ss-run-page");
  el.runId = RUN_ID;
  await mount(server, el);
  await until(() => el.reviewTask.status >= 2, "the review read");
  await el.updateComplete;
  await new Promise((r) => setTimeout(r, 20));
  return el;
}

export const withReview = (review: Review) => new FakeServer().on(REVIEW, { status: 200, body: { data: review } });
export const stage = (el: HTMLElement, name: string) => deep(el, `ss-run-stage[data-testid="stage-${name}"]`)!;
export const consoleText = (el: HTMLElement) =>
  deep<HTMLPreElement>(el, '[data-testid="console-apply"]')?.textContent ?? "";
