/**
 * Sending one action on the run from an element of the run page: the element is busy while the
 * request is under way, keeps the server's failure to show in place, and on success tells the
 * page (`ss-run-action-done`), which re-reads the review.
 */
import { asFailure, unwrap, type RequestFailed, type SdkResult } from "./api-result.ts";
import { emit, type RunActionDoneDetail } from "./events.ts";

/** An element that sends run actions: its controls are disabled while `busy`, `failure` is shown. */
export interface RunActionHost extends EventTarget {
  busy: boolean;
  failure: RequestFailed | null;
}

/** Sends `call` for `host`; `onDone` (e.g. closing a confirmation) runs on success, before the event. */
export async function performRunAction(
  host: RunActionHost,
  done: RunActionDoneDetail,
  call: () => Promise<SdkResult<unknown>>,
  onDone?: () => void,
): Promise<void> {
  host.busy = true;
  host.failure = null;
  try {
    unwrap(await call());
    onDone?.();
    emit(host, "ss-run-action-done", done);
  } catch (error) {
    host.failure = asFailure(error);
  } finally {
    host.busy = false;
  }
}
