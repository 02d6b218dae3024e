// The first run: the one-time setup link `npm start` prints while no deployment administrator
// exists (`/setup?token=sst.…`). The page checks the link, asks for the administrator's email,
// name and password and, optionally, the first organization, signs in (firing `ss-signed-in`, so
// the shell adopts the session) and then says what to do next: a CLI token, shown once, and the
// exact `cloud` block for this server and organization.
import { consume } from "@lit/context";
import { Task } from "@lit/task";
import {
  checkSetupToken,
  completeSetup,
  createOrganization,
  createOrganizationToken,
  type Client,
} from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, query, state } from "lit/decorators.js";
import { apiContext } from "../app/context.ts";
import type { SignedInDetail } from "../app/session.ts";
import { stackedForm } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";
import { setupPageStyles } from "./setup-page.styles.ts";
import { ORGANIZATION_NAME_PATTERN } from "../ui/patterns.ts";

/** The password length the server requires (spec: SetupDocument.password minLength). */
export const MIN_PASSWORD_LENGTH = 12;

/** The HTTPS port `npm start` uses for the tofu CLI unless STACKSHIP_HTTPS_PORT says otherwise. */
const DEFAULT_CLI_PORT = 8443;

type LinkState = { usable: true; expiresAt: string } | { usable: false; reason: "missing" | "refused" | "unreachable" };

interface ErrorDocument {
  errors?: Array<{ code?: string; detail?: string; title?: string }>;
}

const firstError = (error: unknown) => (error as ErrorDocument | undefined)?.errors?.[0];

@customElement("ss-setup-page")
export class SsSetupPage extends LitElement {
  static override styles = [base, stackedForm, setupPageStyles];

  @consume({ context: apiContext }) accessor api!: Client;

  /** Set once the administrator exists: the page shows the next steps instead of the form. */
  @state() accessor done: { organization: string | null } | null = null;
  @state() accessor refused = false;
  @state() accessor error: string | null = null;
  @state() accessor busy = false;
  @state() accessor cliToken: string | null = null;

  @query("#email") accessor emailInput!: HTMLInputElement;
  @query("#password") accessor passwordInput!: HTMLInputElement;

  private readonly token = new URLSearchParams(location.search).get("token") ?? "";

  private readonly link = new Task<[string], LinkState>(this, {
    args: () => [this.token],
    task: async ([token]) => {
      if (!token) return { usable: false, reason: "missing" };
      try {
        const result = await checkSetupToken({
          client: this.api,
          body: { data: { type: "setup-token-checks", attributes: { token } } },
        });
        if (result.data) return { usable: true, expiresAt: result.data.data.attributes.expires_at };
        return {
          usable: false,
          reason: result.response?.status === 422 || result.response?.status === 400 ? "refused" : "unreachable",
        };
      } catch {
        return { usable: false, reason: "unreachable" };
      }
    },
  });

  override updated(): void {
    // Focus starts in the first field once the form is there.
    if (this.emailInput && !this.focusedOnce) {
      this.focusedOnce = true;
      this.emailInput.focus();
    }
  }
  private focusedOnce = false;

  private async submit(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    const password = this.passwordInput.value;
    const organization = value("organization");
    if (!value("email") || !value("display_name")) {
      this.error = "Enter an email and a display name.";
      return;
    }
    if (password.length < MIN_PASSWORD_LENGTH) {
      this.error = `The password needs at least ${MIN_PASSWORD_LENGTH} characters.`;
      this.passwordInput.focus();
      return;
    }
    this.busy = true;
    this.error = null;
    try {
      const result = await completeSetup({
        client: this.api,
        body: {
          data: {
            type: "setups",
            attributes: {
              token: this.token,
              email: value("email"),
              display_name: value("display_name"),
              password,
              ...(organization ? { organization_name: organization } : {}),
            },
          },
        },
      });
      if (result.data) {
        this.passwordInput.value = "";
        this.done = { organization: organization || null };
        this.dispatchEvent(
          new CustomEvent<SignedInDetail>("ss-signed-in", { detail: result.data, bubbles: true, composed: true }),
        );
        return;
      }
      const problem = firstError(result.error);
      if (problem?.code === "SETUP_TOKEN_INVALID") this.refused = true;
      else
        this.error =
          problem?.detail ?? problem?.title ?? `Setup failed (HTTP ${result.response?.status ?? 0}). Try again.`;
    } catch {
      this.error = "StackShip could not be reached. Check that it is still running and try again.";
    } finally {
      this.busy = false;
    }
  }

