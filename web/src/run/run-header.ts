import { consume } from "@lit/context";
import { cancelRun, type Client } from "@stackship/client";
import { LitElement, html, nothing } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { apiContext, sessionContext } from "../app/context.ts";
import type { Session } from "../app/session.ts";
import { base } from "../ui/tokens.ts";
import type { RequestFailed } from "./api-result.ts";
import { icon } from "./icons.ts";
import { performRunAction } from "./run-action.ts";
import { runHeaderStyles } from "./run-header.styles.ts";
import {
  RUN_KINDS,
  RUN_STATUSES,
  RUN_STATUS_LABELS,
  RUN_STATUS_TONES,
  formatDuration,
  formatUtc,
  isTerminal,
  known,
  spanMs,
  type Action,
  type Header,
} from "./review-model.ts";

const KIND_LABELS = { plan_and_apply: "Plan and apply", speculative: "Speculative plan" } as const;

/**
 * The run page's header: the run's own message as the title, the Git commit message as a
 * secondary line when recorded, status, kind, commit SHA, source ref, working directory, commit
 * author, creation time, live duration, copyable run id and the workspace link; the cancel
 * button when `available_actions` offers cancel (one inline confirmation, then POST).
 *
 * @summary Commit identity and the run's status.
 * @event ss-run-action-done - The cancel request was accepted.
 */
@customElement("ss-run-header")
export class SsRunHeader extends LitElement {
  static override styles = [base, runHeaderStyles];

  @consume({ context: apiContext, subscribe: true })
  @state()
  accessor client!: Client;

  /** The signed-in session: the breadcrumb starts at the run's organization. */
  @consume({ context: sessionContext, subscribe: true })
  @state()
  accessor session: Session | null = null;

  /** The review's header facts. */
  @property({ attribute: false }) accessor header: Header | undefined;

  /** The actions this caller may take now; only `cancel` matters here. */
  @property({ attribute: false }) accessor actions: readonly Action[] = [];

  /** The clock the live duration ticks with (ms since the epoch). */
  @property({ type: Number }) accessor now = Date.now();

  /** The live feed failed repeatedly: a quiet note beside the status badge. */
  @property({ type: Boolean }) accessor stale = false;

  @state() accessor confirmingCancel = false;
  @state() accessor busy = false;
  @state() accessor failure: RequestFailed | null = null;
  @state() accessor copied = false;

