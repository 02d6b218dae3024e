/**
 * Sending one change from a workspace page or one of its controls: the element is busy while the
 * request is under way and keeps the failure to show in place (`failureText`); what success means
 * (a notice, a reload of the page, an event, another page) is `onDone`, given the call's result.
 */

/** An element that sends changes: its controls are disabled while `busy`, `error` is shown. */
export interface ActionHost {
  busy: boolean;
  error: unknown;
}

/** Sends `call` for `host`; true when it and `onDone` succeeded. */
export async function perform<T>(
  host: ActionHost,
  call: () => Promise<T>,
  onDone?: (result: T) => void,
): Promise<boolean> {
  host.busy = true;
  host.error = null;
  try {
    onDone?.(await call());
    return true;
  } catch (error) {
    host.error = error;
    return false;
  } finally {
    host.busy = false;
  }
}
