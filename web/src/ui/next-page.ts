// The "Load more" step of a cursor-paged list (the runs list, the audit history): one task that
// reads the page after the list's cursor, for the signed-in organization, when the reader asks.
import { Task } from "@lit/task";
import type { ReactiveControllerHost } from "lit";

/** A page of a cursor-paged list as the API answers it (meta.page.next_cursor; null at the end). */
export interface CursorPage<T> {
  data: T[];
  meta: { page: { next_cursor?: string | null } };
}

/** Where a paged list stands and how it reads and keeps the next page. */
export interface NextPageSource<P> {
  organization: () => string | null;
  cursor: () => string | null;
  read: (organization: string, cursor: string, signal: AbortSignal) => Promise<P>;
  /** Keeps the page: its rows added to the list, its cursor the list's own. */
  take: (page: P) => void;
}

/** A task (run on request, never on its own) reading the next page; nothing without an organization or a cursor. */
export function nextPageTask<P extends CursorPage<unknown>>(
  host: ReactiveControllerHost,
  source: NextPageSource<P>,
): Task<readonly [string | null, string | null], void> {
  return new Task(host, {
    autoRun: false,
    args: () => [source.organization(), source.cursor()] as const,
    task: async ([organization, cursor], { signal }) => {
      if (!organization || !cursor) return;
      source.take(await source.read(organization, cursor, signal));
    },
  });
}
