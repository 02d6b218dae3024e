/**
 * The run page's typed events. Each bubbles and is composed, so it crosses the shadow roots of
 * the page's elements and reaches `<ss-run-page>` (and anything above it).
 */
import type { Action } from "./review-model.ts";

/** An action on the run was accepted by the server; the page re-reads the review. */
export interface RunActionDoneDetail {
  action: Action | "resolve";
  runId: string;
}

/** The review should be read again now (e.g. after a refused action whose reason may be stale). */
export interface RunRefreshDetail {
  runId: string;
}

/** A stage was expanded or collapsed. */
export interface StageToggleDetail {
  stage: "plan" | "policy" | "approval" | "apply";
  expanded: boolean;
}

declare global {
  interface GlobalEventHandlersEventMap {
    "ss-run-action-done": CustomEvent<RunActionDoneDetail>;
    "ss-run-refresh": CustomEvent<RunRefreshDetail>;
    "ss-stage-toggle": CustomEvent<StageToggleDetail>;
  }
}

type RunEvents = {
  "ss-run-action-done": RunActionDoneDetail;
  "ss-run-refresh": RunRefreshDetail;
  "ss-stage-toggle": StageToggleDetail;
};

/** Dispatches one of the run page's events from `target`, bubbling and composed. */
export function emit<K extends keyof RunEvents>(target: EventTarget, type: K, detail: RunEvents[K]): boolean {
  return target.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
}
