// The frame every workspace page is drawn in: while its data is read, one loading line; when the
// read fails, the explicit unavailable state; then the breadcrumb, the workspace tabs and the
// page's heading above its own body, and (when the page announces its changes) a polite status line.
import type { Workspace } from "@stackship/client";
import { html, nothing, type TemplateResult } from "lit";
import { renderFailure, workspaceNav, type WorkspaceTab } from "./workspace-common.ts";
import type { WorkspaceLoader, WorkspacePageData } from "./workspace-loader.ts";

export interface WorkspaceFrame<T> {
  /** The tab marked current. */
  tab: WorkspaceTab;
  /** The loading line ("Loading variables…"). */
  loading: string;
  /** The heading of the unavailable state ("The workspace is unavailable" when the page names none). */
  unavailable?: string;
  /** The page's `h1`. */
  heading: (workspace: Workspace) => string;
  /** The rest of the page. */
  body: (data: WorkspacePageData<T>) => TemplateResult;
  /** A visually hidden live region after the page, always present (its text is said when it changes). */
  announcement?: { id: string; text: string };
}

export function workspaceFrame<T extends object>(loader: WorkspaceLoader<T>, frame: WorkspaceFrame<T>): TemplateResult {
  const page = loader.task.render({
    initial: () => html`<p role="status">${frame.loading}</p>`,
    pending: () => html`<p role="status">${frame.loading}</p>`,
    error: (error) => renderFailure(frame.unavailable ?? "The workspace is unavailable", error),
    complete: (data) => html`${workspaceNav(data.workspace, frame.tab, loader.session)}
      <h1>${frame.heading(data.workspace)}</h1>
      ${frame.body(data)}`,
  });
  const announcement = frame.announcement;
  return html`${page}${announcement ? html`<p role="status" class="visually-hidden" id=${announcement.id}>${announcement.text}</p>` : nothing}`;
}
