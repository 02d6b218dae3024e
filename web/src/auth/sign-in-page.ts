// Sign in with email and password. On success it fires `ss-signed-in` (bubbling, composed) with
// the session document; the shell adopts the session and returns to `?next=` (or /runs).
import { consume } from "@lit/context";
import { createSession, type Client } from "@stackship/client";
import { LitElement, css, html, nothing } from "lit";
import { customElement, property, query, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import { stackedForm } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";
import type { SignedInDetail } from "../app/session.ts";

@customElement("ss-sign-in-page")
export class SsSignInPage extends LitElement {
  static override styles = [
    base,
    stackedForm,
    css`
      :host {
        display: block;
        max-width: 360px;
        margin: var(--ss-space-6) auto;
      }
    `,
  ];

  @consume({ context: apiContext }) accessor api!: Client;

  /** A message from the shell (session ended, signed out). */
  @property({ attribute: false }) accessor notice: string | null = null;

  @state() accessor error: string | null = null;
  @state() accessor busy = false;

  @query("#email") accessor emailInput!: HTMLInputElement;
  @query("#password") accessor passwordInput!: HTMLInputElement;

  override firstUpdated(): void {
    this.emailInput.focus();
  }

  private async submit(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    this.busy = true;
    this.error = null;
    try {
      const result = await createSession({
        client: this.api,
        body: {
          data: {
            type: "sessions",
            attributes: { email: this.emailInput.value.trim(), password: this.passwordInput.value },
          },
        },
      });
      if (result.data) {
        this.passwordInput.value = "";
        this.dispatchEvent(
          new CustomEvent<SignedInDetail>("ss-signed-in", { detail: result.data, bubbles: true, composed: true }),
        );
        return;
      }
      const status = result.response?.status ?? 0;
      if (status === 401 || status === 422) this.error = "The email or password is not right.";
      else if (status === 429) this.error = "Too many attempts. Wait a minute and try again.";
      else this.error = "Signing in is unavailable right now. Try again shortly.";
      this.passwordInput.select();
    } catch {
      this.error = "StackShip could not be reached. Check your connection and try again.";
    } finally {
      this.busy = false;
    }
  }

  override render() {
    return html`<h1>Sign in to StackShip</h1>
      ${this.notice ? html`<p class="notice info" role="status" id="sign-in-notice">${this.notice}</p>` : nothing}
      <form @submit=${(e: SubmitEvent) => void this.submit(e)} novalidate>
        <label>Email <input id="email" name="email" type="email" autocomplete="username" required /></label>
        <label>Password <input id="password" name="password" type="password" autocomplete="current-password" required /></label>
        ${this.error ? html`<p class="notice danger" role="alert" id="sign-in-error">${this.error}</p>` : nothing}
        <button class="primary" type="submit" ?disabled=${this.busy}>${this.busy ? "Signing in…" : "Sign in"}</button>
      </form>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-sign-in-page": SsSignInPage;
  }
}
