// Reading what a workspace page shows: the workspace (with the caller's permissions and its
// organization's name) and the page's own resource, side by side in one @lit/task, again when the
// page asks after an action. The page renders it in its frame (workspace-frame.ts).
import { ContextConsumer } from "@lit/context";
import { Task } from "@lit/task";
import type { Client } from "@stackship/client";
import type { ReactiveControllerHost } from "lit";
import { apiContext, sessionContext } from "../app/context.ts";
import type { Session } from "../app/session.ts";
import { loadWorkspace, type LoadedWorkspace } from "./workspace-common.ts";

/** A workspace page: its `workspace-id` attribute names the workspace. */
export type WorkspacePageHost = ReactiveControllerHost & HTMLElement & { readonly workspaceId: string };

/** Reads the page's own resource (failing fails the page; a page that can show its workspace without it catches). */
export type ResourceLoader<T> = (api: Client, workspaceId: string, signal: AbortSignal) => Promise<T>;

/** What a workspace page has once read: the workspace and the page's resource. */
export type WorkspacePageData<T> = LoadedWorkspace & T;

/**
 * The page's data: consumes the API client and the session for its host, reads the workspace and
 * the page's resource whenever `workspaceId` changes, and again on `reload()`.
 */
export class WorkspaceLoader<T extends object = Record<never, never>> {
  private readonly apiConsumer: ContextConsumer<typeof apiContext, WorkspacePageHost>;
  private readonly sessionConsumer: ContextConsumer<typeof sessionContext, WorkspacePageHost>;
  readonly task: Task<readonly [string], WorkspacePageData<T>>;

  constructor(host: WorkspacePageHost, load?: ResourceLoader<T>) {
    this.apiConsumer = new ContextConsumer(host, { context: apiContext });
    this.sessionConsumer = new ContextConsumer(host, { context: sessionContext, subscribe: true });
    this.task = new Task(host, {
      args: () => [host.workspaceId] as const,
      task: async ([id], { signal }) => {
        const [loaded, resource] = await Promise.all([
          loadWorkspace(this.api, this.session, id, signal),
          load ? load(this.api, id, signal) : ({} as T),
        ]);
        return { ...loaded, ...resource };
      },
    });
  }

  /** The SDK client every read and change goes through. */
  get api(): Client {
    return this.apiConsumer.value!;
  }

  get session(): Session | null {
    return this.sessionConsumer.value ?? null;
  }

  /** The last successful read (undefined before the first). */
  get value(): WorkspacePageData<T> | undefined {
    return this.task.value;
  }

  /** Reads again after an action (the page renders the read's own failure). */
  reload(): void {
    void this.task.run();
  }
}