  private async createFirstOrganization(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const name = (
      (event.target as HTMLFormElement).elements.namedItem("organization") as HTMLInputElement
    ).value.trim();
    this.busy = true;
    this.error = null;
    try {
      const result = await createOrganization({
        client: this.api,
        body: { data: { type: "organizations", attributes: { name } } },
      });
      if (result.data) {
        this.done = { organization: result.data.data.attributes.name };
        // The shell re-reads the session's organizations (the switcher and the runs page show it).
        this.dispatchEvent(new CustomEvent("ss-organizations-changed", { bubbles: true, composed: true }));
      } else {
        const problem = firstError(result.error);
        this.error =
          problem?.detail ??
          problem?.title ??
          `The organization could not be created (HTTP ${result.response?.status ?? 0}).`;
      }
    } finally {
      this.busy = false;
    }
  }

  private async createCliToken(organization: string): Promise<void> {
    this.busy = true;
    this.error = null;
    try {
      const result = await createOrganizationToken({
        client: this.api,
        path: { organization_name: organization },
        body: {
          data: { type: "tokens", attributes: { role: "operator", description: "tofu CLI (created at setup)" } },
        },
      });
      if (result.data) this.cliToken = result.data.data.attributes.secret;
      else {
        const problem = firstError(result.error);
        this.error =
          problem?.detail ?? problem?.title ?? `The token could not be created (HTTP ${result.response?.status ?? 0}).`;
      }
    } finally {
      this.busy = false;
    }
  }

  override render(): TemplateResult | typeof nothing {
    if (this.done) return this.renderNextSteps(this.done.organization);
    if (this.refused) return this.renderRefused();
    return (
      this.link.render({
        pending: () => html`<p role="status">Checking the setup link…</p>`,
        complete: (state) =>
          state.usable
            ? this.renderForm(state.expiresAt)
            : state.reason === "unreachable"
              ? this.renderUnreachable()
              : this.renderRefused(),
        error: () => this.renderUnreachable(),
      }) ?? nothing
    );
  }

  private renderRefused(): TemplateResult {
    return html`<h1>This setup link cannot be used</h1>
      <p class="notice danger" role="alert" id="setup-refused">The link is unknown, has expired (a link works for one hour), or was already used.</p>
      <p>
        While StackShip has no administrator, each <code>npm start</code> prints a new link: restart StackShip and open the link it prints. If an administrator already
        exists, <a href="/sign-in">sign in</a> instead.
      </p>`;
  }

  private renderUnreachable(): TemplateResult {
    return html`<h1>Set up StackShip</h1>
      <p class="notice danger" role="alert">StackShip could not be reached to check the link. Check that it is still running, then reload this page.</p>`;
  }

