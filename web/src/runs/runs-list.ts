// The runs page's list model, apart from the element: page reads through the SDK (checked against
// the contract), the API's newest-first order and the merge of a re-read first page, the status
// filter's closed set, and one row's plan counts.
import { listOrganizationRuns, type Client, type Run, type RunListDocument } from "@stackship/client";
import { html, type TemplateResult } from "lit";
import { dataOf } from "../app/api.ts";
import { checkRun, ContractError, isRunStatus } from "../app/closed-sets.ts";

/** Runs per page read. */
export const PAGE_SIZE = 20;

/**
 * While a filter is active, older pages are read on their own until PAGE_SIZE runs match or the
 * list ends, through the same forward pagination; at most this many runs per search, after which
 * "Search older runs" continues by as many again.
 */
export const SEARCH_BUDGET = 500;

export type RunStatus = Run["attributes"]["status"];
/** A status filter: one status, or the statuses that wait on a person (`?status=needs_attention`). */
export type StatusFilter = RunStatus | "needs_attention" | "";

export const SOURCE_LABELS: Record<Run["attributes"]["source"], string> = {
  api: "API",
  cli: "CLI",
  github_push: "GitHub push",
  github_pull_request: "GitHub pull request",
};

export function isStatusFilter(value: string): value is Exclude<StatusFilter, ""> {
  return value === "needs_attention" || isRunStatus(value);
}

/** Newest first by (created_at, id), the API's own order. */
export function byCreatedDesc(a: Run, b: Run): number {
  if (a.attributes.created_at !== b.attributes.created_at)
    return a.attributes.created_at < b.attributes.created_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The first page re-read merged into the loaded rows: known runs replaced, new ones added, order kept. */
export function mergeFirstPage(loaded: readonly Run[], fresh: readonly Run[]): Run[] {
  const byId = new Map(loaded.map((run) => [run.id, run]));
  for (const run of fresh) byId.set(run.id, run);
  return [...byId.values()].sort(byCreatedDesc);
}

function checkPage(page: RunListDocument): RunListDocument {
  if (!Array.isArray(page?.data) || page.meta?.page === undefined)
    throw new ContractError("The run list response has no data or no page metadata.");
  const cursor = page.meta.page.next_cursor;
  if (cursor !== null && (typeof cursor !== "string" || cursor.length === 0))
    throw new ContractError("The run list response has an invalid next_cursor.");
  page.data.forEach(checkRun);
  return page;
}

/** One page of the organization's runs (the first without a cursor), checked against the contract. */
export async function readRunsPage(
  api: Client,
  organization: string,
  signal: AbortSignal,
  cursor?: string,
): Promise<RunListDocument> {
  const query = cursor ? { limit: PAGE_SIZE, cursor } : { limit: PAGE_SIZE };
  return checkPage(
    await dataOf(listOrganizationRuns({ client: api, path: { organization_name: organization }, query, signal })),
  );
}

/** `+n ~n −n` of a finished plan (words for screen readers), "no changes", or a dash before the plan finished. */
export function renderCounts(run: Run): TemplateResult {
  const counts = run.attributes.plan_counts;
  if (!counts) return html`<span class="muted" aria-label="no plan yet">–</span>`;
  if (counts.create + counts.change + counts.destroy === 0) return html`<span class="muted">no changes</span>`;
  const words = `${counts.create} to add, ${counts.change} to change, ${counts.destroy} to destroy`;
  return html`<span class="counts" title=${words}
    ><span class="visually-hidden">${words}</span
    ><span aria-hidden="true"
      ><span class="create">+${counts.create}</span> <span class="change">~${counts.change}</span> <span class="destroy">−${counts.destroy}</span></span
    ></span
  >`;
}