  override render() {
    const h = this.header;
    if (!h) return nothing;
    const status = known(RUN_STATUSES, h.status);
    const kind = known(RUN_KINDS, h.kind);
    const duration = spanMs(h.created_at, h.finished_at, this.now);
    const terminal = isTerminal(h.status);
    // The title is the message's first line; the rest of it reads below, as a commit's body does.
    const [titleLine, ...rest] = h.title.split("\n");
    const body = rest.join("\n").trim();
    const unrecorded = (
      [
        ["commit", h.commit_sha],
        ["source ref", h.source_ref],
        ["working directory", h.working_directory],
        ["author", h.commit_author],
      ] as const
    )
      .filter(([, fact]) => fact.state !== "recorded")
      .map(([name]) => name);
    return html`<header>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <a href="/runs">${this.session?.organization ?? "Runs"}</a><span aria-hidden="true"> › </span><a href="/workspaces/${h.workspace.id}" data-testid="breadcrumb-workspace">${h.workspace.name}</a
        ><span aria-hidden="true"> › </span><span aria-current="page">${h.run_id}</span>
      </nav>
      <div class="top">
        <div>
          <h1 id="run-title">${titleLine.trim() || "(no message)"}</h1>
          ${body ? html`<p class="message-body" data-testid="message-body">${body}</p>` : nothing}
          ${h.commit_message.state === "recorded" ? html`<p class="commit-message" data-testid="commit-message">${h.commit_message.value}</p>` : nothing}
        </div>
        <div class="actions">${this.renderCancel()}</div>
      </div>
      <div class="chips">
        ${
          status === null
            ? html`<span class="status tone-error" data-testid="run-status">${icon("error")}Unknown run status “${h.status}”</span>`
            : html`<span class="status tone-${RUN_STATUS_TONES[status]}" data-testid="run-status"
              >${icon(RUN_STATUS_TONES[status])}${RUN_STATUS_LABELS[status]}</span
            >`
        }
        ${this.stale ? html`<span class="stale-note" role="status" data-testid="live-stale">Reconnecting — data may be stale</span>` : nothing}
        ${kind === null ? html`<span class="kind error">Unknown kind “${h.kind}”</span>` : html`<span class="kind">${KIND_LABELS[kind]}</span>`}
      </div>
      <dl>
        ${this.recorded("Commit", h.commit_sha, (sha) => {
          const code = html`<code title=${sha}>${sha.slice(0, 12)}</code>`;
          // Only an http(s) page the server derived from the recorded repository becomes a link.
          const url =
            h.commit_url.state === "recorded" && /^https?:\/\//.test(h.commit_url.value ?? "")
              ? h.commit_url.value
              : null;
          return url
            ? html`<a href=${url} rel="noopener noreferrer" target="_blank" data-testid="commit-link">${code}</a>`
            : code;
        })}
        ${this.recorded("Source ref", h.source_ref, (ref) => html`<code>${ref}</code>`)}
        ${this.recorded("Working directory", h.working_directory, (dir) => html`<code>${dir === "" ? "/" : dir}</code>`)}
        ${this.recorded("Author", h.commit_author, (author) => author)}
        <div><dt>Created</dt><dd><time datetime=${h.created_at}>${formatUtc(h.created_at)}</time></dd></div>
        <div>
          <dt>Duration</dt>
          <dd data-testid="run-duration">${duration === null ? "not recorded" : formatDuration(duration)}${terminal ? nothing : html` <span class="muted">(${h.status === "needs_recovery" ? "waiting for recovery" : h.status === "awaiting_approval" || h.status === "policy_soft_failed" ? "waiting for a decision" : "running"})</span>`}</dd>
        </div>
        <div>
          <dt>Run ID</dt>
          <dd>
            <code data-testid="run-id">${h.run_id}</code
            ><button class="copy" type="button" @click=${this.copyId} aria-label="Copy run ID">${this.copied ? "Copied" : "Copy"}</button>
          </dd>
        </div>
        <div><dt>Workspace</dt><dd><a href="/workspaces/${h.workspace.id}" data-testid="workspace-link">${h.workspace.name}</a></dd></div>
      </dl>
      ${unrecorded.length > 0 ? html`<p class="muted unrecorded" data-testid="not-recorded">Not recorded for this run: ${unrecorded.join(", ")}.</p>` : nothing}
    </header>`;
  }

  /** A recorded fact as a term and its value; an unrecorded one is left to the single quiet line below the list. */
  private recorded(term: string, fact: Header["commit_sha"], show: (value: string) => unknown) {
    return fact.state === "recorded" ? html`<div><dt>${term}</dt><dd>${show(fact.value)}</dd></div>` : nothing;
  }

  private renderCancel() {
    if (!this.actions.includes("cancel")) return nothing;
    const error = this.failure
      ? html`<span class="error" role="alert">${this.failure.detail} <code>${this.failure.summary}</code></span>`
      : nothing;
    if (!this.confirmingCancel) {
      return html`<button type="button" class="secondary" @click=${() => (this.confirmingCancel = true)}>Cancel run</button>${error}`;
    }
    return html`<div class="confirm" role="group" aria-label="Confirm cancel">
      <span>Cancel this run? A running phase is interrupted.</span>
      <button type="button" class="danger" ?disabled=${this.busy} @click=${this.cancel} autofocus>Yes, cancel run</button>
      <button type="button" ?disabled=${this.busy} @click=${() => (this.confirmingCancel = false)}>Keep it running</button>
      ${error}
    </div>`;
  }

  private async cancel() {
    if (!this.client || !this.header) return;
    const client = this.client;
    const runId = this.header.run_id;
    await performRunAction(
      this,
      { action: "cancel", runId },
      () => cancelRun({ client, path: { run_id: runId } }),
      () => (this.confirmingCancel = false),
    );
  }

  private async copyId() {
    if (!this.header) return;
    try {
      await navigator.clipboard.writeText(this.header.run_id);
      this.copied = true;
      setTimeout(() => (this.copied = false), 2000);
    } catch {
      // Clipboard access can be refused (insecure origin, permissions): select the id instead.
      const code = this.renderRoot.querySelector('[data-testid="run-id"]');
      if (code) getSelection()?.selectAllChildren(code);
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-run-header": SsRunHeader;
  }
}