  private renderForm(expiresAt: string): TemplateResult {
    return html`<h1>Set up StackShip</h1>
      <p>Create the deployment administrator: this person can create organizations and sees all of them. This link works once, until ${new Date(expiresAt).toUTCString()}.</p>
      <form @submit=${(e: SubmitEvent) => void this.submit(e)} novalidate>
        <label>Email <input id="email" name="email" type="email" autocomplete="username" required /></label>
        <label>Display name <input id="display_name" name="display_name" autocomplete="name" required /></label>
        <label
          >Password
          <input id="password" name="password" type="password" autocomplete="new-password" minlength=${MIN_PASSWORD_LENGTH} required aria-describedby="password-hint" />
        </label>
        <span class="muted hint" id="password-hint">At least ${MIN_PASSWORD_LENGTH} characters.</span>
        <label
          >First organization (optional)
          <input id="organization" name="organization" autocomplete="off" pattern=${ORGANIZATION_NAME_PATTERN} aria-describedby="organization-hint" />
        </label>
        <span class="muted hint" id="organization-hint">Letters, digits, - and _, up to 40 characters, e.g. acme.</span>
        ${this.error ? html`<p class="notice danger" role="alert" id="setup-error">${this.error}</p>` : nothing}
        <button class="primary" type="submit" ?disabled=${this.busy}>${this.busy ? "Creating…" : "Create administrator"}</button>
      </form>`;
  }

  private renderNextSteps(organization: string | null): TemplateResult {
    if (!organization) {
      return html`<h1>StackShip is ready</h1>
        <p role="status" id="setup-done">You are signed in as the deployment administrator.</p>
        <h2>Next: create your first organization</h2>
        <form @submit=${(e: SubmitEvent) => void this.createFirstOrganization(e)}>
          <label>Organization name <input id="organization" name="organization" autocomplete="off" required pattern=${ORGANIZATION_NAME_PATTERN} /></label>
          ${this.error ? html`<p class="notice danger" role="alert" id="setup-error">${this.error}</p>` : nothing}
          <button class="primary" type="submit" ?disabled=${this.busy}>Create organization</button>
        </form>`;
    }
    const secure = location.protocol === "https:";
    const hostname = secure ? location.host : `localhost:${DEFAULT_CLI_PORT}`;
    const credentials = `credentials "${hostname}" {\n  token = "${this.cliToken ?? "<the token below>"}"\n}`;
    const cloud = `terraform {\n  cloud {\n    hostname     = "${hostname}"\n    organization = "${organization}"\n    workspaces {\n      name = "app"\n    }\n  }\n}`;
    return html`<h1>StackShip is ready</h1>
      <p role="status" id="setup-done">You are signed in as the deployment administrator of organization <strong>${organization}</strong>.</p>
      <h2>Next: connect the tofu CLI</h2>
      <ol class="steps">
        <li>
          Create a token for the CLI (role operator: it can create workspaces and runs, and approve nothing by itself).
          ${
            this.cliToken
              ? html`<p class="notice attention" role="status" id="cli-token-note">Copy it now: StackShip stores only its hash and will never show it again.</p>
                <div class="secret"><code id="cli-token">${this.cliToken}</code><button type="button" @click=${() => void navigator.clipboard?.writeText(this.cliToken ?? "")}>Copy token</button></div>`
              : html`<div><button type="button" id="create-cli-token" ?disabled=${this.busy} @click=${() => void this.createCliToken(organization)}>Create CLI token</button></div>`
          }
          ${this.error ? html`<p class="notice danger" role="alert" id="setup-error">${this.error}</p>` : nothing}
        </li>
        <li>
          Put the token in the file <code>TF_CLI_CONFIG_FILE</code> names (or <code>~/.terraformrc</code>):
          <pre class="snippet" id="credentials-snippet">${credentials}</pre>
        </li>
        <li>
          Add this to your configuration, then run <code>tofu init</code> and <code>tofu plan</code>: the workspace is created on first use, and the run waits for your approval
          here.
          <pre class="snippet" id="cloud-snippet">${cloud}</pre>
          ${
            secure
              ? nothing
              : html`<p class="muted hint">
                  The CLI talks to StackShip over HTTPS: <code>localhost:${DEFAULT_CLI_PORT}</code> unless <code>STACKSHIP_HTTPS_PORT</code> says otherwise; trust the local CA as
                  <code>npm start</code> printed (<code>export SSL_CERT_FILE=…</code>).
                </p>`
          }
        </li>
      </ol>
      <p><a href="/runs" id="go-to-runs">Go to the runs page</a></p>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-setup-page": SsSetupPage;
  }
}
