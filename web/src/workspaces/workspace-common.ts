// What the workspace pages share: reading the workspace, the sub-navigation, the styles and
// the explicit unavailable state.
import { getWorkspace, type Client, type Workspace } from "@stackship/client";
import { css, html, nothing, type TemplateResult } from "lit";
import { dataOf, RequestFailed } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { absoluteUtc, relativeTime } from "../app/format.ts";
import { dataTable, formControls } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export interface LoadedWorkspace {
  workspace: Workspace;
  /** The organization's name when the session knows it (the API names it by id). */
  organization: string | null;
  /** What the caller may do with it (meta.permissions): only those controls are shown. */
  permissions: { write: boolean; verify_federation_profiles: boolean };
}

export async function loadWorkspace(
  api: Client,
  session: Session | null,
  id: string,
  signal: AbortSignal,
): Promise<LoadedWorkspace> {
  const document = await dataOf(getWorkspace({ client: api, path: { workspace_id: id }, signal }));
  const workspace = document.data;
  const organizationId = workspace.relationships.organization.data.id;
  return {
    workspace,
    organization: session?.organizations.find((o) => o.id === organizationId)?.name ?? null,
    permissions: document.meta.permissions,
  };
}

export type WorkspaceTab = "overview" | "variables" | "state" | "cloud-access" | "source";

/** Breadcrumb and tabs of a workspace page (the current one marked with aria-current). */
export function workspaceNav(
  workspace: Workspace,
  current: WorkspaceTab,
  session: Session | null = null,
): TemplateResult {
  const organization =
    session?.organizations.find((o) => o.id === workspace.relationships.organization.data.id)?.name ?? null;
  const tabs: Array<[WorkspaceTab, string, string]> = [
    ["overview", "Overview", `/workspaces/${workspace.id}`],
    ["variables", "Variables", `/workspaces/${workspace.id}/variables`],
    ["state", "State", `/workspaces/${workspace.id}/state`],
    ["cloud-access", "Cloud access", `/workspaces/${workspace.id}/cloud-access`],
    ["source", "Source settings", `/workspaces/${workspace.id}/source`],
  ];
  return html`<nav class="crumbs" aria-label="Breadcrumb">
      ${organization ? html`<a href="/runs">${organization}</a> › ` : nothing}<a href="/workspaces">Workspaces</a> › <span aria-current="page">Workspace ${workspace.attributes.name}</span>
    </nav>
    <nav class="tabs" aria-label="Workspace">
      ${tabs.map(([tab, label, href]) => html`<a href=${href} aria-current=${tab === current ? "page" : nothing}>${label}</a>`)}
    </nav>`;
}

/** An API refusal in its own words, with "HTTP 422 · CODE" after it. */
export function failureText(error: unknown): TemplateResult {
  return error instanceof RequestFailed
    ? html`${error.message} <span class="mono muted">(${error.summary})</span>`
    : html`${(error as Error).message}`;
}

/** Why a part of a page could not be read, after "… is unavailable": " (HTTP 503 · CODE)" or ": what went wrong". */
export function unavailableReason(error: unknown): TemplateResult {
  return error instanceof RequestFailed
    ? html` (<span class="mono">${error.summary}</span>)`
    : html`: ${(error as Error).message}`;
}

/** The RequestFailed of a failed SDK call's result (its error document and status), to show it or find its field. */
export function refusalOf(error: unknown, status: number): RequestFailed {
  const first = (error as { errors?: Array<{ code?: string; title?: string; detail?: string }> } | undefined)
    ?.errors?.[0];
  return new RequestFailed(
    status,
    first?.code ?? null,
    first?.detail ?? first?.title ?? `The request failed (HTTP ${status}).`,
  );
}

/** The `source.pointer` of the first error of a failed SDK call, or null. */
export function pointerOf(error: unknown): string | null {
  const first = (error as { errors?: Array<{ source?: { pointer?: string } }> } | undefined)?.errors?.[0];
  return first?.source?.pointer ?? null;
}

/** A time shown relative, with its exact UTC time as the tooltip. */
export function timeCell(iso: string | null): TemplateResult {
  return iso
    ? html`<time datetime=${iso} title=${absoluteUtc(iso)}>${relativeTime(iso)}</time>`
    : html`<span class="muted">not yet</span>`;
}

export function renderFailure(title: string, error: unknown): TemplateResult {
  const failed = error instanceof RequestFailed ? error : null;
  const missing = failed?.status === 404;
  return html`<div class="notice danger" role="alert" id="workspace-unavailable">
    <h1>${title}</h1>
    <p>
      ${
        missing
          ? "There is no such workspace, or you may not see it."
          : html`It could not be read${failed ? html` (<span class="mono">${failed.summary}</span>)` : html`: ${(error as Error).message}`}. Try again in a moment.`
      }
    </p>
    <p><a href="/runs">Back to runs</a></p>
  </div>`;
}

/** A control element of a workspace page (a block of inline form controls), before its own sheet. */
export const controlStyles = [
  base,
  formControls,
  css`
    :host {
      display: block;
    }
  `,
];

export const workspaceStyles = [
  base,
  dataTable,
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
    section {
      margin-top: var(--ss-space-6);
    }
    form.settings {
      display: grid;
      gap: var(--ss-space-3);
      max-width: 40rem;
    }
    form.settings label,
    form.settings .field {
      display: grid;
      gap: var(--ss-space-1);
    }
    form.settings label {
      font-weight: 600;
    }
    form.settings label.check {
      display: flex;
      align-items: center;
      gap: var(--ss-space-2);
      font-weight: 400;
    }
    form.settings input,
    form.settings textarea,
    form.settings select {
      font-weight: 400;
    }
    form.settings .field label {
      display: block;
    }
    form.settings .hint {
      font-weight: 400;
      color: var(--ss-text-muted);
      font-size: 0.9em;
    }
    .field-error {
      color: var(--ss-danger);
      font-weight: 400;
      margin: 0;
    }
    .actions {
      display: flex;
      gap: var(--ss-space-3);
      align-items: center;
      flex-wrap: wrap;
    }
    fieldset {
      border: 1px solid var(--ss-border);
      padding: var(--ss-space-3);
    }
  `,
];
