// The workspace lock's controls on the workspace page: lock with a reason (workspace:write), unlock
// one's own lock, and, for organization administrators, force-unlock someone else's (a run's too:
// that run can then no longer publish state, which the confirmation says). Each change is sent
// through client/ and then announced with `ss-workspace-lock-changed` so the page re-reads the lock.
import { consume } from "@lit/context";
import {
  forceUnlockWorkspace,
  lockWorkspace,
  unlockWorkspace,
  type Client,
  type WorkspaceStateSummaryDocument,
} from "@stackship/client";
import { LitElement, css, html, nothing, type TemplateResult } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { dataOf } from "../app/api.ts";
import { apiContext } from "../app/context.ts";
import { perform } from "./workspace-action.ts";
import { controlStyles, failureText } from "./workspace-common.ts";
import { takeSubmit } from "../ui/form-data.ts";

type Lock = WorkspaceStateSummaryDocument["data"]["attributes"]["lock"];

/** The API's bound on a lock reason. */
export const LOCK_REASON_MAX = 500;

@customElement("ss-workspace-lock")
export class SsWorkspaceLock extends LitElement {
  static override styles = [
    controlStyles,
    css`
      form {
        display: flex;
        flex-wrap: wrap;
        gap: var(--ss-space-2);
        align-items: end;
      }
      label {
        display: grid;
        grid-template-columns: minmax(0, 1fr);
        gap: var(--ss-space-1);
        flex: 1 1 260px;
        max-width: 480px;
      }
      .confirm {
        display: flex;
        flex-wrap: wrap;
        gap: var(--ss-space-2);
        align-items: center;
      }
    `,
  ];

  @consume({ context: apiContext }) accessor api!: Client;
  @property({ attribute: "workspace-id" }) accessor workspaceId = "";
  /** The lock as the state summary read it (null: free). */
  @property({ attribute: false }) accessor lock: Lock = null;
  /** The signed-in person's user id (their own lock is theirs to release). */
  @property({ attribute: "user-id" }) accessor userId = "";
  /** workspace:write on this workspace. */
  @property({ type: Boolean, attribute: "can-write" }) accessor canWrite = false;
  /** An organization administrator (force-unlock). */
  @property({ type: Boolean, attribute: "can-force" }) accessor canForce = false;

  @state() accessor busy = false;
  @state() accessor error: unknown = null;
  @state() accessor reasonMissing = false;
  @state() accessor confirmingForce = false;

  override render(): TemplateResult | typeof nothing {
    const lock = this.lock;
    const error = this.error
      ? html`<p class="error" role="alert" id="lock-error">${failureText(this.error)}</p>`
      : nothing;
    if (!lock) {
      if (!this.canWrite) return nothing;
      return html`<form @submit=${(e: SubmitEvent) => void this.take(e)} novalidate id="lock-form">
          <label
            >Lock reason
            <input name="reason" id="lock-reason" maxlength=${LOCK_REASON_MAX} autocomplete="off" required aria-invalid=${this.reasonMissing ? "true" : "false"} placeholder="e.g. rotating credentials"
          /></label>
          <button type="submit" ?disabled=${this.busy}>Lock workspace</button>
        </form>
        ${this.reasonMissing ? html`<p class="error" role="alert">Say why the workspace is locked (it is kept with the lock and in the audit history).</p>` : nothing}
        <p class="muted">While locked, no run applies and no state is published.</p>
        ${error}`;
    }
    const mine = lock.holder_kind === "user" && lock.holder_id === this.userId;
    if (mine && this.canWrite) {
      return html`<button type="button" id="unlock" ?disabled=${this.busy} @click=${() => void this.release()}>Unlock workspace</button>${error}`;
    }
    if (!this.canForce) return html`${error}`;
    if (!this.confirmingForce) {
      return html`<button type="button" class="secondary" id="force-unlock" @click=${() => (this.confirmingForce = true)}>Force unlock</button>${error}`;
    }
    return html`<div class="confirm" role="group" aria-label="Confirm force unlock">
        <span
          >Release the lock ${lock.holder_kind === "run" ? "of run " : "held by "}<span class="mono">${lock.holder_id}</span>?${
            lock.holder_kind === "run" ? " That run can then no longer publish state." : ""
          }</span
        >
        <button type="button" class="danger" id="confirm-force-unlock" ?disabled=${this.busy} @click=${() => void this.force()}>Yes, force unlock</button>
        <button type="button" @click=${() => (this.confirmingForce = false)}>Keep the lock</button>
      </div>
      ${error}`;
  }

  private async take(event: SubmitEvent): Promise<void> {
    const reason = takeSubmit(event).trimmed("reason");
    this.reasonMissing = reason.length === 0;
    if (this.reasonMissing) return;
    await this.send(() =>
      dataOf(
        lockWorkspace({
          client: this.api,
          path: { workspace_id: this.workspaceId },
          body: { data: { type: "workspace-locks", attributes: { reason } } },
        }),
      ),
    );
  }

  private release(): Promise<void> {
    return this.send(() => dataOf(unlockWorkspace({ client: this.api, path: { workspace_id: this.workspaceId } })));
  }

  private force(): Promise<void> {
    return this.send(() =>
      dataOf(forceUnlockWorkspace({ client: this.api, path: { workspace_id: this.workspaceId } })),
    );
  }

  private async send(call: () => Promise<unknown>): Promise<void> {
    await perform(this, call, () => {
      this.confirmingForce = false;
      this.dispatchEvent(new CustomEvent("ss-workspace-lock-changed", { bubbles: true, composed: true }));
    });
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-lock": SsWorkspaceLock;
  }
}
