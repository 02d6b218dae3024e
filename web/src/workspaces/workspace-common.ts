// What the four workspace pages share: reading the workspace, the sub-navigation, the styles and
// the explicit unavailable state.
import { getWorkspace, type Client, type Workspace } from "@stackship/client";
import { css, html, nothing, type TemplateResult } from "lit";
import { dataOf, RequestFailed } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { base } from "../ui/tokens.ts";

export interface LoadedWorkspace {
  workspace: Workspace;
  /** The organization's name when the session knows it (the API names it by id). */
  organization: string | null;
}

export async function loadWorkspace(api: Client, session: Session | null, id: string, signal: AbortSignal): Promise<LoadedWorkspace> {
  const document = await dataOf(getWorkspace({ client: api, path: { workspace_id: id }, signal }));
  const workspace = document.data;
  const organizationId = workspace.relationships.organization.data.id;
  return { workspace, organization: session?.organizations.find((o) => o.id === organizationId)?.name ?? null };
}

export type WorkspaceTab = "overview" | "state" | "cloud-access" | "source";

/** Breadcrumb and tabs of a workspace page (the current one marked with aria-current). */
export function workspaceNav(workspace: Workspace, current: WorkspaceTab): TemplateResult {
  const tabs: Array<[WorkspaceTab, string, string]> = [
    ["overview", "Overview", `/workspaces/${workspace.id}`],
    ["state", "State", `/workspaces/${workspace.id}/state`],
    ["cloud-access", "Cloud access", `/workspaces/${workspace.id}/cloud-access`],
    ["source", "Source settings", `/workspaces/${workspace.id}/source`],
  ];
  return html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/runs">Runs</a> › <span>Workspace ${workspace.attributes.name}</span></nav>
    <nav class="tabs" aria-label="Workspace">
      ${tabs.map(([tab, label, href]) => html`<a href=${href} aria-current=${tab === current ? "page" : nothing}>${label}</a>`)}
    </nav>`;
}

export function renderFailure(title: string, error: unknown): TemplateResult {
  const failed = error instanceof RequestFailed ? error : null;
  const missing = failed?.status === 404;
  return html`<div class="notice danger" role="alert" id="workspace-unavailable">
    <h1>${title}</h1>
    <p>
      ${missing
        ? "There is no such workspace, or you may not see it."
        : html`It could not be read${failed ? html` (<span class="mono">${failed.summary}</span>)` : html`: ${(error as Error).message}`}. Try again in a moment.`}
    </p>
    <p><a href="/runs">Back to runs</a></p>
  </div>`;
}

export const workspaceStyles = [
  base,
  css`
    :host {
      display: block;
    }
    .crumbs {
      font-size: 0.9em;
      color: var(--ss-text-muted);
    }
    .tabs {
      display: flex;
      gap: var(--ss-space-4);
      border-bottom: 1px solid var(--ss-border);
      margin: var(--ss-space-3) 0;
      padding-bottom: var(--ss-space-2);
    }
    .tabs a[aria-current="page"] {
      font-weight: 700;
      color: var(--ss-text);
      text-decoration: none;
      border-bottom: 2px solid var(--ss-info);
    }
    dl.facts {
      display: grid;
      grid-template-columns: max-content 1fr;
      gap: var(--ss-space-2) var(--ss-space-6);
    }
    dt {
      color: var(--ss-text-muted);
    }
    dd {
      margin: 0;
    }
    table {
      width: 100%;
      border-collapse: collapse;
    }
    th,
    td {
      text-align: left;
      padding: var(--ss-space-2) var(--ss-space-3);
      border-bottom: 1px solid var(--ss-border);
    }
    section {
      margin-top: var(--ss-space-6);
    }
  `,
];
