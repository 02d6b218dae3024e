// The step-up dialog: re-enter the password before a guarded download (raw plan, emergency
// state). Usage from any element under <ss-app> (it consumes the API client):
//
//   <ss-step-up-dialog id="step-up"></ss-step-up-dialog>
//   const ok = await this.stepUpDialog.request();   // true once POST /v1/auth/step-up succeeded
//
// `request()` opens a modal <dialog> with the focus in the password field and resolves true after
// a successful step-up, false when the person cancels (Escape or Cancel). A wrong password keeps
// the dialog open with an error. It fires `ss-stepped-up` (bubbling, composed) with the new
// `step_up_fresh_until` on success.
import { consume } from "@lit/context";
import { stepUp, type Client } from "@stackship/client";
import { LitElement, css, html, nothing } from "lit";
import { customElement, property, query, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import { stackedForm } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export interface SteppedUpDetail {
  freshUntil: string | null;
}

@customElement("ss-step-up-dialog")
export class SsStepUpDialog extends LitElement {
  static override styles = [
    base,
    stackedForm,
    css`
      dialog {
        border: 1px solid var(--ss-border);
        border-radius: var(--ss-radius);
        background: var(--ss-bg);
        color: var(--ss-text);
        max-width: 420px;
      }
      dialog::backdrop {
        background: rgb(0 0 0 / 40%);
      }
      .actions {
        display: flex;
        gap: var(--ss-space-2);
        justify-content: flex-end;
      }
    `,
  ];

  @consume({ context: apiContext }) accessor api!: Client;

  /** Why the step-up is asked for, shown under the title (e.g. "Download the raw plan"). */
  @property() accessor purpose = "";

  @state() accessor error: string | null = null;
  @state() accessor busy = false;

  @query("dialog") accessor dialog!: HTMLDialogElement;
  @query("#step-up-password") accessor password!: HTMLInputElement;

  private resolve: ((ok: boolean) => void) | null = null;

  /** Opens the dialog; resolves true once the step-up succeeded, false when canceled. */
  async request(purpose?: string): Promise<boolean> {
    if (purpose !== undefined) this.purpose = purpose;
    this.error = null;
    await this.updateComplete;
    this.password.value = "";
    this.dialog.showModal();
    this.password.focus();
    return new Promise<boolean>((resolve) => {
      this.resolve = resolve;
    });
  }

  private finish(ok: boolean): void {
    if (this.dialog.open) this.dialog.close();
    const resolve = this.resolve;
    this.resolve = null;
    resolve?.(ok);
  }

  private async submit(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    if (!this.password.value) {
      this.error = "Enter your password.";
      return;
    }
    this.busy = true;
    this.error = null;
    try {
      const result = await stepUp({
        client: this.api,
        body: { data: { type: "step-ups", attributes: { password: this.password.value } } },
      });
      if (result.data) {
        this.password.value = "";
        this.dispatchEvent(
          new CustomEvent<SteppedUpDetail>("ss-stepped-up", {
            detail: { freshUntil: result.data.data.attributes.step_up_fresh_until },
            bubbles: true,
            composed: true,
          }),
        );
        this.finish(true);
        return;
      }
      const code = (result.error as { errors?: Array<{ code?: string }> } | undefined)?.errors?.[0]?.code;
      this.error =
        code === "STEP_UP_PASSWORD_INVALID" || code === "DOCUMENT_INVALID"
          ? "That password is not right."
          : "Confirming your password is unavailable right now.";
      this.password.select();
    } finally {
      this.busy = false;
    }
  }

  override render() {
    return html`<dialog aria-labelledby="step-up-title" @cancel=${() => this.finish(false)} @close=${() => this.finish(false)}>
      <form @submit=${(e: SubmitEvent) => void this.submit(e)} novalidate>
        <h2 id="step-up-title">Confirm your password</h2>
        ${this.purpose ? html`<p class="muted">${this.purpose}</p>` : nothing}
        <p>Sensitive downloads need your password again (valid for 15 minutes).</p>
        <label>Password <input id="step-up-password" type="password" autocomplete="current-password" /></label>
        ${this.error ? html`<p class="notice danger" role="alert">${this.error}</p>` : nothing}
        <div class="actions">
          <button type="button" @click=${() => this.finish(false)}>Cancel</button>
          <button class="primary" type="submit" ?disabled=${this.busy}>Confirm</button>
        </div>
      </form>
    </dialog>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-step-up-dialog": SsStepUpDialog;
  }
  interface HTMLElementEventMap {
    "ss-stepped-up": CustomEvent<SteppedUpDetail>;
  }
}
