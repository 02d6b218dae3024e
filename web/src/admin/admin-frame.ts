// The frame of an organization's administration page (members, API tokens): the heading, what the
// page is for, the loading line, the notice for a non-administrator, and a read failure with a retry.
import type { Task } from "@lit/task";
import { html, nothing, type TemplateResult } from "lit";
import { RequestFailed } from "../app/api.ts";

export interface AdminPage<T> {
  /** The page's h1. */
  title: string;
  /** What the page is for, about the signed-in organization. */
  intro: (organization: string) => TemplateResult;
  /** What the page lists, lower case and plural ("members", "tokens"). */
  noun: string;
  /** What only an administrator does here ("manages its members"); the notice's id is `<noun>-not-allowed`. */
  administers: string;
  /** The page's read of its organization (null: no organization). */
  task: Task<readonly [string | null], T | null>;
  body: (loaded: T) => TemplateResult;
}

/** The page for `organization` (null: the signed-in user belongs to none). */
export function adminFrame<T>(organization: string | null, page: AdminPage<T>): TemplateResult {
  if (!organization)
    return html`<h1>${page.title}</h1><p class="notice info" role="status">You are not a member of any organization yet.</p>`;
  return html`<h1>${page.title}</h1>
    <p class="muted">${page.intro(organization)}</p>
    ${page.task.render({
      pending: () => html`<p role="status">Loading ${page.noun}…</p>`,
      error: (error) => unavailable(error, organization, page),
      complete: (loaded) => (loaded ? page.body(loaded) : nothing),
    })}`;
}

function unavailable<T>(error: unknown, organization: string, page: AdminPage<T>): TemplateResult {
  if (error instanceof RequestFailed && (error.status === 403 || error.status === 404)) {
    return html`<p class="notice info" role="status" id="${page.noun}-not-allowed">Only an administrator of ${organization} ${page.administers}.</p>`;
  }
  return html`<div class="notice danger" role="alert">
    <p>The ${page.noun} could not be read${error instanceof RequestFailed ? html` (${error.summary})` : nothing}. Try again in a moment.</p>
    <button @click=${() => void page.task.run()}>Try again</button>
  </div>`;
}
